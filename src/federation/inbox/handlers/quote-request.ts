// The quote authorization exchange received (FEP-044f as Mastodon 4.5 runs it): a QuoteRequest for a local status
// (ActivityPub::Activity::QuoteRequest), the Accept or Reject of our own QuoteRequest (Accept#accept_quote!,
// Reject#reject_quote!), and the Delete of an authorization the quoted author withdraws (Delete#revoke_quote).
import { and, eq, inArray, or, sql } from "drizzle-orm";
import { follows, quotes, type QuoteRow } from "../../../db/schema/index";
import { mayQuote, quotePolicyFor } from "../../../entities/statuses/quote";
import { padId, snowflake } from "../../../lib/text/ids";
import { notificationWrite } from "../../../services/notifications/notifications";
import { acceptOwnQuote, rejectQuote } from "../../../services/statuses/quotes";
import { setQuoteState } from "../../../services/statuses/quote-rows";
import { accountCanRead } from "../../../policy/visibility";
import { httpUrl } from "../../../lib/http/urls";
import { normalizeNote, sameHost } from "../../remote/normalize";
import { ingestNote } from "../../remote/remote-statuses";
import { statusByUri } from "../../remote/resolution";
import { resolveStatus } from "../../remote/resolve-status";
import { drop, prop, typeOf, type InboxContext } from "./context";

/** QuoteRequest{object: local status, instrument: their quoting Note}: Accept with a QuoteAuthorization, or Reject. */
export async function handleQuoteRequest(ctx: InboxContext): Promise<void> {
  const { db, signer, activity, json } = ctx;
  if (!activity.id || !sameHost(activity.id, signer.uri)) return drop("quote request id not on the actor's host");
  const quoted = activity.objectId ? await statusByUri(db, activity.objectId) : null;
  if (!quoted?.local || quoted.reblogOfId || (quoted.visibility !== "public" && quoted.visibility !== "unlisted")) {
    return drop("quote request for no quotable local status");
  }
  const instrumentUri = prop(json, "instrument");
  if (!instrumentUri) return drop("quote request without instrument");
  const [following] = await db
    .select({ id: follows.id })
    .from(follows)
    .where(and(eq(follows.accountId, signer.id), eq(follows.targetAccountId, quoted.accountId)))
    .limit(1);
  const allowed = mayQuote(quotePolicyFor(quoted, signer.id, !!following)) && (await accountCanRead(db, signer.id, quoted.id));
  if (!allowed) {
    ctx.fx.federate({
      kind: "reject_quote_request",
      accountId: quoted.accountId,
      requesterId: signer.id,
      activityUri: activity.id,
      quotedUri: quoted.uri,
      instrumentUri,
    });
    return;
  }
  // The quoting status: known, else the inlined Note when it is the actor's own, else fetched from its origin.
  let status = await statusByUri(db, instrumentUri);
  const embedded =
    json.instrument && typeof json.instrument === "object" && !Array.isArray(json.instrument) ? (json.instrument as Record<string, unknown>) : null;
  if (!status && embedded) {
    const note = normalizeNote(embedded);
    if (note && note.id === instrumentUri && sameHost(note.id, signer.uri) && note.attributedTo === signer.uri) status = await ingestNote(ctx.r, note, signer);
  }
  status ??= await resolveStatus(ctx.r, instrumentUri);
  if (!status || status.accountId !== signer.id) return drop("quote request instrument is not the actor's status");
  const [q] = await db.select().from(quotes).where(eq(quotes.statusId, status.id)).limit(1);
  if (!q || q.quotedStatusId !== quoted.id) return drop("instrument does not quote the requested status");
  const now = Date.now();
  const note = notificationWrite(db, { recipientId: quoted.accountId, fromAccountId: signer.id, type: "quote", statusId: status.id, activityId: q.id });
  await db.batch([
    // Their QuoteRequest's id is kept to answer it; our authorization's id is made from the row (approvalUriFor).
    setQuoteState(db, q.id, { state: "accepted", activityUri: activity.id, approvalUri: null }, undefined, now),
    // The quoted author can see the quote (Quote#ensure_quoted_access).
    db.run(
      sql`INSERT OR IGNORE INTO mentions (id, status_id, account_id, silent) VALUES (${padId(snowflake(now))}, ${padId(status.id)}, ${padId(quoted.accountId)}, 1)`,
    ),
    note.statement,
  ]);
  ctx.fx.add(note.effect);
  ctx.fx.federate({ kind: "accept_quote_request", quoteId: q.id });
  ctx.fx.add({ type: "status_updated", statusId: status.id });
}

/** Our quote (of a status by the signer) that an Accept/Reject answers: by our QuoteRequest's id, or its instrument. */
async function answeredQuote(ctx: InboxContext): Promise<QuoteRow | null> {
  const { db, activity, signer } = ctx;
  const obj = activity.object;
  if (obj && typeOf(obj) && typeOf(obj) !== "QuoteRequest") return null;
  const matches = [];
  if (activity.objectId) matches.push(eq(quotes.activityUri, activity.objectId));
  const instrument = obj ? prop(obj, "instrument") : null;
  if (instrument) matches.push(inArray(quotes.statusId, sql`(SELECT id FROM statuses WHERE uri = ${instrument} AND local = 1)`));
  if (!matches.length) return null;
  const [q] = await db
    .select()
    .from(quotes)
    .where(and(or(...matches), eq(quotes.quotedAccountId, signer.id), sql`${quotes.activityUri} IS NOT NULL`))
    .limit(1);
  return q ?? null;
}

/** Is this Accept or Reject about a QuoteRequest (rather than a Follow)? Then it is handled here. */
export async function answersQuoteRequest(ctx: InboxContext): Promise<boolean> {
  if (typeOf(ctx.activity.object) === "QuoteRequest") return true;
  if (ctx.activity.object || !ctx.activity.objectId) return false;
  const [q] = await ctx.db.select({ id: quotes.id }).from(quotes).where(eq(quotes.activityUri, ctx.activity.objectId)).limit(1);
  return !!q;
}

export async function handleQuoteAnswer(ctx: InboxContext, accepted: boolean): Promise<void> {
  const q = await answeredQuote(ctx);
  if (!q) return drop("answer to no quote request of ours");
  if (!accepted) {
    await rejectQuote(ctx.db, ctx.fx, q);
    return;
  }
  const result = httpUrl(prop(ctx.json, "result"));
  if (!result || !sameHost(result, ctx.signer.uri)) return drop("accepted quote without an authorization on the actor's host");
  if (q.state !== "pending") return;
  await acceptOwnQuote(ctx.db, ctx.fx, q, result);
}

/** revokedQuote's read as a statement (for a batch); null without an object id. */
export function revokedQuoteStatement(ctx: InboxContext) {
  const uri = ctx.activity.objectId;
  if (!uri) return null;
  return ctx.db
    .select()
    .from(quotes)
    .where(and(eq(quotes.approvalUri, uri), eq(quotes.quotedAccountId, ctx.signer.id), inArray(quotes.state, ["pending", "accepted"])))
    .limit(1);
}

/** The quote whose authorization the signer (its quoted author) deletes, if any. */
export async function revokedQuote(ctx: InboxContext): Promise<QuoteRow | null> {
  const q = revokedQuoteStatement(ctx);
  return q ? ((await q)[0] ?? null) : null;
}

export async function handleDeleteAuthorization(ctx: InboxContext, q: QuoteRow | null): Promise<void> {
  if (!q) return drop("delete of an unknown quote authorization");
  await rejectQuote(ctx.db, ctx.fx, q);
}
