// Read side of collections (src/services/relationships/collections.ts writes them): an account's collections, the
// collections an account is featured in, one collection, and what rendering a page of them needs, in one batch.
import { and, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type CollectionItemRow, type CollectionRow, collectionItems, collections } from "../../db/schema";
import { padId, unpadId } from "../../lib/text/ids";
import type { OffsetPage } from "../../lib/http/pagination";

export async function collectionById(db: DB, id: string): Promise<CollectionRow | null> {
  const [row] = await db.select().from(collections).where(eq(collections.id, id)).limit(1);
  return row ?? null;
}

export async function collectionsByIds(db: DB, ids: string[]): Promise<CollectionRow[]> {
  return ids.length ? db.select().from(collections).where(inArray(collections.id, ids)) : [];
}

/** Whether `ownerId` blocks the viewer or the viewer's domain (Mastodon hides a collection from them). */
export async function ownerBlocksViewer(db: DB, ownerId: string, viewerId: string | null): Promise<boolean> {
  if (!viewerId) return false;
  const rows = await db.all(sql`SELECT 1 FROM blocks WHERE account_id = ${padId(ownerId)} AND target_account_id = ${padId(viewerId)}
    UNION ALL SELECT 1 FROM account_domain_blocks d JOIN accounts v ON v.id = ${padId(viewerId)}
      WHERE d.account_id = ${padId(ownerId)} AND d.domain = v.domain LIMIT 1`);
  return rows.length > 0;
}

/** An account's collections, newest first; discoverable ones only unless the viewer is the owner. */
export async function accountCollections(db: DB, accountId: string, own: boolean, page: OffsetPage): Promise<CollectionRow[]> {
  const t = collections;
  return db
    .select()
    .from(t)
    .where(own ? eq(t.accountId, accountId) : and(eq(t.accountId, accountId), eq(t.discoverable, true)))
    .orderBy(desc(t.id))
    .limit(page.limit)
    .offset(page.offset);
}

/** The collections an account is featured in (accepted items), most recently featured first. */
export async function collectionsFeaturing(db: DB, accountId: string, page: OffsetPage): Promise<CollectionRow[]> {
  const rows = await db
    .select({ c: collections })
    .from(collectionItems)
    .innerJoin(collections, eq(collections.id, collectionItems.collectionId))
    .where(and(eq(collectionItems.accountId, accountId), eq(collectionItems.state, "accepted")))
    .orderBy(desc(collectionItems.id))
    .limit(page.limit)
    .offset(page.offset);
  return rows.map((r) => r.c);
}

/** The items of the collections `ids` (a SQL list or subquery) shown to the viewer, by id. */
function itemsStatement(db: DB, ids: SQL, viewerId: string | null) {
  const v = viewerId ? padId(viewerId) : null;
  return db
    .select()
    .from(collectionItems)
    .where(
      and(
        sql`${collectionItems.collectionId} IN ${ids}`,
        // Accepted items; those waiting for their account's answer to the owner alone (Mastodon's `pending`).
        v
          ? sql`(${collectionItems.state} = 'accepted' OR (${collectionItems.state} = 'pending'
              AND ${collectionItems.collectionId} IN (SELECT id FROM collections WHERE account_id = ${v})))`
          : eq(collectionItems.state, "accepted"),
        // Items of accounts the viewer blocks are left out (Collection#items_for).
        v ? sql`NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = ${v} AND b.target_account_id = ${collectionItems.accountId})` : undefined,
      ),
    )
    .orderBy(collectionItems.id);
}

const tagsStatement = (db: DB, tagIds: SQL) => db.all<{ id: string; name: string }>(sql`SELECT id, display_name AS name FROM tags WHERE id IN ${tagIds}`);

function bundleOf(items: CollectionItemRow[], tags: { id: string; name: string }[]) {
  const byCollection = new Map<string, CollectionItemRow[]>();
  for (const i of items) byCollection.set(i.collectionId, [...(byCollection.get(i.collectionId) ?? []), i]);
  const tagNames = new Map(tags.map((t) => [unpadId(t.id), t.name]));
  return { items: byCollection, tagNames };
}

const jsonIds = (ids: string[]) => sql`(SELECT value FROM json_each(${JSON.stringify(ids.map(padId))}))`;

