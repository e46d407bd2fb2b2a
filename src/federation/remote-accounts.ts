// Finding and refreshing remote accounts: by actor URI, by WebFinger handle, by key id. A fetched actor is trusted
// only at its own id (C10): the document's id must be the URL asked for (or, after a redirect, be re-fetched by its
// id), on the same host. Domain blocks with severity suspend refuse the fetch altogether.
import { eq, sql } from "drizzle-orm";
import { type DB, runBatch } from "../db/client";
import { accounts, domainAllows, domainBlocks, instances } from "../db/schema";
import type { Config } from "../env";
import { snowflake } from "../lib/ids";
import type { AccountRow } from "../db/schema";
import { accountEmojisSql, accountShortcodes, upsertRemoteEmojisStatement } from "../services/custom-emojis";
import { schemeFor, signedFetchOptions } from "./fetch-options";
import { normalizeActor, sameHost, type NormalizedActor } from "./normalize";
import { fetchActivityJson, FetchRefused, safeFetch } from "./safe-fetch";
import { htmlToText, sanitizeHtml } from "./sanitize";

const STALE_MS = 24 * 3600_000;

export class ResolveError extends Error {}

/**
 * The instance's domain block for a host or any parent domain: the strongest severity, and reject_media; `silencedAt`
 * is the created_at of a silencing block, which accounts it limits carry (so lifting the block finds them).
 */
export async function domainBlockFor(
  db: DB,
  host: string,
): Promise<{ severity: "suspend" | "silence" | "noop" | null; rejectMedia: boolean; silencedAt: number | null }> {
  const d = host.toLowerCase();
  const parts = d.split(".");
  const candidates = parts.map((_, i) => parts.slice(i).join(".")).filter((x) => x.includes("."));
  if (!candidates.includes(d)) candidates.unshift(d);
  const rows = await db
    .select({ severity: domainBlocks.severity, rejectMedia: domainBlocks.rejectMedia, createdAt: domainBlocks.createdAt })
    .from(domainBlocks)
    .where(sql`${domainBlocks.domain} IN (SELECT value FROM json_each(${JSON.stringify(candidates)}))`);
  const severity = rows.some((r) => r.severity === "suspend")
    ? "suspend"
    : rows.some((r) => r.severity === "silence")
      ? "silence"
      : rows.length
        ? "noop"
        : null;
  const silencedAt = rows.find((r) => r.severity === "silence")?.createdAt ?? null;
  return { severity, rejectMedia: rows.some((r) => r.rejectMedia), silencedAt };
}

/**
 * Whether this server refuses to federate with `host`: a domain block with severity suspend on it or a parent domain,
 * or, in limited federation mode (LIMITED_FEDERATION), no domain allow for it (Mastodon's DomainAllow: exact host).
 */
export async function isDomainSuspended(db: DB, host: string, mode: Pick<Config, "limitedFederation">): Promise<boolean> {
  if (mode.limitedFederation && !(await isDomainAllowed(db, host))) return true;
  return (await domainBlockFor(db, host)).severity === "suspend";
}

/** A domain allow names `host` (with or without its port). */
export async function isDomainAllowed(db: DB, host: string): Promise<boolean> {
  const h = host.toLowerCase();
  const names = [...new Set([h, h.replace(/:\d+$/, "")])];
  const rows = await db
    .select({ id: domainAllows.id })
    .from(domainAllows)
    .where(sql`${domainAllows.domain} IN (SELECT value FROM json_each(${JSON.stringify(names)}))`)
    .limit(1);
  return rows.length > 0;
}

async function fetchActorDoc(db: DB, cfg: Config, uri: string): Promise<NormalizedActor> {
  const opts = await signedFetchOptions(db, cfg);
  let { json } = await fetchActivityJson(uri, opts);
  let actor = normalizeActor(json);
  if (actor && actor.id !== uri) {
    // Trust a document only at its own id: fetch again from there, on the same host.
    if (!sameHost(actor.id, uri)) throw new ResolveError("actor id on another host");
    ({ json } = await fetchActivityJson(actor.id, opts));
    actor = normalizeActor(json);
    if (!actor || !sameHost(actor.id, uri)) throw new ResolveError("actor id mismatch");
  }
  if (!actor) throw new ResolveError("not an actor");
  if (actor.publicKey && (actor.publicKey.owner !== actor.id || !sameHost(actor.publicKey.id, actor.id))) {
    throw new ResolveError("key owner mismatch");
  }
  return actor;
}

