// Finding and refreshing remote accounts: by actor URI, by WebFinger handle, by key id. A fetched actor is trusted
// only at its own id (C10): the document's id must be the URL asked for (or, after a redirect, be re-fetched by its
// id), on the same host. Domain blocks with severity suspend refuse the fetch altogether.
import { featurePolicyFromActor } from "../../policy/feature";
import { type Column, eq, sql, type SQL } from "drizzle-orm";
import { type DB, runBatch } from "../../db/client";
import { frozenSql } from "../../db/frozen";
import { accounts, domainAllows, domainBlocks, instances, signatureSpecs } from "../../db/schema/index";
import type { Config } from "../../env";
import { blockingDomains } from "../../lib/text/domain-name";
import { snowflake } from "../../lib/text/ids";
import type { AccountRow } from "../../db/schema/index";
import { accountEmojisSql, accountShortcodes, upsertRemoteEmojisStatement } from "../../services/statuses/custom-emojis";
import { baseFetchOptions, schemeFor, signedFetchOptions } from "./fetch-options";
import { normalizeActor, sameHost, type NormalizedActor } from "./normalize";
import { primeSpec } from "../signing/rfc9421";
import { fetchActivityJson, FetchRefused, safeFetch } from "../../net/safe-fetch";
import { htmlToText, sanitizeHtml } from "./sanitize";
import { accountRows } from "../../db/table-rows";
import { valueList } from "../../db/id-list";

const STALE_MS = 24 * 3600_000;

export class ResolveError extends Error {}

export type DomainBlockInfo = { severity: "suspend" | "silence" | "noop" | null; rejectMedia: boolean; silencedAt: number | null };

/** The domain_blocks rows for a host or any parent domain (domainBlockFor), as a statement that can join a batch. */
export function domainBlockStatement(db: DB, host: string) {
  // A block names a host without a port (lib/text/domain-name.ts); it covers that host on any port, as withoutSuspended does.
  const candidates = blockingDomains(host);
  return db
    .select({ severity: domainBlocks.severity, rejectMedia: domainBlocks.rejectMedia, createdAt: domainBlocks.createdAt })
    .from(domainBlocks)
    .where(sql`${domainBlocks.domain} IN ${valueList(candidates)}`);
}

