// Reads about accounts: lookup, follower/following pages, an account's statuses, familiar followers, the
// viewer's lists holding an account, featured tags. Every list is cut in SQL after visibility filtering.
import { and, asc, desc, eq, inArray, isNull, sql, type AnyColumn, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import type { DB } from "../../db/client";
import { idList } from "../../db/client";
import { accounts, featuredTags, follows, listAccounts, lists, mediaAttachments, statuses, statusPins, statusTags, tags } from "../../db/schema/index";
import type { Config } from "../../env";
import { padId, unpadId } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { normalizeTag } from "../../lib/text/text";
import type { AccountRow } from "../../db/schema";
import { statusReadableBy } from "../../policy/visibility";
import { accountRows } from "../../db/table-rows";
import { quotedStatusIdOf } from "../statuses/quoted";

export interface AccountPageRow {
  cursor: string;
  account: AccountRow;
}

/** A relation table listing accounts for an owner (blocks, follow requests, endorsements ...), paged by its row id. */
export interface AccountRelation {
  table: SQLiteTable;
  id: SQLiteColumn;
  owner: SQLiteColumn;
  account: SQLiteColumn;
}

/** One page of the accounts `ownerId` relates to through `rel`; `extra` narrows the rows (e.g. no suspended). */
export async function accountsByRelation(db: DB, rel: AccountRelation, ownerId: string, page: Page, extra?: SQL): Promise<AccountPageRow[]> {
  const rows = await db
    .select({ cursor: sql`${rel.id}`.mapWith((v: string) => rel.id.mapFromDriverValue(v) as string), account: accounts })
    .from(rel.table)
    .innerJoin(accounts, eq(accounts.id, rel.account))
    .where(and(eq(rel.owner, ownerId), extra, cursorWhere(rel.id, page)))
    .orderBy(cursorOrder(rel.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}

// ---- single accounts ----

export async function getAccount(db: DB, id: string): Promise<AccountRow | null> {
  const rows = await accountRows(db, { where: eq(accounts.id, id), limit: 1 });
  return rows[0] ?? null;
}

/** The local account with this username (compared case-insensitively), suspended or not; null if there is none. */
export async function localAccountByUsername(db: DB, username: string): Promise<AccountRow | null> {
  const rows = await accountRows(db, { where: and(sql`lower(${accounts.username}) = ${username.toLowerCase()}`, isNull(accounts.domain)), limit: 1 });
  return rows[0] ?? null;
}

/** `alice`, `@alice`, `alice@this.domain` → local; `bob@remote.example` → a known remote account. */
export async function lookupAccount(db: DB, cfg: Config, acct: string): Promise<AccountRow | null> {
  const parsed = parseAcct(acct, cfg);
  if (!parsed) return null;
  const rows = await accountRows(db, {
    where: sql`lower(${accounts.username}) = ${parsed.username.toLowerCase()} AND coalesce(${accounts.domain}, '') = ${parsed.domain ?? ""}`,
    limit: 1,
  });
  return rows[0] ?? null;
}

export function parseAcct(raw: string, cfg: Config): { username: string; domain: string | null } | null {
  const s = raw.trim().replace(/^@/, "");
  const m = /^([A-Za-z0-9_.-]{1,64})(?:@([^@\s/]{1,255}))?$/.exec(s);
  if (!m) return null;
  let domain: string | null = m[2]?.toLowerCase() ?? null;
  if (domain && (domain === cfg.domain.toLowerCase() || domain === new URL(cfg.origin).host.toLowerCase())) domain = null;
  return { username: m[1] ?? "", domain }; // the username group always participates
}

/** Accounts by id in the order asked; unknown ids are skipped. */
export async function accountsByIds(db: DB, ids: string[]): Promise<AccountRow[]> {
  if (!ids.length) return [];
  const rows = await accountRows(db, { where: inArray(accounts.id, idList(ids)) });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const seen = new Set<string>();
  const out: AccountRow[] = [];
  for (const id of ids) {
    const r = byId.get(id);
    if (r && !seen.has(id)) {
      seen.add(id);
      out.push(r);
    }
  }
  return out;
}

// ---- follower / following pages ----

/** Accounts the viewer blocks, mutes (unless `keepMuted`) or is blocked by: kept out of account lists. */
export function hiddenFromViewer(viewerId: string | null, col: AnyColumn | SQL, keepMuted = false): SQL | undefined {
  if (!viewerId) return undefined;
  const v = padId(viewerId);
  const blocked = sql`EXISTS (SELECT 1 FROM blocks hb WHERE (hb.account_id = ${v} AND hb.target_account_id = ${col}) OR (hb.account_id = ${col} AND hb.target_account_id = ${v}))`;
  if (keepMuted) return blocked;
  return sql`(${blocked} OR EXISTS (SELECT 1 FROM mutes hm WHERE hm.account_id = ${v} AND hm.target_account_id = ${col} AND (hm.expires_at IS NULL OR hm.expires_at > ${Date.now()})))`;
}

/** Followers (`direction` "followers") or followed accounts of `ownerId`, cursored by follow row id. */
export async function followPage(
  db: DB,
  ownerId: string,
  viewerId: string | null,
  direction: "followers" | "following",
  page: Page,
): Promise<AccountPageRow[]> {
  const ownerCol = direction === "followers" ? follows.targetAccountId : follows.accountId;
  const otherCol = direction === "followers" ? follows.accountId : follows.targetAccountId;
  const hidden = hiddenFromViewer(viewerId, accounts.id, viewerId === ownerId);
  const rows = await db
    .select({ cursor: follows.id, account: accounts })
    .from(follows)
    .innerJoin(accounts, eq(accounts.id, otherCol))
    .where(and(eq(ownerCol, ownerId), isNull(accounts.suspendedAt), hidden ? sql`NOT ${hidden}` : undefined, cursorWhere(follows.id, page)))
    .orderBy(cursorOrder(follows.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}

// ---- an account's statuses ----

export interface AccountStatusFilters {
  pinned?: boolean;
  onlyMedia?: boolean;
  excludeReplies?: boolean;
  excludeReblogs?: boolean;
  tagged?: string;
}

/**
 * The page's ids, and `related`: the statuses its boosts show and the ones it (or what it boosts) quotes, read with
 * the page (renderStatuses' `related`).
 */
export async function accountStatusPage(
  db: DB,
  accountId: string,
  viewerId: string | null,
  f: AccountStatusFilters,
  page: Page,
): Promise<{ ids: string[]; related: string[] }> {
  const conds: (SQL | undefined)[] = [statusReadableBy(viewerId), cursorWhere(statuses.id, page)];
  // Mastodon keeps self-replies (threads) when replies are excluded.
  if (f.excludeReplies) conds.push(sql`(${statuses.inReplyToId} IS NULL OR ${statuses.inReplyToAccountId} = ${padId(accountId)})`);
  if (f.excludeReblogs || f.onlyMedia || f.tagged) conds.push(isNull(statuses.reblogOfId));
  if (f.tagged) {
    const name = normalizeTag(f.tagged);
    if (!name) return { ids: [], related: [] };
    conds.push(
      sql`EXISTS (SELECT 1 FROM ${statusTags} JOIN ${tags} ON ${tags.id} = ${statusTags.tagId} WHERE ${statusTags.statusId} = ${statuses.id} AND ${tags.name} = ${name})`,
    );
  }
  const columns = {
    id: statuses.id,
    rb: statuses.reblogOfId,
    // Qualified by hand: drizzle writes a one-table select's columns bare (quotedStatusIdOf says why that matters).
    qt: sql<string | null>`${quotedStatusIdOf(sql.raw('coalesce("statuses"."reblog_of_id", "statuses"."id")'))}`,
  };
  // The media tab walks the account's attachments by status (media_account_status), newest first, each status by its
  // primary key: its rows follow the page, not the account's statuses without media (a walk of those read every one
  // of them to find a few with media). DISTINCT: a status with four attachments is one entry.
  // Pinned: the account's pins (status_pins_pair), each status by its primary key, most recently pinned first as
  // Mastodon orders them (pinned_statuses: status_pins.created_at DESC; a pin's id is its time). A walk of the
  // account's statuses read every one to find the few pinned (Mastodon's web app asks for them on every profile).
  const rows = f.pinned
    ? await db
        .select(columns)
        .from(statusPins)
        .innerJoin(statuses, eq(statuses.id, statusPins.statusId))
        .where(and(eq(statusPins.accountId, accountId), ...conds))
        .orderBy(desc(statusPins.id))
        .limit(page.limit)
    : f.onlyMedia
      ? await db
          .selectDistinct(columns)
          .from(mediaAttachments)
          .innerJoin(statuses, eq(statuses.id, mediaAttachments.statusId))
          .where(and(eq(mediaAttachments.accountId, accountId), cursorWhere(mediaAttachments.statusId, page), eq(statuses.accountId, accountId), ...conds))
          .orderBy(cursorOrder(mediaAttachments.statusId, page))
          .limit(page.limit)
      : await db
          .select(columns)
          .from(statuses)
          .where(and(eq(statuses.accountId, accountId), ...conds))
          .orderBy(cursorOrder(statuses.id, page))
          .limit(page.limit);
  const related = new Set<string>();
  for (const r of rows) {
    if (r.rb) related.add(r.rb);
    if (r.qt) related.add(unpadId(String(r.qt)));
  }
  return { ids: (f.pinned ? rows : inPageOrder(rows, page)).map((r) => r.id), related: [...related] };
}

// ---- familiar followers, lists, featured tags ----

/**
 * For each target: the accounts the viewer follows who follow the target, i.e. the accounts that both the viewer's
 * following list and the target's follower list would show this viewer, under the same rules as those lists:
 * - none when the target's follower list is hidden from the viewer (target suspended, target hides its collections
 *   from others, target blocks the viewer), as Mastodon's FamiliarFollowersPresenter does for hide_followers;
 * - never an account that hides its own collections (its following list would not show the target: Mastodon rejects
 *   `hide_following?` accounts), is suspended, blocks or is blocked by the viewer, or is muted by the viewer.
 */
export async function familiarFollowers(db: DB, viewerId: string, targetIds: string[]): Promise<Map<string, AccountRow[]>> {
  const out = new Map<string, AccountRow[]>();
  if (!targetIds.length) return out;
  const v = padId(viewerId);
  const hidden = hiddenFromViewer(viewerId, accounts.id);
  const rows = await db
    .select({ target: sql<string>`f2.target_account_id`, account: accounts })
    .from(follows)
    .innerJoin(sql`follows f2`, sql`f2.account_id = ${follows.targetAccountId}`)
    .innerJoin(accounts, eq(accounts.id, follows.targetAccountId))
    .where(
      and(
        eq(follows.accountId, viewerId),
        sql`f2.target_account_id IN ${idList(targetIds)}`,
        isNull(accounts.suspendedAt),
        sql`coalesce(${accounts.hideCollections}, 0) = 0`,
        hidden ? sql`NOT ${hidden}` : undefined,
        sql`NOT EXISTS (SELECT 1 FROM accounts ft WHERE ft.id = f2.target_account_id
          AND (ft.suspended_at IS NOT NULL OR (coalesce(ft.hide_collections, 0) <> 0 AND ft.id <> ${v})))`,
        sql`NOT EXISTS (SELECT 1 FROM blocks fb WHERE fb.account_id = f2.target_account_id AND fb.target_account_id = ${v})`,
      ),
    )
    .orderBy(desc(follows.id))
    .limit(40 * 40);
  for (const r of rows) {
    const t = unpadId(String(r.target));
    const list = out.get(t) ?? [];
    list.push(r.account);
    out.set(t, list);
  }
  return out;
}

export async function listsContaining(db: DB, viewerId: string, accountId: string) {
  return db
    .select({ id: lists.id, title: lists.title, repliesPolicy: lists.repliesPolicy, exclusive: lists.exclusive })
    .from(lists)
    .where(
      and(
        eq(lists.accountId, viewerId),
        sql`EXISTS (SELECT 1 FROM ${listAccounts} WHERE ${listAccounts.listId} = ${lists.id} AND ${listAccounts.accountId} = ${padId(accountId)})`,
      ),
    )
    .orderBy(asc(lists.id));
}

export async function featuredTagsOf(db: DB, accountId: string) {
  const acc = padId(accountId);
  return db
    .select({
      id: featuredTags.id,
      name: tags.displayName,
      tagName: tags.name,
      statusesCount: sql<number>`(SELECT count(*) FROM ${statusTags} JOIN ${statuses} ON ${statuses.id} = ${statusTags.statusId}
        WHERE ${statusTags.tagId} = ${tags.id} AND ${statuses.accountId} = ${acc} AND ${statuses.visibility} IN ('public','unlisted'))`,
      lastStatusAt: sql<number | null>`(SELECT max(${statuses.createdAt}) FROM ${statusTags} JOIN ${statuses} ON ${statuses.id} = ${statusTags.statusId}
        WHERE ${statusTags.tagId} = ${tags.id} AND ${statuses.accountId} = ${acc} AND ${statuses.visibility} IN ('public','unlisted'))`,
    })
    .from(featuredTags)
    .innerJoin(tags, eq(tags.id, featuredTags.tagId))
    .where(eq(featuredTags.accountId, accountId))
    .orderBy(asc(featuredTags.id));
}

/**
 * How many accounts of `domain` the account follows and is followed by (Mastodon 4.4's domain block preview): the
 * account's follows and the domain's accounts, each through its index.
 */
export async function domainRelationCounts(db: DB, accountId: string, domain: string): Promise<{ following: number; followers: number }> {
  const a = padId(accountId);
  const [following, followers] = await db.batch([
    db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM follows f JOIN accounts t ON t.id = f.target_account_id WHERE f.account_id = ${a} AND t.domain = ${domain}`,
    ),
    db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM accounts s JOIN follows f ON f.account_id = s.id AND f.target_account_id = ${a} WHERE s.domain = ${domain}`,
    ),
  ]);
  return { following: Number(following[0]?.n ?? 0), followers: Number(followers[0]?.n ?? 0) };
}
