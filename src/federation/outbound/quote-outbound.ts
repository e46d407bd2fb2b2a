// The quote exchange going out (FEP-044f as Mastodon 4.5 runs it): our QuoteRequest when a local status quotes a
// remote one, our Accept (with a QuoteAuthorization) or Reject when a remote status asks to quote a local one, and the
// Delete of an authorization a local author revokes. Called by runFederate (./outbound.ts).
import { eq } from "drizzle-orm";
import { quotes } from "../../db/schema/index";
import { loadStatusBundle } from "../../entities/statuses/status";
import type { FederateAction } from "../../effects/types";
import { approvalUriFor } from "../../services/statuses/quotes";
import { acceptQuoteRequestActivity, deleteQuoteAuthorizationActivity, quoteRequestActivity, rejectQuoteRequestActivity } from "./activities";
import { renderNote } from "./note-doc";
import { accountsById, isLocal, isRemote, send, toAccount, type Run } from "./outbound-send";
import { followerInboxes, personalInbox, remoteInboxes } from "./recipients";

type QuoteAction = Extract<FederateAction, { kind: "quote_request" | "accept_quote_request" | "reject_quote_request" | "revoke_quote" }>;

export async function runQuoteFederate(r: Run, a: QuoteAction): Promise<void> {
  switch (a.kind) {
    case "quote_request":
      return quoteRequest(r, a.quoteId);
    case "accept_quote_request":
      return acceptQuoteRequest(r, a.quoteId);
    case "reject_quote_request": {
      const m = await accountsById(r.db, [a.accountId, a.requesterId]);
      const p = { id: a.activityUri, actor: m.get(a.requesterId)?.uri ?? "", quotedUri: a.quotedUri, instrument: a.instrumentUri };
      return toAccount(r, m.get(a.accountId), m.get(a.requesterId), (l) => rejectQuoteRequestActivity(l.uri, p));
    }
    case "revoke_quote":
      return revoke(r, a.quoteId);
  }
}

async function quoteRow(r: Run, quoteId: string) {
  const [q] = await r.db.select().from(quotes).where(eq(quotes.id, quoteId)).limit(1);
  return q ?? null;
}

/** A local status quoting a remote one asks its author (the Note inlined, since a private one cannot be fetched). */
async function quoteRequest(r: Run, quoteId: string) {
  const q = await quoteRow(r, quoteId);
  if (!q?.quotedStatusId || !q.activityUri || q.state !== "pending") return;
  const b = await loadStatusBundle(r.db, [q.statusId], null);
  const s = b.statuses.get(q.statusId);
  const quoted = b.statuses.get(q.quotedStatusId);
  const author = s ? b.accounts.get(s.accountId) : undefined;
  const quotedAuthor = quoted ? b.accounts.get(quoted.accountId) : undefined;
  if (!s || !quoted || !isLocal(author) || !isRemote(quotedAuthor)) return;
  const note = renderNote(r.cfg, b, s.id);
  const inbox = personalInbox(quotedAuthor);
  if (!note || !inbox) return;
  await send(r, author.id, quoteRequestActivity({ id: q.activityUri, actor: author.uri, quotedUri: quoted.uri, instrument: note }), [inbox]);
}

async function quoteParts(r: Run, quoteId: string) {
  const q = await quoteRow(r, quoteId);
  if (!q?.quotedStatusId || !q.quotedAccountId) return null;
  const b = await loadStatusBundle(r.db, [q.statusId], null);
  const s = b.statuses.get(q.statusId);
  const quoted = b.statuses.get(q.quotedStatusId);
  const quoting = s ? b.accounts.get(s.accountId) : undefined;
  const quotedAuthor = b.accounts.get(q.quotedAccountId);
  if (!s || !quoted || !quoting || !isLocal(quotedAuthor)) return null;
  return { q, s, quoted, quoting, quotedAuthor, approval: approvalUriFor(quotedAuthor.uri, q.id) };
}

/** Our Accept of their QuoteRequest, with the QuoteAuthorization's id as `result` (AcceptQuoteRequestSerializer). */
async function acceptQuoteRequest(r: Run, quoteId: string) {
  const p = await quoteParts(r, quoteId);
  if (p?.q.state !== "accepted" || !isRemote(p.quoting)) return;
  const parts = { id: p.q.activityUri ?? `${p.quotedAuthor.uri}#quote_requests/${p.q.id}`, actor: p.quoting.uri, quotedUri: p.quoted.uri, instrument: p.s.uri };
  await toAccount(r, p.quotedAuthor, p.quoting, (l) => acceptQuoteRequestActivity(l.uri, p.q.id, parts, p.approval));
}

/** RevokeQuoteService: the Delete of the authorization, to the servers that hold the quoting and the quoted status. */
async function revoke(r: Run, quoteId: string) {
  const p = await quoteParts(r, quoteId);
  if (p?.q.state !== "revoked") return;
  const inboxes = [...remoteInboxes([p.quoting]), ...(await followerInboxes(r.db, p.quotedAuthor.id))];
  if (isLocal(p.quoting)) inboxes.push(...(await followerInboxes(r.db, p.quoting.id)));
  await send(r, p.quotedAuthor.id, deleteQuoteAuthorizationActivity(p.quotedAuthor.uri, p.approval), [...new Set(inboxes)]);
}