/** What rendering these collections needs: their items shown to the viewer and their hashtags' names. One batch. */
export async function collectionBundle(db: DB, rows: CollectionRow[], viewerId: string | null) {
  const tagIds = [...new Set(rows.map((r) => r.tagId).filter((x): x is string => !!x))];
  const [items, tags] = await db.batch([itemsStatement(db, jsonIds(rows.map((r) => r.id)), viewerId), tagsStatement(db, jsonIds(tagIds))]);
  return bundleOf(items, tags);
}

/**
 * The collections a set of links names (a status's tagged collections: Mastodon matches a collection's `url`
 * exactly; a remote one by its id too), with what rendering them needs. One batch.
 */
export async function collectionsLinked(db: DB, urls: string[], viewerId: string | null) {
  const list = sql`(SELECT value FROM json_each(${JSON.stringify(urls)}))`;
  const found = sql`(SELECT id FROM collections WHERE url IN ${list} UNION SELECT id FROM collections WHERE uri IN ${list})`;
  const [rows, items, tags] = await db.batch([
    db.select().from(collections).where(sql`${collections.id} IN ${found}`),
    itemsStatement(db, found, viewerId),
    tagsStatement(db, sql`(SELECT tag_id FROM collections WHERE id IN ${found})`),
  ]);
  return { rows, ...bundleOf(items, tags) };
}

/** An item of a collection with what its FeaturedItem names of the featured account. */
export interface CollectionDocItem {
  id: string;
  accountId: string;
  accountUri: string;
  actorType: string | null;
  local: boolean;
  approvalUri: string | null;
  createdAt: number;
}

/**
 * A collection and what its FeaturedCollection names (FeaturedCollectionSerializer): its owner's actor id, its
 * accepted items with their accounts, its hashtag. Two round trips.
 */
export async function collectionDocParts(db: DB, collectionId: string) {
  const [c] = await db.select().from(collections).where(eq(collections.id, collectionId)).limit(1);
  if (!c) return null;
  const [owner, items, tag] = await db.batch([
    db.all<{ uri: string; domain: string | null; suspended_at: number | null }>(
      sql`SELECT uri, domain, suspended_at FROM accounts WHERE id = ${padId(c.accountId)}`,
    ),
    db.all<{ id: string; account_id: string; uri: string; actor_type: string | null; domain: string | null; approval_uri: string | null; created_at: number }>(
      sql`SELECT ci.id, ci.account_id, a.uri, a.actor_type, a.domain, ci.approval_uri, ci.created_at FROM collection_items ci
        JOIN accounts a ON a.id = ci.account_id AND a.suspended_at IS NULL
        WHERE ci.collection_id = ${padId(c.id)} AND ci.state = 'accepted' ORDER BY ci.id`,
    ),
    db.all<{ name: string; display_name: string }>(sql`SELECT name, display_name FROM tags WHERE id = ${c.tagId ? padId(c.tagId) : null}`),
  ]);
  const o = owner[0];
  if (!o) return null;
  return {
    collection: c,
    owner: { uri: o.uri, local: !o.domain, suspended: o.suspended_at !== null },
    items: items.map(
      (i): CollectionDocItem => ({
        id: unpadId(i.id),
        accountId: unpadId(i.account_id),
        accountUri: i.uri,
        actorType: i.actor_type,
        local: !i.domain,
        approvalUri: i.approval_uri,
        createdAt: i.created_at,
      }),
    ),
    tag: tag[0] ?? null,
  };
}
export type CollectionDocParts = NonNullable<Awaited<ReturnType<typeof collectionDocParts>>>;

/** A local account's own collections (the actor's featuredCollections), newest first: at most COLLECTION_LIMIT. */
export async function ownCollectionIds(db: DB, accountId: string): Promise<string[]> {
  const rows = await db.all<{ id: string }>(sql`SELECT id FROM collections WHERE account_id = ${padId(accountId)} AND uri IS NULL ORDER BY id DESC LIMIT 20`);
  return rows.map((r) => unpadId(r.id));
}

/** The collection a local account's accepted item consents to (its FeatureAuthorization's interactingObject), or null. */
export async function grantedFeature(db: DB, accountId: string, itemId: string): Promise<{ collectionId: string; collectionUri: string | null } | null> {
  const [row] = await db.all<{ id: string; uri: string | null }>(sql`SELECT c.id, c.uri FROM collection_items ci JOIN collections c ON c.id = ci.collection_id
    WHERE ci.id = ${padId(itemId)} AND ci.account_id = ${padId(accountId)} AND ci.state = 'accepted'`);
  return row ? { collectionId: unpadId(row.id), collectionUri: row.uri } : null;
}
export type LinkedCollections = Awaited<ReturnType<typeof collectionsLinked>>;
