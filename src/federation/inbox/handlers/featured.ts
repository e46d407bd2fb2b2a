// Add/Remove of a status to/from the actor's own featured collection (remote pins), written as a local pin is
// (services/interactions/pins.ts), without the local accounts' limit.
import { pinStatement, unpinStatement } from "../../../services/interactions/pins";
import { statusByUri } from "../../remote/resolution";
import { resolveStatus } from "../../remote/resolve-status";
import { drop, type InboxContext } from "./context";

export async function handleFeatured(ctx: InboxContext, add: boolean): Promise<void> {
  const { db, signer, activity } = ctx;
  if (!activity.target || !signer.featuredUrl || activity.target !== signer.featuredUrl) return drop("add/remove outside the featured collection");
  if (!activity.objectId) return drop("add/remove without object");
  const status = add ? await resolveStatus(ctx.r, activity.objectId) : await statusByUri(db, activity.objectId);
  if (!status) return drop("featured status unavailable");
  if (status.accountId !== signer.id || status.reblogOfId) return drop("featured status of another account");
  await (add ? pinStatement(db, signer.id, status.id, null) : unpinStatement(db, signer.id, status.id));
}
