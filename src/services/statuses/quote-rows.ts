// The one writer of `quotes` rows (migrations/0022_quotes.sql): the insert, whether a local post attaches its quote
// (quotes.ts attachQuoteStatements) or a remote Note arrives quoting something (federation/remote/quotes-inbound.ts), and every
// state change, whichever road causes it: a quoted author revoking through the API or by a Delete of their
// QuoteAuthorization, an Accept or Reject of our QuoteRequest, a remote QuoteRequest granted, a stamp on an updated Note.
// Apart from quotes.ts (the quote actions, with their reads, rules, notifications and effects) because ingestion writes
// quotes too: federation/remote/quotes-inbound.ts is the remote-object side that resolving and ingesting statuses use, in the
// services layer but below the actions. This file reaches nothing but the schema, so ingestion importing it pulls in no
// service and risks no import cycle; a row writer under src/db would do as much, but the state rules (rejectedState)
// are Mastodon's Quote model, a service's subject.
import { and, eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { frozenInsert } from "../../db/frozen";
import { quotes, type QuoteRow, type QuoteState } from "../../db/schema";

/**
 * A quote row's insert, for the batch that writes its quoting status. A row already there for that status (the same
 * Note ingested twice at once) is kept: the insert does nothing.
 */
export const quoteRowStatement = frozenInsert(quotes, (q) => q.onConflictDoNothing());

/** Mastodon's Quote#reject!: an accepted quote is revoked, any other (but a revoked one) rejected. */
export const rejectedState = (q: Pick<QuoteRow, "state">): QuoteState => (q.state === "accepted" || q.state === "revoked" ? "revoked" : "rejected");

/** What a state change sets besides `state`: the QuoteAuthorization's id, the QuoteRequest's id (left as they are when absent). */
export interface QuoteStateChange {
  state: QuoteState;
  approvalUri?: string | null;
  activityUri?: string | null;
}

/**
 * The quote's state becomes `to.state`, with the uris `to` names. With `onlyFrom`, only while it is still in that state
 * (an answer that raced another changes nothing).
 */
export function setQuoteState(db: DB, quoteId: string, to: QuoteStateChange, onlyFrom?: QuoteState, now = Date.now()) {
  const set: Partial<QuoteRow> = { state: to.state, updatedAt: now };
  if (to.approvalUri !== undefined) set.approvalUri = to.approvalUri;
  if (to.activityUri !== undefined) set.activityUri = to.activityUri;
  return db
    .update(quotes)
    .set(set)
    .where(onlyFrom ? and(eq(quotes.id, quoteId), eq(quotes.state, onlyFrom)) : eq(quotes.id, quoteId));
}
