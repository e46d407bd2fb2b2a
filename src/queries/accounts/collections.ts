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
 * Collections and what their FeaturedCollections name (FeaturedCollectionSerializer): each owner's actor id, the
 * accepted items with their accounts, the hashtag. Two round trips, whatever the number of collections: the rows, then
 * one batch; in the order of `rows`' query (newest first for several).
 */
export async function collectionDocPartsOf(db: DB, where: SQL) {
  const rows = await db.select().from(collections).where(where).orderBy(desc(collections.id));
  if (!rows.length) return [];
  const ids = jsonIds(rows.map((c) => c.id));
  const [owners, items, tags] = await db.batch([
    db.all<{ id: string; uri: string; domain: string | null; suspended_at: number | null }>(
      sql`SELECT id, uri, domain, suspended_at FROM accounts WHERE id IN ${jsonIds(rows.map((c) => c.accountId))}`,
    ),
    db.all<{
      id: string;
      collection_id: string;
      account_id: string;
      uri: string;
      actor_type: string | null;
      domain: string | null;
      approval_uri: string | null;
      created_at: number;
    }>(
      sql`SELECT ci.id, ci.collection_id, ci.account_id, a.uri, a.actor_type, a.domain, ci.approval_uri, ci.created_at FROM collection_items ci
        JOIN accounts a ON a.id = ci.account_id AND a.suspended_at IS NULL
        WHERE ci.collection_id IN ${ids} AND ci.state = 'accepted' ORDER BY ci.id`,
    ),
    db.all<{ id: string; name: string; display_name: string }>(
      sql`SELECT id, name, display_name FROM tags WHERE id IN ${jsonIds(rows.flatMap((c) => (c.tagId ? [c.tagId] : [])))}`,
    ),
  ]);
  const owner = new Map(owners.map((o) => [unpadId(o.id), o]));
  const tag = new Map(tags.map((t) => [unpadId(t.id), { name: t.name, display_name: t.display_name }]));
  return rows.flatMap((c) => {
    const o = owner.get(c.accountId);
    if (!o) return [];
    const mine = items.filter((i) => unpadId(i.collection_id) === c.id);
    return [
      {
        collection: c,
        owner: { uri: o.uri, local: !o.domain, suspended: o.suspended_at !== null },
        items: mine.map(
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
        tag: (c.tagId ? tag.get(c.tagId) : undefined) ?? null,
      },
    ];
  });
}

/** One collection's parts (collectionDocPartsOf), or null. */
export async function collectionDocParts(db: DB, collectionId: string) {
  return (await collectionDocPartsOf(db, eq(collections.id, collectionId)))[0] ?? null;
}
export type CollectionDocParts = NonNullable<Awaited<ReturnType<typeof collectionDocParts>>>;

/** A local account's own collections (the actor's featuredCollections), newest first, with their parts: two round trips. */
export function ownCollectionDocParts(db: DB, accountId: string) {
  return collectionDocPartsOf(db, and(eq(collections.accountId, accountId), sql`${collections.uri} IS NULL`)!);
}

/** The collection a local account's accepted item consents to (its FeatureAuthorization's interactingObject), or null. */
export async function grantedFeature(db: DB, accountId: string, itemId: string): Promise<{ collectionId: string; collectionUri: string | null } | null> {
  const [row] = await db.all<{ id: string; uri: string | null }>(sql`SELECT c.id, c.uri FROM collection_items ci JOIN collections c ON c.id = ci.collection_id
    WHERE ci.id = ${padId(itemId)} AND ci.account_id = ${padId(accountId)} AND ci.state = 'accepted'`);
  return row ? { collectionId: unpadId(row.id), collectionUri: row.uri } : null;
}
export type LinkedCollections = Awaited<ReturnType<typeof collectionsLinked>>;

/** An item by id (within `collectionId` when given). */
export async function collectionItemById(db: DB, itemId: string, collectionId?: string): Promise<CollectionItemRow | null> {
  const [row] = await db
    .select()
    .from(collectionItems)
    .where(and(eq(collectionItems.id, itemId), collectionId ? eq(collectionItems.collectionId, collectionId) : undefined))
    .limit(1);
  return row ?? null;
}

/** An item and its collection's owner and id URI (null for a local collection), in one batch. */
export async function itemWithCollection(db: DB, itemId: string) {
  const [items, owners] = await db.batch([
    db.select().from(collectionItems).where(eq(collectionItems.id, itemId)).limit(1),
    db
      .select({ accountId: collections.accountId, uri: collections.uri })
      .from(collections)
      .where(sql`${collections.id} = (SELECT collection_id FROM collection_items WHERE id = ${padId(itemId)})`)
      .limit(1),
  ]);
  const item = items[0];
  const collection = owners[0];
  return item && collection ? { item, collection } : null;
}

/**
 * The item of a local collection that featured `accountId` under `column` = `value`: our FeatureRequest's id
 * (activity_uri), or the account's FeatureAuthorization (approval_uri). A statement, for a batch.
 */
export function localItemStatement(db: DB, accountId: string, column: "activityUri" | "approvalUri", value: string) {
  return db
    .select()
    .from(collectionItems)
    .where(
      and(
        eq(collectionItems[column], value),
        eq(collectionItems.accountId, accountId),
        // Of a local collection (probed by its key: an IN list of every local collection would scan them).
        sql`EXISTS (SELECT 1 FROM collections c WHERE c.id = ${collectionItems.collectionId} AND c.uri IS NULL)`,
      ),
    )
    .limit(1);
}
