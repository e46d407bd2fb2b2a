// Pinned statuses: own statuses of any visibility, not reblogs, at most MAX_PINNED_STATUSES; federated as Add/Remove
// on the featured collection.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { Effects } from "../../effects/collector";
import type { Config } from "../../env";
import { validationFailed } from "../../lib/errors";
import { padId, snowflake } from "../../lib/ids";
import { loadVisible, render, type Json } from "./interaction-target";

export const MAX_PINNED_STATUSES = 5;

export async function pin(db: DB, fx: Effects, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const { b } = await loadVisible(db, cfg, id, viewerId);
  const s = b.statuses.get(id)!;
  if (s.reblogOfId) throw validationFailed("Boosts cannot be pinned");
  if (s.accountId !== viewerId) throw validationFailed("You can only pin your own posts");
  if (!b.viewer.pinned.has(id)) {
    const now = Date.now();
    const pv = padId(viewerId);
    const r = await db.run(sql`INSERT OR IGNORE INTO status_pins (id, account_id, status_id, created_at)
      SELECT ${padId(snowflake(now))}, ${pv}, ${padId(id)}, ${now}
      WHERE (SELECT count(*) FROM status_pins WHERE account_id = ${pv}) < ${MAX_PINNED_STATUSES}`);
    if (!(r as D1Result).meta?.changes) throw validationFailed("You have already pinned the maximum number of posts");
    b.viewer.pinned.add(id);
    fx.federate({ kind: "pin", accountId: viewerId, statusId: id, remove: false });
  }
  return render(cfg, b, id);
}

export async function unpin(db: DB, fx: Effects, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const { b } = await loadVisible(db, cfg, id, viewerId);
  if (b.viewer.pinned.has(id)) {
    await db.run(sql`DELETE FROM status_pins WHERE account_id = ${padId(viewerId)} AND status_id = ${padId(id)}`);
    b.viewer.pinned.delete(id);
    fx.federate({ kind: "pin", accountId: viewerId, statusId: id, remove: true });
  }
  return render(cfg, b, id);
}
