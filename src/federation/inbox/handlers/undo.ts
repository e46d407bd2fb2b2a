// Undo{Follow|Like|Announce|Block}. The undone activity may come embedded or as its id only; either way it is
// matched among the signer's own rows, so nobody can undo someone else's action.
import { undoBlock } from "./account";
import { undoAnnounce, undoLike } from "./announce";
import { drop, prop, typeOf, type InboxContext } from "./context";
import { undoFollow } from "./follow";

export async function handleUndo(ctx: InboxContext): Promise<void> {
  const { activity, signer } = ctx;
  const obj = activity.object;
  const uri = activity.objectId;
  const type = typeOf(obj);
  if (obj && prop(obj, "actor") && prop(obj, "actor") !== signer.uri) return drop("undo of another actor's activity");
  const inner = prop(obj, "object");
  switch (type) {
    // `true`: the undo's batch is the activity's last write, so it takes the inbox item's finishing statements.
    case "Follow":
      await undoFollow(ctx, uri, obj, true);
      return;
    case "Like":
      await undoLike(ctx, uri, inner, true);
      return;
    case "Announce":
      await undoAnnounce(ctx, uri);
      return;
    case "Block":
      await undoBlock(ctx, uri, inner);
      return;
    case null:
      // Only an id: try each kind of row the signer may own under it.
      if ((await undoAnnounce(ctx, uri)) || (await undoLike(ctx, uri, null)) || (await undoFollow(ctx, uri, null)) || (await undoBlock(ctx, uri, null))) return;
      return drop("undo of an unknown activity");
    default:
      return drop(`undo of ${type}`);
  }
}
