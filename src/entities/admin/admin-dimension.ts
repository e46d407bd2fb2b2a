// Admin::Dimension entity (docs.joinmastodon.org/entities/Admin_Dimension): one dashboard breakdown (languages,
// servers, sources, space usage, software versions, ...), each item with a key, a name for people and a value, every
// number a string as Mastodon renders it. The rows come from src/services/admin/measures.ts.
import { humanSize } from "./admin-measure";

export interface MastodonAdminDimensionItem {
  key: string;
  human_key: string;
  value: string;
  unit?: string;
  human_value?: string;
}

export interface MastodonAdminDimension {
  key: string;
  data: MastodonAdminDimensionItem[];
}

/** One item: a count (or a version string); `bytes` adds the unit and the size for people; `humanValue` a name for it. */
export interface DimensionItem {
  key: string;
  humanKey: string;
  value: number | string;
  bytes?: boolean;
  humanValue?: string;
}

export function renderAdminDimension(key: string, items: DimensionItem[]): MastodonAdminDimension {
  return {
    key,
    data: items.map((i) => {
      const out: MastodonAdminDimensionItem = { key: i.key, human_key: i.humanKey, value: String(i.value) };
      if (i.bytes) {
        out.unit = "bytes";
        out.human_value = humanSize(Number(i.value));
      } else if (i.humanValue !== undefined) out.human_value = i.humanValue;
      return out;
    }),
  };
}
