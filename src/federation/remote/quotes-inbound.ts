// Quotes arriving on remote Notes (Mastodon 4.5's Create handling of `quote` and ActivityPub::VerifyQuoteService):
// the quoted status is resolved through resolve-status.ts (within the activity's fetch budget), and the quote is
// accepted only when the quoted author authorised it: a self-quote, or a QuoteAuthorization fetched from the quoted
// author's host that names exactly this quoting Note, the quoted status and its author. Anything else stays pending
// (a quote of a local status waits for the QuoteRequest, answered in handlers/quote-request.ts). A legacy quote
// (`_misskey_quote`, `quoteUrl`, `quoteUri` without FEP-044f `quote`) comes from a server that sends no QuoteRequest:
// it is shown only once accepted (a self-quote; Quote#acceptable?), else its content gets a link to the quoted post
// (quote-fallback.ts). The rows are written by the quotes' one writer, services/statuses/quote-rows.ts, as a local
// post's quote is.
import { sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import type { AccountRow } from "../../db/schema/index";
import type { StatusRow } from "../../entities/statuses/status";
import { QUOTE_FLAGS } from "../../entities/statuses/quote";
import { padId, snowflake, unpadId } from "../../lib/text/ids";
import { quoteRowStatement, setQuoteState } from "../../services/statuses/quote-rows";
import { signedFetchOptions } from "./fetch-options";
import { quoteFallbackFor, type QuoteFallback } from "./quote-fallback";
import { iri, type NormalizedNote, PUBLIC, sameHost } from "./normalize";
import { isLocalUri, MAX_REPLY_DEPTH, statusByUri, type Resolution } from "./resolution";
import { fetchActivityJson } from "../../net/safe-fetch";

const PUBLIC_SPELLINGS = new Set([PUBLIC, "as:Public", "Public"]);

/** A remote Note's interactionPolicy.canQuote as Mastodon's bitmap (ActivityPub::Parser::StatusParser#quote_policy). */
export function remoteQuotePolicy(canQuote: NormalizedNote["canQuote"], author: AccountRow): number {
  if (!canQuote) return 0;
  const bits = (actors: string[]) => {
    let flags = 0;
    let rest = 0;
    for (const a of new Set(actors)) {
      if (PUBLIC_SPELLINGS.has(a)) flags |= QUOTE_FLAGS.public;
      else if (author.followersUrl && a === author.followersUrl) flags |= QUOTE_FLAGS.followers;
      else if (a === `${author.uri}/following`) flags |= QUOTE_FLAGS.following;
      else if (a !== author.uri) rest++;
    }
    return rest ? flags | QUOTE_FLAGS.unsupported_policy : flags;
  };
  return (bits(canQuote.automatic) << 16) | bits(canQuote.manual);
}

/** Whether the QuoteAuthorization at `approvalUri` authorises `quotingUri` to quote `quoted` (by `quotedAuthor`). */
async function verifyAuthorization(r: Resolution, approvalUri: string, quotingUri: string, quotedUri: string, quotedAuthorUri: string): Promise<boolean> {
  if (r.budget <= 0 || isLocalUri(r.cfg, approvalUri) || !sameHost(approvalUri, quotedAuthorUri)) return false;
  r.budget--;
  let json: Record<string, unknown>;
  try {
    ({ json } = await fetchActivityJson(approvalUri, await signedFetchOptions(r.db, r.cfg)));
  } catch (e) {
    console.warn("quote authorization fetch failed", approvalUri.slice(0, 200), e instanceof Error ? e.message : e);
    return false;
  }
  const type = Array.isArray(json.type) ? json.type : [json.type];
  const attributedTo = iri(json.attributedTo);
  return (
    json.id === approvalUri &&
    type.includes("QuoteAuthorization") &&
    !!attributedTo &&
    sameHost(approvalUri, attributedTo) &&
    attributedTo === quotedAuthorUri &&
    iri(json.interactingObject) === quotingUri &&
    iri(json.interactionTarget) === quotedUri
  );
}

async function accountUri(db: DB, id: string): Promise<string | null> {
  const rows = await db.all<{ uri: string }>(sql`SELECT uri FROM accounts WHERE id = ${padId(id)}`);
  return rows[0]?.uri ?? null;
}

/**
 * The statement that stores the quote of a remote Note being ingested as status `statusId` (in the ingest batch), or
 * null when the Note quotes nothing. Resolving the quoted status may fetch (and ingest) it first. `fallback`: the link
 * the content needs when the quote will not be shown (a legacy quote not accepted; quote-fallback.ts).
 */
export async function incomingQuoteStatement(
  r: Resolution,
  note: NormalizedNote,
  author: AccountRow,
  statusId: string,
  depth: number,
): Promise<{ stmt: Statement; fallback: QuoteFallback | null } | null> {
  const q = note.quote;
  if (!q) return null;
  const { db } = r;
  let quoted: StatusRow | null = null;
  if (q.uri && q.uri !== note.id) {
    quoted = depth < MAX_REPLY_DEPTH ? await r.resolveStatus(r, q.uri, depth + 1) : await statusByUri(db, q.uri);
    if (quoted?.reblogOfId) quoted = null;
  }
  let state: "pending" | "accepted" = "pending";
  const quotedLocal = !!quoted?.local;
  if (quoted && quoted.accountId === author.id) state = "accepted";
  else if (quoted && !quotedLocal && q.authorization) {
    const quotedAuthorUri = await accountUri(db, quoted.accountId);
    if (quotedAuthorUri && (await verifyAuthorization(r, q.authorization, note.id, quoted.uri, quotedAuthorUri))) state = "accepted";
  }
  const now = Date.now();
  // Wrapped: a drizzle statement is thenable, and an async function would run it instead of returning it.
  const stmt = quoteRowStatement(db, {
    id: snowflake(now),
    statusId,
    accountId: author.id,
    quotedStatusId: quoted?.id ?? null,
    quotedAccountId: quoted?.accountId ?? null,
    state,
    // A quote of a local status is authorised by our own stamp, whose id is made from the row (approvalUriFor).
    approvalUri: quotedLocal ? null : q.authorization,
    activityUri: null,
    legacy: q.legacy,
    createdAt: now,
    updatedAt: now,
  });
  return { stmt, fallback: quoteFallbackFor({ legacy: q.legacy, state, uri: q.uri }, quoted) };
}

/**
 * Update{Note} of a quoting status whose quote is still pending: the author may now carry the quoted author's stamp
 * (Mastodon re-verifies the quote on every update). Accepts it when the stamp checks out.
 */
export async function refreshIncomingQuote(r: Resolution, status: StatusRow, note: NormalizedNote): Promise<void> {
  const auth = note.quote?.authorization;
  if (!auth) return;
  const { db } = r;
  // The quote, its quoted status and that status's author in one read.
  const rows = await db.all<{ id: string; state: string; uri: string | null; local: number | null; author_uri: string | null }>(
    sql`SELECT q.id, q.state, s.uri, s.local, a.uri AS author_uri FROM quotes q
      LEFT JOIN statuses s ON s.id = q.quoted_status_id LEFT JOIN accounts a ON a.id = s.account_id
      WHERE q.status_id = ${padId(status.id)} LIMIT 1`,
  );
  const q = rows[0];
  if (!q?.uri || q.state !== "pending" || q.local) return;
  if (!q.author_uri || !(await verifyAuthorization(r, auth, status.uri, q.uri, q.author_uri))) return;
  await setQuoteState(db, unpadId(q.id), { state: "accepted", approvalUri: auth }, "pending");
  r.fx.add({ type: "status_updated", statusId: status.id });
}
