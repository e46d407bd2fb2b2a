// Move (Mastodon's ActivityPub::Activity::Move): a remote account says it moved to `target`. Accepted only when the
// Move is about the signer itself (object = actor) and the target, local or fetched fresh from its server, lists the
// origin in its alsoKnownAs; then the origin's moved_to is set and its local followers follow the target
// (src/services/accounts/account-migration.ts). Anything else is dropped. A replay (same id) is deduplicated by the inbox
// processor, and moving followers again changes nothing twice.
import { acceptMove } from "../../../services/accounts/account-migration";
import { resolveActor, ResolveError } from "../../remote/remote-accounts";
import { FetchRefused } from "../../../net/safe-fetch";
import { drop, localAccountByUri, type InboxContext } from "./context";

export async function handleMove(ctx: InboxContext): Promise<void> {
  const { db, cfg, signer, activity } = ctx;
  if (!signer.domain) return drop("Move from a local account");
  if (activity.objectId !== signer.uri) return drop("Move of another account than its actor");
  const targetUri = activity.target;
  if (!targetUri || targetUri === signer.uri) return drop("Move without a target");
  let local = false;
  try {
    local = new URL(targetUri).host.toLowerCase() === new URL(cfg.origin).host.toLowerCase();
  } catch {
    return drop("Move target is not a URL");
  }
  let target = local ? await localAccountByUri(db, targetUri) : null;
  if (!local) {
    try {
      target = await resolveActor(db, cfg, targetUri, { refresh: true });
    } catch (e) {
      if (e instanceof ResolveError || e instanceof FetchRefused) return drop(`Move target could not be fetched: ${e.message}`);
      throw e;
    }
  }
  if (!target || target.suspendedAt) return drop("Move target unknown or suspended");
  if (!(target.alsoKnownAs ?? []).includes(signer.uri)) return drop("Move target does not list the origin in alsoKnownAs");
  await acceptMove(db, ctx.fx, signer, target);
}
