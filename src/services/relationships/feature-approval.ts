// feature_approval.current_user for the viewer who asks (Mastodon's AccountSerializer answers it per viewer).
// renderAccount gives what holds for anybody signed in, with no query; the account routes whose answers a client
// reads it from (search, an account by id or handle: Mastodon's collection editor suggests only the accounts it may
// add) set it for their viewer here: nobody signed in is denied (as Mastodon); the viewer's own account is denied
// (Tern's collections never hold their curator); an account whose policy turns on a follow (followers, following) is
// decided with the viewer's follows and blocks, in one query for all of them, and none when no account needs it.
import type { DB } from "../../db/client";
import { type FeatureDecision, featureDecision, type PolicyAccount } from "../../policy/feature";
import { decideFeatures } from "./collection-items";

/** Whether the decision for a curator turns on the follows between them and the account. */
const turnsOnFollows = (a: PolicyAccount) => featureDecision(a, null) !== featureDecision(a, { follows: true, followedBy: true, blocked: false });

/** The decisions for `viewerId` that differ from renderAccount's, by account id. */
export async function viewerFeatureDecisions(db: DB, viewerId: string | null, rows: (PolicyAccount & { id: string })[]): Promise<Map<string, FeatureDecision>> {
  const out = new Map<string, FeatureDecision>();
  if (!viewerId) {
    for (const a of rows) out.set(a.id, "denied");
    return out;
  }
  const ask: string[] = [];
  for (const a of rows) {
    if (a.id === viewerId) out.set(a.id, "denied");
    else if (turnsOnFollows(a)) ask.push(a.id);
  }
  for (const [id, { decision }] of await decideFeatures(db, viewerId, ask)) out.set(id, decision);
  return out;
}
