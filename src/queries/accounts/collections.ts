// Read side of collections (src/services/relationships/collections.ts writes them): an account's collections, the
// collections an account is featured in, one collection, and what rendering a page of them needs, in one batch.
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type CollectionItemRow, type CollectionRow, collectionItems, collections } from "../../db/schema";
import { padId, unpadId } from "../../lib/text/ids";
import type { OffsetPage } from "../../lib/http/pagination";

export async function collectionById(db: DB, id: string): Promise<CollectionRow | null> {
  const [row] = await db.select().from(collections).where(eq(collections.id, id)).limit(1);
  return row ?? null;
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

/** What rendering these collections needs: their items shown to the viewer and their hashtags' names. One batch. */
export async function collectionBundle(db: DB, rows: CollectionRow[], viewerId: string | null) {
  const ids = rows.map((r) => r.id);
  const tagIds = [...new Set(rows.map((r) => r.tagId).filter((x): x is string => !!x))];
  const v = viewerId ? padId(viewerId) : null;
  const [items, tags] = await db.batch([
    db
      .select()
      .from(collectionItems)
      .where(
        and(
          inArray(collectionItems.collectionId, ids.length ? ids : ["0"]),
          eq(collectionItems.state, "accepted"),
          // Items of accounts the viewer blocks are left out (Collection#items_for).
          v ? sql`NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = ${v} AND b.target_account_id = ${collectionItems.accountId})` : undefined,
        ),
      )
      .orderBy(collectionItems.id),
    db.all<{ id: string; name: string }>(sql`SELECT id, display_name AS name FROM tags
      WHERE id IN (SELECT value FROM json_each(${JSON.stringify(tagIds.map(padId))}))`),
  ]);
  const byCollection = new Map<string, CollectionItemRow[]>();
  for (const i of items) byCollection.set(i.collectionId, [...(byCollection.get(i.collectionId) ?? []), i]);
  const tagNames = new Map(tags.map((t) => [unpadId(t.id), t.name]));
  return { items: byCollection, tagNames };
}
