// Context entity (docs.joinmastodon.org/entities/Context): a status's ancestors and descendants, as GET
// /api/v1/statuses/:id/context answers them, rendered from one status bundle (the ids from
// src/queries/statuses/status-context.ts). Filters apply in the thread context: a `hide` match drops a descendant; ancestors
// stay, so the thread holds together.
import type { DB } from "../../db/client";
import type { Config } from "../../env";
import { loadStatusBundle, renderStatusFrom, type MastodonStatus } from "./status";

export interface MastodonContext {
  ancestors: MastodonStatus[];
  descendants: MastodonStatus[];
}

export async function renderContext(
  db: DB,
  cfg: Config,
  ids: { ancestors: string[]; descendants: string[] },
  viewerId: string | null,
): Promise<MastodonContext> {
  const b = await loadStatusBundle(db, [...ids.ancestors, ...ids.descendants], viewerId);
  const ancestors = ids.ancestors.map((x) => renderStatusFrom(cfg, b, x, { filterContext: "thread", keepHidden: true })).filter((r) => r !== null);
  const descendants = ids.descendants.map((x) => renderStatusFrom(cfg, b, x, { filterContext: "thread" })).filter((r) => r !== null);
  return { ancestors, descendants };
}
