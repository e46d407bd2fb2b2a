// Quote posts → Mastodon JSON (4.5): the Quote and ShallowQuote entities a status carries in `quote`, and its
// QuoteApproval (`quote_approval`). Also the quote policy rules both this entity and the posting service apply
// (Mastodon's Status::InteractionPolicyConcern), kept pure so the status bundle can answer them from memory.
import type { QuoteRow } from "../../db/schema/index";

/** Mastodon's QUOTE_APPROVAL_POLICY_FLAGS; a policy is `automatic << 16 | manual`. */
export const QUOTE_FLAGS = { unsupported_policy: 1, public: 2, followers: 4, following: 8 } as const;
type FlagKey = keyof typeof QUOTE_FLAGS;
const FLAG_KEYS = Object.keys(QUOTE_FLAGS) as FlagKey[];

export type QuotePolicyParam = "public" | "followers" | "nobody";

/** The stored policy for a new local status: private and direct posts are never quotable by others. */
export function policyFromParam(param: QuotePolicyParam, visibility: string): number {
  if (visibility !== "public" && visibility !== "unlisted") return 0;
  if (param === "public") return QUOTE_FLAGS.public << 16;
  if (param === "followers") return QUOTE_FLAGS.followers << 16;
  return 0;
}

const keysOf = (bits: number): FlagKey[] => FLAG_KEYS.filter((k) => (bits & QUOTE_FLAGS[k]) !== 0);

export interface QuotableStatus {
  accountId: string;
  visibility: string;
  reblogOfId: string | null;
  quoteApprovalPolicy: number;
}

export type QuotePolicyAnswer = "automatic" | "manual" | "unknown" | "denied";

/**
 * How the status's policy applies to `accountId` (Mastodon's quote_policy_for_account): its author always may;
 * direct, private and boosts never; then automatic before manual. `follows`: `accountId` follows the author.
 */
export function quotePolicyFor(s: QuotableStatus, accountId: string | null, follows: boolean): QuotePolicyAnswer {
  if (!accountId || s.visibility === "direct" || s.reblogOfId) return "denied";
  if (s.accountId === accountId) return "automatic";
  if (s.visibility !== "public" && s.visibility !== "unlisted") return "denied";
  const automatic = s.quoteApprovalPolicy >>> 16;
  const manual = s.quoteApprovalPolicy & 0xffff;
  if (automatic & QUOTE_FLAGS.public) return "automatic";
  if (automatic & QUOTE_FLAGS.followers && follows) return "automatic";
  if (manual & QUOTE_FLAGS.public) return "manual";
  if (manual & QUOTE_FLAGS.followers && follows) return "manual";
  if ((automatic | manual) & QUOTE_FLAGS.unsupported_policy) return "unknown";
  return "denied";
}

/** StatusPolicy#quote?: allowed when the policy answers automatic or manual (the caller checked visibility). */
export const mayQuote = (a: QuotePolicyAnswer) => a === "automatic" || a === "manual";

/** QuoteApproval (docs.joinmastodon.org/entities/QuoteApproval): who may quote the status, and what the viewer may. */
export interface MastodonQuoteApproval {
  automatic: FlagKey[];
  manual: FlagKey[];
  current_user: QuotePolicyAnswer;
}

export function renderQuoteApproval(s: QuotableStatus, viewerId: string | null, follows: boolean): MastodonQuoteApproval {
  return {
    automatic: keysOf(s.quoteApprovalPolicy >>> 16),
    manual: keysOf(s.quoteApprovalPolicy & 0xffff),
    current_user: quotePolicyFor(s, viewerId, follows),
  };
}

/**
 * `interactionPolicy.canQuote` of a local Note: only automatic approval goes out; nobody else means the author alone
 * (ActivityPub::NoteSerializer#interaction_policy).
 */
export function canQuotePolicy(policy: number, authorUri: string, followersUrl: string | null, followingUrl: string | null, publicUri: string) {
  const automatic = policy >>> 16;
  const approved: string[] = [];
  if (automatic & QUOTE_FLAGS.public) approved.push(publicUri);
  if (automatic & QUOTE_FLAGS.followers && followersUrl) approved.push(followersUrl);
  if (automatic & QUOTE_FLAGS.following && followingUrl) approved.push(followingUrl);
  if (!approved.length) approved.push(authorUri);
  return { canQuote: { automaticApproval: approved } };
}

/** A Quote's state (docs.joinmastodon.org/entities/Quote): the stored one, or what the viewer's relation makes of it. */
export type MastodonQuoteState = QuoteRow["state"] | "deleted" | "unauthorized" | "blocked_account" | "blocked_domain" | "muted_account";

/** Quote: the quoted status in full; `S` is the Status entity (entities/statuses/status.ts, which imports this file). */
export interface MastodonQuote<S> {
  state: MastodonQuoteState;
  quoted_status: S | null;
}

/** ShallowQuote: the quoted status by id (a quote inside a quote, and streaming's shared payloads). */
export interface MastodonShallowQuote {
  state: MastodonQuoteState;
  quoted_status_id: string | null;
}

/** What the viewer's relation to the quoted status makes of an accepted quote (StatusFilter#filter_state_for_quote). */
export interface QuotedView<S> {
  /** The quoted status as rendered for the viewer (null: it is gone, or the viewer may not see it). */
  rendered: S | null;
  exists: boolean;
  ownedByViewer: boolean;
  blockedDomain: boolean;
  blockedAccount: boolean;
  mutedAccount: boolean;
}

/** Mastodon shows a quote when it is accepted or not legacy (Quote#acceptable?). */
export const quoteShown = (q: QuoteRow) => q.state === "accepted" || !q.legacy;

/**
 * The Quote entity (`shallow` false: the quoted status in full) or ShallowQuote (`shallow`: its id), as
 * REST::BaseQuoteSerializer computes the state: not accepted → the stored state; accepted but gone → `deleted`; not
 * visible → `unauthorized`; the viewer blocks the domain, the account or mutes it → those states (the status is
 * still given, for "show anyway").
 */
export function renderQuote<S>(q: QuoteRow, view: QuotedView<S>, shallow: true): MastodonShallowQuote;
export function renderQuote<S>(q: QuoteRow, view: QuotedView<S>, shallow: false): MastodonQuote<S>;
export function renderQuote<S>(q: QuoteRow, view: QuotedView<S>, shallow: boolean): MastodonQuote<S> | MastodonShallowQuote {
  let state: MastodonQuoteState = q.state;
  let show = false;
  if (q.state === "accepted") {
    if (!view.exists) state = "deleted";
    else if (view.ownedByViewer) show = true;
    else if (!view.rendered) state = "unauthorized";
    else {
      show = true;
      if (view.blockedDomain) state = "blocked_domain";
      else if (view.blockedAccount) state = "blocked_account";
      else if (view.mutedAccount) state = "muted_account";
    }
  }
  if (shallow) return { state, quoted_status_id: show ? q.quotedStatusId : null };
  return { state, quoted_status: show ? view.rendered : null };
}