/** Inserts or updates a remote account from a normalised actor; returns the row. */
export async function upsertRemoteAccount(db: DB, actor: NormalizedActor): Promise<AccountRow> {
  const host = new URL(actor.id).host.toLowerCase();
  const now = Date.now();
  // An account first seen on a silenced domain starts silenced (Mastodon applies the block to new accounts too).
  const block = await domainBlockFor(db, host);
  const silencedAt = block.severity === "silence" ? block.silencedAt : null;
  const note = await sanitizeHtml(actor.summary);
  const fields = await Promise.all(actor.fields.map(async (f) => ({ name: await htmlToText(f.name), value: await sanitizeHtml(f.value), verified_at: null })));
  const displayName = (await htmlToText(actor.name)).slice(0, 100);
  const values = {
    username: actor.preferredUsername,
    domain: host,
    displayName,
    note,
    fields,
    // The actor's Emoji tags are stored first in the batch below; this picks those its texts use.
    emojis: accountEmojisSql(accountShortcodes(displayName, note, fields), host),
    avatarRemoteUrl: actor.icon,
    headerRemoteUrl: actor.image,
    actorType: actor.type,
    locked: actor.manuallyApprovesFollowers,
    discoverable: actor.discoverable,
    indexable: actor.indexable,
    memorial: actor.memorial,
    url: actor.url,
    inboxUrl: actor.inbox,
    sharedInboxUrl: actor.sharedInbox,
    outboxUrl: actor.outbox,
    followersUrl: actor.followers,
    followingUrl: actor.following,
    featuredUrl: actor.featured,
    featuredTagsUrl: actor.featuredTags,
    publicKeyPem: actor.publicKey?.publicKeyPem ?? null,
    publicKeyId: actor.publicKey?.id ?? null,
    updatedAt: now,
    fetchedAt: now,
  };
  const emojis = upsertRemoteEmojisStatement(db, host, actor.emojis, now);
  await runBatch(db, [
    ...(emojis ? [emojis] : []),
    db
      .insert(accounts)
      .values({ id: snowflake(actor.published ?? now), uri: actor.id, createdAt: actor.published ?? now, silencedAt, ...values })
      .onConflictDoUpdate({ target: accounts.uri, set: values }),
    db.insert(instances).values({ domain: host, firstSeenAt: now }).onConflictDoNothing(),
  ]);
  const [row] = await db.select().from(accounts).where(eq(accounts.uri, actor.id)).limit(1);
  if (!row) throw new Error(`account ${actor.id} missing right after its upsert`);
  return row;
}

/** The account for an actor URI, fetched when unknown or stale (or when `refresh`). */
export async function resolveActor(db: DB, cfg: Config, uri: string, opts: { refresh?: boolean } = {}): Promise<AccountRow> {
  const [known] = await db.select().from(accounts).where(eq(accounts.uri, uri)).limit(1);
  if (known && !known.domain) return known;
  if (known && !opts.refresh && known.fetchedAt && Date.now() - known.fetchedAt < STALE_MS) return known;
  const host = new URL(uri).host;
  if (await isDomainSuspended(db, host, cfg)) throw new ResolveError("domain suspended");
  try {
    return await upsertRemoteAccount(db, await fetchActorDoc(db, cfg, uri));
  } catch (e) {
    if (known && !opts.refresh) return known; // serve the cached copy while the origin is unreachable
    throw e instanceof FetchRefused ? new ResolveError(e.reason) : e;
  }
}

/** WebFinger `user@domain` → account (Mastodon's ResolveAccountService). */
export async function resolveHandle(db: DB, cfg: Config, username: string, domain: string): Promise<AccountRow> {
  const [known] = await db
    .select()
    .from(accounts)
    .where(sql`lower(${accounts.username}) = ${username.toLowerCase()} AND ${accounts.domain} = ${domain.toLowerCase()}`)
    .limit(1);
  if (known?.fetchedAt && Date.now() - known.fetchedAt < STALE_MS) return known;
  if (/[\r\n\s/?#@]/.test(username) || /[\r\n\s/?#@]/.test(domain)) throw new ResolveError("invalid handle");
  if (await isDomainSuspended(db, domain, cfg)) throw new ResolveError("domain suspended");
  const url = `${schemeFor(cfg, domain)}://${domain}/.well-known/webfinger?resource=${encodeURIComponent(`acct:${username}@${domain}`)}`;
  let actorUri: string | null = null;
  try {
    const res = await safeFetch(url, {
      ...(await signedFetchOptions(db, cfg)),
      sign: undefined,
      headers: { accept: "application/jrd+json, application/json" },
    });
    if (res.status !== 200) throw new ResolveError(`webfinger status ${res.status}`);
    const jrd = JSON.parse(res.text()) as { links?: { rel?: string; type?: string; href?: string }[] };
    const self = (jrd.links ?? []).find((l) => l.rel === "self" && typeof l.href === "string" && /application\/(activity\+json|ld\+json)/.test(l.type ?? ""));
    actorUri = self?.href ?? null;
  } catch (e) {
    if (known) return known;
    if (e instanceof ResolveError) throw e;
    throw new ResolveError(e instanceof FetchRefused ? e.reason : "webfinger failed");
  }
  if (!actorUri) {
    // No ActivityPub actor: an account of the older federation protocol (spec: following it is an error).
    throw new ResolveError("no ActivityPub actor for this account");
  }
  const account = await resolveActor(db, cfg, actorUri, { refresh: true });
  if (account.username.toLowerCase() !== username.toLowerCase()) {
    throw new ResolveError("handle does not match the actor");
  }
  return account;
}
