// Who may feature an account in a collection (Mastodon 4.6's feature approval, FEP-7aa9's canFeature). A local account
// consents as Mastodon's ActorSerializer#interaction_policy says: nobody when it is not discoverable, its followers when
// it is locked, anybody otherwise. A remote account consents as its actor's interactionPolicy.canFeature says (stored
// on the row, src/federation/remote/remote-accounts.ts); an actor without one cannot be featured (`missing`).
import type { FeaturePolicy, FeaturePolicyLabel } from "../db/schema/index";

export type PolicyAccount = {
  domain: string | null;
  discoverable: boolean | null;
  locked: boolean;
  suspendedAt: number | null;
  featurePolicy: FeaturePolicy | null;
};

/** FeatureApproval.current_user: how the policy applies to whoever asks. */
export type FeatureDecision = "automatic" | "manual" | "denied" | "unknown" | "missing";

/** FeatureApproval (docs.joinmastodon.org/entities/FeatureApproval). */
export interface MastodonFeatureApproval {
  automatic: FeaturePolicyLabel[];
  manual: FeaturePolicyLabel[];
  current_user: FeatureDecision;
}

export function featurePolicyOf(a: PolicyAccount): FeaturePolicy | null {
  if (a.domain) return a.featurePolicy;
  if (a.suspendedAt || !a.discoverable) return { automatic: [], manual: [] };
  return { automatic: [a.locked ? "followers" : "public"], manual: [] };
}

/**
 * The decision for a curator: `follows` whether the curator follows the account, `followedBy` whether the account
 * follows the curator; a block either way, or a suspension, denies.
 */
export function featureDecision(a: PolicyAccount, rel: { follows: boolean; followedBy: boolean; blocked: boolean } | null): FeatureDecision {
  const policy = featurePolicyOf(a);
  if (!policy) return "missing";
  if (a.suspendedAt || rel?.blocked) return "denied";
  const covers = (labels: FeaturePolicyLabel[]) =>
    labels.includes("public") || (!!rel?.follows && labels.includes("followers")) || (!!rel?.followedBy && labels.includes("following"));
  if (covers(policy.automatic)) return "automatic";
  if (covers(policy.manual)) return "manual";
  return [...policy.automatic, ...policy.manual].includes("unsupported_policy") ? "unknown" : "denied";
}

/**
 * Account `feature_approval`: `currentUser` when the caller decided it for its viewer (the account routes:
 * src/services/relationships/feature-approval.ts), else what holds for anybody signed in (renderAccount needs no query).
 */
export function renderFeatureApproval(a: PolicyAccount, currentUser?: FeatureDecision): MastodonFeatureApproval {
  const policy = featurePolicyOf(a);
  return { automatic: policy?.automatic ?? [], manual: policy?.manual ?? [], current_user: currentUser ?? featureDecision(a, null) };
}

const PUBLIC = new Set(["https://www.w3.org/ns/activitystreams#Public", "as:Public", "Public"]);

/** interactionPolicy.canFeature's URIs as labels, for the actor whose followers and following collections are given. */
export function featurePolicyFromActor(
  canFeature: { automatic: string[]; manual: string[] } | null,
  actor: { followers: string | null; following: string | null },
): FeaturePolicy | null {
  if (!canFeature) return null;
  const label = (uri: string): FeaturePolicyLabel =>
    PUBLIC.has(uri) ? "public" : uri === actor.followers ? "followers" : uri === actor.following ? "following" : "unsupported_policy";
  const labels = (uris: string[]) => [...new Set(uris.map(label))];
  return { automatic: labels(canFeature.automatic), manual: labels(canFeature.manual) };
}
