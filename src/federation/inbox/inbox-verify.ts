// Inbound POST verification (security §2.7, rows C1–C9, C19, C21): size, signature syntax and window, digest, the
// key and its owner, the owner being the activity's actor, and the signer's domain not suspended. Everything here
// happens before the 202; the activity itself is processed off the request path.
import { utf8 } from "../../lib/security/crypto";
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { frozenSelect } from "../../db/frozen";
import { accounts } from "../../db/schema/index";
import type { Config } from "../../env";
import { ApiError } from "../../lib/http/errors";
import { parseJsonText, readBodyText } from "../../lib/http/params";
import type { AccountRow } from "../../db/schema/index";
import { normalizeActivity, sameHost, type NormalizedActivity } from "../remote/normalize";
import { accountDomainSql, actorLookupFrom, actorLookupStatements, frozenDomainSuspended, resolveActor, type ActorLookup } from "../remote/remote-accounts";
import { checkSignedRequest, noteSignatureSpec, parseRequestSignature, SignatureError, verifyWithKey, type ParsedSignature } from "../signing/signatures";

export const MAX_INBOX_BODY = 1024 * 1024;
/** C25: verified POSTs per remote host and window (senders retry 429, so a flood queues up on their side). */
export const INBOX_HOST_LIMIT = { limit: 6000, periodSeconds: 300 } as const;
/** A host's first POSTs of a window in one isolate, counted there only (enforceRateLimitCountedHere): < 1% of the budget. */
export const INBOX_HOST_FREE = 50;

export interface VerifiedInbox {
  signer: AccountRow;
  activity: NormalizedActivity;
  body: string;
  json: Record<string, unknown>;
}

const unauthorized = (msg: string) => new ApiError(401, msg);
/**
 * The one answer for a signature that does not verify, whatever the reason behind it: the key could not be fetched
 * (unreachable host, refused address, HTML, timeout ...), its owner does not confirm it, or the bytes do not verify.
 * Echoing the fetch error would let any caller probe what the server can reach (its network, its timing of hosts).
 */
const invalidSignature = () => unauthorized("Verification failed");

/** Thrown for activities answered 202 without verification or processing (see unknownActorSelfActivity). */
export class AcceptWithoutProcessing extends Error {}

/**
 * C20 (Mastodon's skip_unknown_actor_activity): a Delete or Update of an actor by itself, for an actor we never
 * stored, concerns nothing here; answering 202 without fetching its key keeps a deleted account's server from being
 * hammered by every instance it ever federated with.
 */
async function unknownActorSelfActivity(db: DB, body: string): Promise<boolean> {
  if (!/"(Delete|Update)"/.test(body)) return false;
  let json: unknown;
  try {
    json = parseJsonText(body, 64);
  } catch {
    return false;
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) return false;
  const a = normalizeActivity(json);
  if (!a || (a.type !== "Delete" && a.type !== "Update") || a.objectId !== a.actor) return false;
  const [known] = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.uri, a.actor)).limit(1);
  return !known;
}

/**
 * The key's owner and whether its domain is suspended: ONE batch when the key is stored (the account holding it and
 * its domain's suspension). Otherwise (or on `refresh`) resolveActor's first reads (the actor by uri, its host's
 * suspension and domain block) go in one more batch, then the fetch and one write batch.
 */
// Every inbox POST reads its key's owner and whether the owner's domain is suspended: both statements built once.
const ownerByKey = frozenSelect((db) =>
  db
    .select()
    .from(accounts)
    .where(eq(accounts.publicKeyId, sql.placeholder("keyId")))
    .limit(1),
);
const ownerSuspendedByKey = frozenDomainSuspended(() =>
  accountDomainSql(sql`(SELECT id FROM accounts WHERE public_key_id = ${sql.placeholder("keyId")} LIMIT 1)`),
);

async function keyOwner(db: DB, cfg: Config, keyId: string, refresh: boolean): Promise<{ owner: AccountRow; suspended: boolean }> {
  if (!refresh) {
    const [[cached], [domain]] = await db.batch([ownerByKey(db, { keyId }), ownerSuspendedByKey(db, cfg, { keyId })]);
    if (cached?.publicKeyPem) return { owner: cached, suspended: !!domain?.suspended };
  }
  // Mastodon's key ids are `<actor>#main-key`; others serve the key at its own URL with an `owner`. Either way the
  // owner actor must list this exact key id (C9).
  const actorUri = keyId.split("#")[0] ?? ""; // split yields at least one element
  let owner: AccountRow;
  let pre: ActorLookup;
  try {
    pre = actorLookupFrom(await db.batch([...actorLookupStatements(db, cfg, actorUri)]), actorUri);
    owner = await resolveActor(db, cfg, actorUri, { refresh: true, pre });
  } catch {
    throw invalidSignature();
  }
  if (owner.publicKeyId !== keyId || !owner.publicKeyPem) throw invalidSignature();
  // resolveActor went on only for a host not suspended (the owner's domain is the host of the uri it was asked for).
  return { owner, suspended: pre.suspended };
}

export async function verifyInboxRequest(db: DB, cfg: Config, req: Request): Promise<VerifiedInbox> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > MAX_INBOX_BODY) throw new ApiError(413, "Payload too large");
  let sig: ParsedSignature;
  try {
    sig = parseRequestSignature(req.headers); // draft-cavage, or RFC 9421 when Signature-Input is there
  } catch (e) {
    throw unauthorized((e as Error).message);
  }
  const body = await readBodyText(req, MAX_INBOX_BODY);
  if (await unknownActorSelfActivity(db, body)) throw new AcceptWithoutProcessing();
  const u = new URL(req.url);
  let strings: string[];
  try {
    strings = await checkSignedRequest({ method: req.method, target: u.pathname + u.search, url: req.url, headers: req.headers, body: utf8(body) }, sig);
  } catch (e) {
    if (e instanceof SignatureError) throw unauthorized(e.message);
    throw e;
  }
  let found = await keyOwner(db, cfg, sig.keyId, false);
  let ok = await verifyWithKey(strings, sig, found.owner.publicKeyPem!);
  if (!ok && found.owner.domain) {
    // Keys rotate: refetch once (Mastodon does so for accounts it considers possibly stale).
    found = await keyOwner(db, cfg, sig.keyId, true);
    ok = await verifyWithKey(strings, sig, found.owner.publicKeyPem!);
  }
  const signer = found.owner;
  if (!ok) throw invalidSignature();
  if (!signer.domain) throw unauthorized("Local keys do not sign inbound requests");
  if (found.suspended) throw new ApiError(403, "Request from disallowed domain");

  let json: unknown;
  try {
    json = parseJsonText(body, 64);
  } catch {
    throw new ApiError(400, "Invalid JSON");
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) throw new ApiError(400, "Activity must be a JSON object");
  const activity = normalizeActivity(json);
  if (!activity) throw new ApiError(400, "Not an activity");
  // The signer is the author (C8): the activity's actor must be the key's owner.
  if (activity.actor !== signer.uri) throw unauthorized("Signature does not match the activity's actor");
  if (activity.id && !sameHost(activity.id, signer.uri)) throw unauthorized("Activity id is not on the actor's host");
  await noteSignatureSpec(db, sig); // a host that signs with RFC 9421 gets our deliveries signed so (rfc9421.ts)
  return { signer, activity, body, json: json as Record<string, unknown> };
}
