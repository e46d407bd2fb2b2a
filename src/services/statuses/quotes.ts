// Quote posts (Mastodon 4.5): attaching a quote to a new local status (PostStatusService#attach_quote!), revoking a
// quote of one's own status (RevokeQuoteService), changing a status's quote policy (InteractionPoliciesController),
// and the state changes other servers cause (an Accept or Reject of our QuoteRequest, a Delete of their
// QuoteAuthorization). The rows live in `quotes` (migrations/0022_quotes.sql), written only through quote-rows.ts;
// `quotes_count` is kept by triggers.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { Statement } from "../../db/client";
import { quotes, statuses, type AccountRow, type QuoteRow, type QuoteState } from "../../db/schema";
import { renderStatus, type StatusRow } from "../../entities/statuses/status";
import { mayQuote, policyFromParam, quotePolicyFor, type QuotePolicyParam } from "../../entities/statuses/quote";
import type { Config } from "../../env";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { NotifyEffect } from "../../effects/types";
import { ApiError, notFound, unprocessable } from "../../lib/http/errors";
import { padId, snowflake, unpadId } from "../../lib/text/ids";
import { notificationWrite, notificationWrites } from "../notifications/notifications";
import { statusReadableBy } from "../../policy/visibility";
import { quoteRowStatement, rejectedState, setQuoteState } from "./quote-rows";

/** Mastodon's statuses.errors.quoted_status_not_found: the answer for a status that cannot be quoted (404). */
export const QUOTED_NOT_FOUND = "The post you are trying to quote does not appear to exist.";

/** The id of the QuoteAuthorization a local author grants (ActivityPub::TagManager#approval_uri_for). */
export const approvalUriFor = (quotedAuthorUri: string, quoteId: string) => `${quotedAuthorUri}/quote_authorizations/${quoteId}`;

/** The QuoteRequest id a local quoting author sends (Quote#set_activity_uri). */
export const quoteRequestUri = (authorUri: string) => `${authorUri}/quote_requests/${crypto.randomUUID()}`;

/** Read for posting: the proper status behind `quotedId`, if the poster may see it, and whether they follow its author. */
export function quotedStatusQuery(db: DB, posterId: string, quotedId: string) {
  return db
    .select({
      status: statuses,
      // Qualified by hand: drizzle writes a single table's columns unqualified, which the subquery would rebind.
      follows: sql<number>`EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ${padId(posterId)} AND f.target_account_id = statuses.account_id)`,
      authorUri: sql<string>`(SELECT a.uri FROM accounts a WHERE a.id = statuses.account_id)`,
      authorLocal: sql<number>`(SELECT a.domain IS NULL FROM accounts a WHERE a.id = statuses.account_id)`,
    })
    .from(statuses)
    .where(and(eq(statuses.id, sql`(SELECT coalesce(q.reblog_of_id, q.id) FROM statuses q WHERE q.id = ${padId(quotedId)})`), statusReadableBy(posterId)))
    .limit(1);
}

export interface QuotedTarget {
  status: StatusRow;
  follows: boolean;
  authorUri: string;
  authorLocal: boolean;
}

export function quotedTargetOf(rows: unknown[] | undefined): QuotedTarget | null {
  const row = rows?.[0] as { status: StatusRow; follows: number; authorUri: string; authorLocal: number } | undefined;
  if (!row) return null;
  return { status: row.status, follows: !!row.follows, authorUri: row.authorUri, authorLocal: !!row.authorLocal };
}

/**
 * The quote rules of a new post: the status must be quotable by the poster (StatusPolicy#quote?, a 404 as Mastodon
 * answers), a private quoted status makes the post private at most, and a private mention quoting someone else must
 * mention them. Returns the visibility the post gets.
 */
export function checkQuote(target: QuotedTarget | null, posterId: string, visibility: string, mentionedIds: string[]): string {
  if (!target) throw new ApiError(404, QUOTED_NOT_FOUND);
  const s = target.status;
  if (!mayQuote(quotePolicyFor(s, posterId, target.follows))) throw new ApiError(404, QUOTED_NOT_FOUND);
  let out = visibility;
  if (s.visibility === "private" && (visibility === "public" || visibility === "unlisted")) out = "private";
  if (out === "direct" && s.accountId !== posterId && !mentionedIds.includes(s.accountId)) {
    throw unprocessable("Validation failed: Quoting a post in a private mention requires mentioning its author");
  }
  return out;
}

export { policyFromParam, type QuotePolicyParam };

/**
 * The statements that attach a quote to a status being written (in its batch): the quote row, a silent mention of
 * the quoted author (Quote#ensure_quoted_access) and, for an accepted quote of someone else's local status, their
 * `quote` notification. A quote of a local status is decided at once (automatic approval); one of a remote status
 * waits for the answer to the QuoteRequest the caller sends once the batch committed.
 */