/** What domainBlockStatement's rows mean: the strongest severity, reject_media, and a silencing block's created_at. */
export function domainBlockFrom(rows: { severity: string; rejectMedia: boolean; createdAt: number }[]): DomainBlockInfo {
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
 * The instance's domain block for a host or any parent domain: the strongest severity, and reject_media; `silencedAt`
 * is the created_at of a silencing block, which accounts it limits carry (so lifting the block finds them).
 */
export async function domainBlockFor(db: DB, host: string): Promise<DomainBlockInfo> {
  return domainBlockFrom(await domainBlockStatement(db, host));
}

/**
 * Whether this server refuses to federate with `host`: a domain block with severity suspend on it or a parent domain,
 * or, in limited federation mode (LIMITED_FEDERATION), no domain allow for it (Mastodon's DomainAllow: exact host).
 */
export async function isDomainSuspended(db: DB, host: string, mode: Pick<Config, "limitedFederation">): Promise<boolean> {
  if (mode.limitedFederation && !(await isDomainAllowed(db, host))) return true;
  return (await domainBlockFor(db, host)).severity === "suspend";
}

/**
 * isDomainSuspended as ONE statement, so it can join a batch: for a host given as SQL yielding it (a bound string, or
 * a subquery reading an account's domain; no row: not suspended). The same candidates (the host and each parent domain
 * with a dot in it, as domainBlockFor), the same port rule for domain allows (isDomainAllowed). One row, `suspended`:
 * 1 or 0.
 */
export function domainSuspendedStatement(db: DB, host: SQL, mode: Pick<Config, "limitedFederation">) {
  return db.all<{ suspended: number }>(domainSuspendedSql(host, mode.limitedFederation));
}

/**
 * domainSuspendedStatement for a host SQL written with `sql.placeholder`s (`hostSql`), its text built once per isolate
 * and mode (frozen.ts): for the reads every inbox POST makes.
 */
export function frozenDomainSuspended(hostSql: () => SQL) {
  const variants = [frozenSql(() => domainSuspendedSql(hostSql(), false)), frozenSql(() => domainSuspendedSql(hostSql(), true))];
  return (db: DB, mode: Pick<Config, "limitedFederation">, values: Record<string, unknown>) =>
    db.all<{ suspended: number }>(variants[mode.limitedFederation ? 1 : 0]!(db, values));
}

function domainSuspendedSql(host: SQL, limitedFederation: boolean): SQL {
  const notAllowed = limitedFederation
    ? sql`NOT EXISTS (SELECT 1 FROM domain_allows WHERE domain IN (SELECT h FROM host UNION ALL
        SELECT substr(x, 1, length(x) - 1) FROM host, (SELECT rtrim(h, '0123456789') AS x FROM host) WHERE length(x) < length(h) AND substr(x, -1) = ':'))`
    : sql`0`;
  return sql`WITH RECURSIVE host(h) AS (SELECT lower(${host}) WHERE ${host} IS NOT NULL),
    sfx(x) AS (SELECT CASE WHEN rtrim(h, '0123456789') LIKE '%:' AND rtrim(h, '0123456789') <> h
        THEN substr(h, 1, length(rtrim(h, '0123456789')) - 1) ELSE h END FROM host UNION ALL SELECT substr(x, instr(x, '.') + 1) FROM sfx WHERE instr(x, '.') > 0)
    SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM host) THEN 0 WHEN ${notAllowed} THEN 1
      WHEN EXISTS (SELECT 1 FROM domain_blocks WHERE severity = 'suspend'
        AND domain IN (SELECT x FROM sfx WHERE instr(x, '.') > 0 OR x = (SELECT h FROM host))) THEN 1 ELSE 0 END AS suspended`;
}

/** The domain of the account `accountId` names (an id or a subquery), as domainSuspendedStatement's host. */
export const accountDomainSql = (accountId: SQL): SQL => sql`(SELECT domain FROM accounts WHERE id = ${accountId})`;

/** A domain allow names `host` (with or without its port). */
export async function isDomainAllowed(db: DB, host: string): Promise<boolean> {
  const h = host.toLowerCase();
  const names = [...new Set([h, h.replace(/:\d+$/, "")])];
  const rows = await db
    .select({ id: domainAllows.id })
    .from(domainAllows)
    .where(sql`${domainAllows.domain} IN ${valueList(names)}`)
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
export async function upsertRemoteAccount(db: DB, actor: NormalizedActor, knownBlock?: DomainBlockInfo): Promise<AccountRow> {
  const host = new URL(actor.id).host.toLowerCase();
  const now = Date.now();
  // An account first seen on a silenced domain starts silenced (Mastodon applies the block to new accounts too).
  const block = knownBlock ?? (await domainBlockFor(db, host));
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
    featuredCollectionsUrl: actor.featuredCollections,
    featurePolicy: featurePolicyFromActor(actor.canFeature, actor),
    publicKeyPem: actor.publicKey?.publicKeyPem ?? null,
    publicKeyId: actor.publicKey?.id ?? null,
    // Account migration (0027): the actor's other accounts, and where it moved (when that account is known here).
    alsoKnownAs: actor.alsoKnownAs,
    // A domain block with reject_media on the host or a parent domain (0028): its files are never shown.
    rejectMedia: block.rejectMedia,
    movedToAccountId: actor.movedTo ? sql<string>`(SELECT id FROM accounts WHERE uri = ${actor.movedTo})` : null,
    updatedAt: now,
    fetchedAt: now,
  };
  const emojis = upsertRemoteEmojisStatement(db, host, actor.emojis, now);
  // The row is read back in the same batch (after the upsert, in its transaction).
  const res = await runBatch(db, [
    ...(emojis ? [emojis] : []),
    db
      .insert(accounts)
      .values({ id: snowflake(actor.published ?? now), uri: actor.id, createdAt: actor.published ?? now, silencedAt, ...values })
      .onConflictDoUpdate({ target: accounts.uri, set: { ...values, ...picturesAfterUpdate(actor) } }),
    db.insert(instances).values({ domain: host, firstSeenAt: now }).onConflictDoNothing(),
    accountRows(db, { where: eq(accounts.uri, actor.id), limit: 1 }),
  ]);
  const [row] = res[res.length - 1] as AccountRow[];
  if (!row) throw new Error(`account ${actor.id} missing right after its upsert`);
  return row;
}

/**
 * An updated actor's cached pictures (src/services/remote-media/pictures.ts): a copy stays while its URL does; a
 * changed URL drops it (the cache's next run replaces the object) and makes the account due again.
 */
function picturesAfterUpdate(actor: NormalizedActor) {
  const same = (url: string | null | undefined, column: Column) => sql`${column} IS ${url ?? null}`;
  return {
    avatarKey: sql<string | null>`CASE WHEN ${same(actor.icon, accounts.avatarRemoteUrl)} THEN ${accounts.avatarKey} ELSE NULL END`,
    headerKey: sql<string | null>`CASE WHEN ${same(actor.image, accounts.headerRemoteUrl)} THEN ${accounts.headerKey} ELSE NULL END`,
    picturesCachedAt: sql<number | null>`CASE WHEN ${same(actor.icon, accounts.avatarRemoteUrl)} AND ${same(actor.image, accounts.headerRemoteUrl)}
      THEN ${accounts.picturesCachedAt} ELSE NULL END`,
  };
}

/** The account for an actor URI, fetched when unknown or stale (or when `refresh`). */
/** What resolveActor would read first, read by the caller in a batch of its own (actorLookupStatements). */
export interface ActorLookup {
  known: AccountRow | null;
  suspended: boolean;
  block: DomainBlockInfo;
}

/**
 * resolveActor's reads for `uri` as statements: the stored account, its host's suspension and domain block, and the
 * signature spec remembered for the host (the fetch signs with it: primed into rfc9421's isolate cache, not re-read).
 */
export function actorLookupStatements(db: DB, cfg: Config, uri: string) {
  const host = new URL(uri).host;
  return [
    accountRows(db, { where: eq(accounts.uri, uri), limit: 1 }),
    domainSuspendedStatement(db, sql`${host}`, cfg),
    domainBlockStatement(db, host),
    db.select({ host: signatureSpecs.host, spec: signatureSpecs.spec }).from(signatureSpecs).where(eq(signatureSpecs.host, host)).limit(1),
  ] as const;
}

export function actorLookupFrom(res: readonly unknown[], uri: string): ActorLookup {
  const [known, suspended, block, spec] = res as [AccountRow[], { suspended: number }[], Parameters<typeof domainBlockFrom>[0], { spec: string }[]];
  primeSpec(new URL(uri).host, spec[0]?.spec);
  return { known: known[0] ?? null, suspended: !!suspended[0]?.suspended, block: domainBlockFrom(block) };
}

/** The account for an actor URI, fetched when unknown or stale (or when `refresh`). `pre`: its reads, done already. */
export async function resolveActor(db: DB, cfg: Config, uri: string, opts: { refresh?: boolean; pre?: ActorLookup } = {}): Promise<AccountRow> {
  const pre = opts.pre;
  const known = pre ? pre.known : ((await accountRows(db, { where: eq(accounts.uri, uri), limit: 1 }))[0] ?? null);
  if (known && !known.domain) return known;
  if (known && !opts.refresh && known.fetchedAt && Date.now() - known.fetchedAt < STALE_MS) return known;
  const host = new URL(uri).host;
  if (pre ? pre.suspended : await isDomainSuspended(db, host, cfg)) throw new ResolveError("domain suspended");
  try {
    return await upsertRemoteAccount(db, await fetchActorDoc(db, cfg, uri), pre?.block);
  } catch (e) {
    if (known && !opts.refresh) return known; // serve the cached copy while the origin is unreachable
    throw e instanceof FetchRefused ? new ResolveError(e.reason) : e;
  }
}

/** WebFinger `user@domain` → account (Mastodon's ResolveAccountService). */
export async function resolveHandle(db: DB, cfg: Config, username: string, domain: string): Promise<AccountRow> {
  const [known] = await accountRows(db, {
    where: sql`lower(${accounts.username}) = ${username.toLowerCase()} AND ${accounts.domain} = ${domain.toLowerCase()}`,
    limit: 1,
  });
  if (known?.fetchedAt && Date.now() - known.fetchedAt < STALE_MS) return known;
  if (/[\r\n\s/?#@]/.test(username) || /[\r\n\s/?#@]/.test(domain)) throw new ResolveError("invalid handle");
  if (await isDomainSuspended(db, domain, cfg)) throw new ResolveError("domain suspended");
  const url = `${schemeFor(cfg, domain)}://${domain}/.well-known/webfinger?resource=${encodeURIComponent(`acct:${username}@${domain}`)}`;
  let actorUri: string | null = null;
  try {
    const res = await safeFetch(url, {
      ...baseFetchOptions(cfg), // WebFinger is not signed
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
