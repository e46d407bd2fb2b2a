// Add/Remove of a status to/from the actor's own featured collection (remote pins).
import { and, eq, sql } from "drizzle-orm";
import { statusPins } from "../../db/schema";
import { padId, snowflake } from "../../lib/ids";
import { statusByUri } from "../resolution";
import { resolveStatus } from "../resolve-status";
import { drop, type InboxContext } from "./context";

export async function handleFeatured(ctx: InboxContext, add: boolean): Promise<void> {
  const { db, signer, activity } = ctx;
  if (!activity.target || !signer.featuredUrl || activity.target !== signer.featuredUrl) return drop("add/remove outside the featured collection");
  if (!activity.objectId) return drop("add/remove without object");
  const status = add ? await resolveStatus(ctx.r, activity.objectId) : await statusByUri(db, activity.objectId);
  if (!status) return drop("featured status unavailable");
  if (status.accountId !== signer.id || status.reblogOfId) return drop("featured status of another account");
  if (add) {
    await db.run(sql`INSERT OR IGNORE INTO status_pins (id, account_id, status_id, created_at)
      VALUES (${padId(snowflake())}, ${padId(signer.id)}, ${padId(status.id)}, ${Date.now()})`);
  } else {
    await db.delete(statusPins).where(and(eq(statusPins.accountId, signer.id), eq(statusPins.statusId, status.id)));
  }
}
