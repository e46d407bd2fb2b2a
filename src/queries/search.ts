// Search without a full-text index (Mastodon's behaviour when Elasticsearch is off): accounts by username or
// display-name prefix and by exact acct or URL; statuses only among those the viewer wrote, favourited,
// bookmarked or was mentioned in, plus exact URL/URI lookups; hashtags by name prefix. Everything honours blocks,
// mutes and domain blocks (spec: search follows blocking and muting rules). User text only ever reaches SQL as a
// bound LIKE pattern with its wildcards escaped, capped at 50 bytes (security A16, A17). Nothing is fetched from
// other servers here (security D9): resolving remote accounts and statuses belongs to federation.
import { and, asc, desc, eq, isNull, or, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { likeSql, likeText } from "../db/like";
import { accounts, bookmarks, favourites, follows, mentions, statuses } from "../db/schema/index";
import type { Config } from "../env";
import { padId, parseId } from "../lib/ids";
import type { AccountRow } from "../db/schema";
import { hiddenAuthorFor, statusReadableBy } from "../services/visibility";

const like = likeSql;

export type AccountQuery = { kind: "acct"; username: string; domain: string | null } | { kind: "url"; url: string } | { kind: "text"; text: string };

/** What a query names: an exact account (`@user@domain`, `user@domain`), a URL, or free text. */
export function readAccountQuery(cfg: Config, q: string): AccountQuery {
  const t = q.trim();
  if (/^https?:\/\//i.test(t)) return { kind: "url", url: t };
  const m = /^@?([A-Za-z0-9_]+)@([A-Za-z0-9.-]+(?::\d+)?)$/.exec(t);
  if (m) {
    const domain = m[2].toLowerCase() === cfg.domain.toLowerCase() ? null : m[2].toLowerCase();
    return { kind: "acct", username: m[1], domain };
  }
  return { kind: "text", text: t.replace(/^@/, "") };
}

/** A local profile or actor URL → username. */
function localUsernameFromUrl(cfg: Config, url: string): string | null {
  try {
    const u = new URL(url);
    if (u.host.toLowerCase() !== cfg.domain.toLowerCase()) return null;
    const m = /^\/(?:users\/|@)([A-Za-z0-9_]+)\/?$/.exec(u.pathname);
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

/** A local status URL (/@user/ID or /users/user/statuses/ID) → status id. */
function localStatusIdFromUrl(cfg: Config, url: string): string | null {
  try {
    const u = new URL(url);
    if (u.host.toLowerCase() !== cfg.domain.toLowerCase()) return null;
    const m = /^\/(?:@[A-Za-z0-9_]+|users\/[A-Za-z0-9_]+\/statuses)\/(\d+)\/?$/.exec(u.pathname);
    return m ? parseId(m[1]) : null;
  } catch {
    return null;
  }
}

export interface SearchOptions {
  viewerId: string | null;
  limit: number;
  offset: number;
  following: boolean;
  accountId: string | null;
}

export async function searchAccounts(db: DB, cfg: Config, q: string, o: SearchOptions): Promise<AccountRow[]> {
  const aq = readAccountQuery(cfg, q);
  const conds: SQL[] = [sql`${accounts.suspendedAt} IS NULL`];
  // No constant ORDER BY terms: SQLite reads an integer literal there as a column number.
  const order: SQL[] = [];
  if (aq.kind === "acct") {
    conds.push(sql`lower(${accounts.username}) = ${aq.username.toLowerCase()}`);
    conds.push(aq.domain ? sql`lower(${accounts.domain}) = ${aq.domain}` : sql`${accounts.domain} IS NULL`);
  } else if (aq.kind === "url") {
    const local = localUsernameFromUrl(cfg, aq.url);
    if (local) conds.push(sql`lower(${accounts.username}) = ${local.toLowerCase()} AND ${accounts.domain} IS NULL`);
    else conds.push(sql`(${accounts.uri} = ${aq.url} OR ${accounts.url} = ${aq.url})`);
  } else {
    // Prefix of the username, or of the display name or any word in it; `user@partial.dom` is a username prefix.
    const raw = aq.text.split("@")[0];
    if (!raw) return [];
    const p = likeText(raw.toLowerCase(), 3);
    conds.push(
      sql`(${like(sql`lower(${accounts.username})`, `${p}%`)} OR ${like(sql`lower(${accounts.displayName})`, `${p}%`)} OR ${like(sql`lower(${accounts.displayName})`, `% ${p}%`)})`,
    );
    order.push(sql`(lower(${accounts.username}) = ${raw.toLowerCase()}) DESC`);
  }
  const v = o.viewerId;
  if (v) {
    const pv = padId(v);
    conds.push(sql`NOT ${hiddenAuthorFor(v, sql`${accounts.id}`)}`);
    const followed = sql`EXISTS (SELECT 1 FROM ${follows} WHERE ${follows.accountId} = ${pv} AND ${follows.targetAccountId} = ${accounts.id})`;
    if (o.following) conds.push(followed);
    else order.push(sql`${followed} DESC`);
  } else if (o.following) return [];
  return db
    .select()
    .from(accounts)
    .where(and(...conds))
    .orderBy(...order, sql`${accounts.domain} IS NOT NULL`, desc(accounts.followersCount), asc(accounts.id))
    .limit(o.limit)
    .offset(o.offset);
}

/** Status ids matching q, newest first. Signed-out visitors get none (Mastodon requires a login for this). */
export async function searchStatusIds(db: DB, cfg: Config, q: string, o: SearchOptions): Promise<string[]> {
  const v = o.viewerId;
  if (!v) return [];
  const pv = padId(v);
  const t = q.trim();
  const conds: SQL[] = [statusReadableBy(v), isNull(statuses.reblogOfId)];
  if (/^https?:\/\//i.test(t)) {
    const localId = localStatusIdFromUrl(cfg, t);
    conds.push(localId ? eq(statuses.id, localId) : or(eq(statuses.uri, t), eq(statuses.url, t))!);
  } else {
    if (!t) return [];
    const p = `%${likeText(t, 2)}%`;
    conds.push(sql`(${like(sql`${statuses.text}`, p)} OR ${like(sql`${statuses.content}`, p)} OR ${like(sql`${statuses.spoilerText}`, p)})`);
    conds.push(sql`(${statuses.accountId} = ${pv} OR ${statuses.id} IN (
      SELECT ${favourites.statusId} FROM ${favourites} WHERE ${favourites.accountId} = ${pv}
      UNION SELECT ${bookmarks.statusId} FROM ${bookmarks} WHERE ${bookmarks.accountId} = ${pv}
      UNION SELECT ${mentions.statusId} FROM ${mentions} WHERE ${mentions.accountId} = ${pv}))`);
  }
  conds.push(sql`(${statuses.accountId} = ${pv} OR NOT ${hiddenAuthorFor(v, statuses.accountId)})`);
  if (o.accountId) conds.push(eq(statuses.accountId, o.accountId));
  const rows = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(...conds))
    .orderBy(desc(statuses.id))
    .limit(o.limit)
    .offset(o.offset);
  return rows.map((r) => r.id);
}

export type DirectoryOrder = "active" | "new";

/** The profile directory: discoverable, unsuspended accounts, minus those the viewer hides or is blocked by. */
export async function directory(
  db: DB,
  o: { viewerId: string | null; order: DirectoryOrder; local: boolean; limit: number; offset: number },
): Promise<AccountRow[]> {
  const conds: SQL[] = [
    eq(accounts.discoverable, true),
    isNull(accounts.suspendedAt),
    isNull(accounts.silencedAt),
    isNull(accounts.movedToAccountId),
    eq(accounts.memorial, false),
  ];
  if (o.local) conds.push(isNull(accounts.domain));
  if (o.viewerId) conds.push(sql`NOT ${hiddenAuthorFor(o.viewerId, sql`${accounts.id}`)}`);
  const order =
    o.order === "new" ? [desc(accounts.createdAt), desc(accounts.id)] : [sql`${accounts.lastStatusAt} IS NULL`, desc(accounts.lastStatusAt), desc(accounts.id)];
  return db
    .select()
    .from(accounts)
    .where(and(...conds))
    .orderBy(...order)
    .limit(o.limit)
    .offset(o.offset);
}
