// A relay for /api/v1/admin/relays (Tern's own: Mastodon has admin pages only). `state` is Mastodon's: idle, pending,
// accepted, rejected.
import { isoTime } from "../urls";
import type { RelayRow } from "../../db/schema/index";

/** Tern's own entity (no Mastodon counterpart to check it against). */
export interface TernAdminRelay {
  id: string;
  inbox_url: string;
  state: RelayRow["state"];
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export const renderAdminRelay = (r: RelayRow): TernAdminRelay => ({
  id: r.id,
  inbox_url: r.inboxUrl,
  state: r.state,
  enabled: r.state === "accepted",
  created_at: isoTime(r.createdAt),
  updated_at: isoTime(r.updatedAt),
});