export function attachQuoteStatements(
  db: DB,
  p: { statusId: string; author: AccountRow; target: QuotedTarget; now: number },
): { stmts: Statement[]; quote: QuoteRow; notify: NotifyEffect[] } {
  const { statusId, author, target, now } = p;
  const s = target.status;
  const local = target.authorLocal;
  const state: QuoteState = local && mayQuote(quotePolicyFor(s, author.id, target.follows)) ? "accepted" : "pending";
  const quote: QuoteRow = {
    id: snowflake(now),
    statusId,
    accountId: author.id,
    quotedStatusId: s.id,
    quotedAccountId: s.accountId,
    state,
    approvalUri: null,
    activityUri: local ? null : quoteRequestUri(author.uri),
    legacy: false,
    createdAt: now,
    updatedAt: now,
  };
  const stmts: Statement[] = [
    quoteRowStatement(db, quote),
    db.run(
      sql`INSERT OR IGNORE INTO mentions (id, status_id, account_id, silent) VALUES (${padId(snowflake(now))}, ${padId(statusId)}, ${padId(s.accountId)}, 1)`,
    ),
  ];
  const notify: NotifyEffect[] = [];
  if (state === "accepted" && local && s.accountId !== author.id) {
    const note = notificationWrite(db, { recipientId: s.accountId, fromAccountId: author.id, type: "quote", statusId, activityId: quote.id });
    stmts.push(note.statement);
    notify.push(note.effect);
  }
  return { stmts, quote, notify };
}

/**
 * POST /api/v1/statuses/:id/quotes/:quoting_status_id/revoke: the author of status `quotedId` withdraws the quote of
 * it by `quotingId`. Federated as a Delete of the QuoteAuthorization; answers the quoting status.
 */
export async function revokeQuote(db: DB, fx: Effects, cfg: Config, quotedId: string, quotingId: string, meId: string) {
  const [q] = await db
    .select()
    .from(quotes)
    .where(and(eq(quotes.statusId, quotingId), eq(quotes.quotedStatusId, quotedId), eq(quotes.quotedAccountId, meId)))
    .limit(1);
  if (!q) throw notFound();
  // The same change as a remote quoted author's Delete of their QuoteAuthorization, told to the quoting server.
  await rejectQuote(db, fx, q, (fx) => fx.federate({ kind: "revoke_quote", quoteId: q.id }));
  const out = await renderStatus(db, cfg, q.statusId, meId);
  if (!out) throw notFound();
  return out;
}

/** PUT /api/v1/statuses/:id/interaction_policy: the author sets who may quote (federated as an Update). */
export async function setQuotePolicy(db: DB, fx: Effects, cfg: Config, statusId: string, meId: string, param: QuotePolicyParam) {
  const [s] = await db
    .select({ id: statuses.id, visibility: statuses.visibility, policy: statuses.quoteApprovalPolicy, reblogOfId: statuses.reblogOfId })
    .from(statuses)
    .where(and(eq(statuses.id, statusId), eq(statuses.accountId, meId)))
    .limit(1);
  if (!s || s.reblogOfId) throw notFound();
  const policy = policyFromParam(param, s.visibility);
  if (policy !== s.policy) {
    await commit(db, fx, [db.update(statuses).set({ quoteApprovalPolicy: policy }).where(eq(statuses.id, s.id))], (fx) => {
      fx.add({ type: "status_updated", statusId: s.id });
      fx.federate({ kind: "update_status", statusId: s.id });
    });
  }
  const out = await renderStatus(db, cfg, s.id, meId);
  if (!out) throw notFound();
  return out;
}

/**
 * Accept{QuoteRequest} received from the quoted author: our pending quote becomes accepted with their authorization
 * (ActivityPub::Activity::Accept#accept_quote!), and the quoting status goes out again so followers see the stamp.
 */
export async function acceptOwnQuote(db: DB, fx: Effects, q: QuoteRow, approvalUri: string): Promise<void> {
  await commit(db, fx, [setQuoteState(db, q.id, { state: "accepted", approvalUri }, "pending")], (fx) => {
    fx.add({ type: "status_updated", statusId: q.statusId });
    fx.federate({ kind: "update_status", statusId: q.statusId });
  });
}

/**
 * The quote is rejected or revoked by its quoted author (Quote#reject!): a Reject{QuoteRequest} or a
 * Delete{QuoteAuthorization} received, or a local author's revocation (revokeQuote). False when it already was.
 */
export async function rejectQuote(db: DB, fx: Effects, q: QuoteRow, also?: (fx: Effects) => void): Promise<boolean> {
  const state = rejectedState(q);
  if (state === q.state) return false;
  await commit(db, fx, [setQuoteState(db, q.id, { state })], (fx) => {
    fx.add({ type: "status_updated", statusId: q.statusId });
    also?.(fx);
  });
  return true;
}

/** Local authors of accepted quotes of a status: they hear of its edits (`quoted_update`). */
export function localQuotesOfQuery(db: DB, statusId: string, limit: number) {
  return db.all<{
    status_id: string;
    account_id: string;
  }>(sql`SELECT q.status_id, q.account_id FROM quotes q JOIN accounts a ON a.id = q.account_id AND a.domain IS NULL
    WHERE q.quoted_status_id = ${padId(statusId)} AND q.state = 'accepted' LIMIT ${limit}`);
}

/**
 * One `quoted_update` per quoting status, carrying the quote (not the edited status), as Mastodon attaches it: the
 * statements, and their `notify` effects for the caller to record once its batch committed.
 */
export function quotedUpdateNotifications(db: DB, rows: { status_id: string; account_id: string }[], editorId: string, editId: string) {
  return notificationWrites(
    db,
    rows
      .filter((r) => unpadId(String(r.account_id)) !== editorId)
      .map((r) => ({
        recipientId: unpadId(String(r.account_id)),
        fromAccountId: editorId,
        type: "quoted_update" as const,
        statusId: unpadId(String(r.status_id)),
        activityId: editId,
      })),
  );
}
