// Collections (Mastodon 4.6: CreateCollectionService, UpdateCollectionService, DeleteCollectionService,
// AddAccountToCollectionService, DeleteCollectionItemService, RevokeCollectionItemService): a user's curated lists of
// accounts they recommend. Rules as Mastodon's model and policies: a name of 1–40 characters, a description of at most
// 100, a language code or none, one usable hashtag or none, at most 25 items; only the owner changes a collection;
// only the featured account revokes its item; an account can be featured when it is discoverable, not suspended, and
// neither blocks nor is blocked by the curator. Tern keeps collections local (no FeaturedCollection federation), so
// every item is accepted when added. Each change is one batch, `item_count` updated in it.
import { and, eq, sql } from "drizzle-orm";
import { type DB, runBatch } from "../../db/client";
import { type CollectionItemRow, type CollectionRow, collectionItems, collections } from "../../db/schema";
import { forbidden, notFound, unprocessable, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { normalizeTag } from "../../lib/text/text";
import { MAX_TAG_LENGTH, upsertTagsStatements } from "../tags/tags";
import { COLLECTION_LIMIT } from "../../entities/accounts/account";

export const MAX_COLLECTION_ITEMS = 25;

export interface CollectionFields {
  name?: string;
  description?: string | null;
  language?: string | null;
  sensitive?: boolean;
  discoverable?: boolean;
  tagName?: string | null;
}

/** Checks the fields as Mastodon's Collection validations do; the tag as a normalised name and its display form. */
function checkFields(f: CollectionFields, creating: boolean): { tag?: { name: string; display: string } | null } {
  if (creating || f.name !== undefined) {
    const name = (f.name ?? "").trim();
    if (!name) throw validationFailed("Name can't be blank");
    if ([...name].length > 40) throw validationFailed("Name is too long (maximum is 40 characters)");
  }
  if (f.description && [...f.description].length > 100) throw validationFailed("Description is too long (maximum is 100 characters)");
  if (f.language && !/^[a-z]{2,3}(-[A-Za-z]{2,4})?$/.test(f.language)) throw validationFailed("Language is not a valid language");
  if (f.tagName === undefined) return {};
  const raw = (f.tagName ?? "").trim().replace(/^#/, "");
  if (!raw) return { tag: null };
  const name = normalizeTag(raw);
  if (!name || name.length > MAX_TAG_LENGTH || /^\d+$/.test(name)) throw validationFailed("Tag name is invalid");
  return { tag: { name, display: raw.normalize("NFKC").slice(0, MAX_TAG_LENGTH) } };
}

/** Which of the accounts the curator may feature: existing, local or remote, discoverable, not suspended, no block. */
async function featurable(db: DB, curatorId: string, accountIds: string[]): Promise<void> {
  if (!accountIds.length) return;
  const c = padId(curatorId);
  const rows = await db.all<{ id: string; ok: number }>(sql`SELECT a.id AS id,
      (a.discoverable = 1 AND a.suspended_at IS NULL AND a.id <> ${c}
        AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.account_id = a.id AND b.target_account_id = ${c})
                                              OR (b.account_id = ${c} AND b.target_account_id = a.id))) AS ok
    FROM accounts a WHERE a.id IN (SELECT value FROM json_each(${JSON.stringify(accountIds.map(padId))}))`);
  if (rows.length < new Set(accountIds).size) throw notFound();
  if (rows.some((r) => !r.ok)) throw forbidden("This account cannot be added to collections");
}

const countStatement = (db: DB, collectionId: string, now: number) =>
  db.run(sql`UPDATE collections SET updated_at = ${now},
      item_count = (SELECT count(*) FROM collection_items WHERE collection_id = ${padId(collectionId)} AND state = 'accepted')
    WHERE id = ${padId(collectionId)}`);

const tagIdOf = (name: string) => sql`(SELECT id FROM tags WHERE name = ${name})`;

export async function createCollection(db: DB, ownerId: string, f: CollectionFields, accountIds: string[] = []): Promise<CollectionRow> {
  const { tag } = checkFields(f, true);
  const ids = [...new Set(accountIds)];
  if (ids.length > MAX_COLLECTION_ITEMS) throw validationFailed(`Collection items is too long (maximum is ${MAX_COLLECTION_ITEMS} items)`);
  const [{ n } = { n: 0 }] = await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM collections WHERE account_id = ${padId(ownerId)}`);
  if (n >= COLLECTION_LIMIT) throw unprocessable(`Validation failed: You cannot create more than ${COLLECTION_LIMIT} collections`);
  await featurable(db, ownerId, ids);
  const now = Date.now();
  const id = snowflake(now);
  const p = padId(id);
  const items = JSON.stringify(ids.map((a) => [padId(snowflake(now)), padId(a)]));
  await runBatch(db, [
    ...(tag ? upsertTagsStatements(db, [tag], now) : []),
    db.run(sql`INSERT INTO collections (id, account_id, name, description, language, sensitive, discoverable, tag_id, item_count, created_at, updated_at)
      VALUES (${p}, ${padId(ownerId)}, ${(f.name ?? "").trim()}, ${f.description ?? ""}, ${f.language ?? null}, ${f.sensitive ? 1 : 0},
        ${f.discoverable === false ? 0 : 1}, ${tag ? tagIdOf(tag.name) : null}, 0, ${now}, ${now})`),
    db.run(sql`INSERT OR IGNORE INTO collection_items (id, collection_id, account_id, state, created_at)
      SELECT json_extract(j.value, '$[0]'), ${p}, json_extract(j.value, '$[1]'), 'accepted', ${now} FROM json_each(${items}) j`),
    countStatement(db, id, now),
  ]);
  return ownCollection(db, ownerId, id);
}

/** The collection, when the account owns it: 404 when there is none, 403 when it is someone else's. */
export async function ownCollection(db: DB, accountId: string, id: string): Promise<CollectionRow> {
  const [row] = await db.select().from(collections).where(eq(collections.id, id)).limit(1);
  if (!row) throw notFound();
  if (row.accountId !== accountId) throw forbidden();
  return row;
}

export async function updateCollection(db: DB, ownerId: string, id: string, f: CollectionFields): Promise<CollectionRow> {
  await ownCollection(db, ownerId, id);
  const { tag } = checkFields(f, false);
  const now = Date.now();
  const set: SQLPart[] = [sql`updated_at = ${now}`];
  if (f.name !== undefined) set.push(sql`name = ${(f.name ?? "").trim()}`);
  if (f.description !== undefined) set.push(sql`description = ${f.description ?? ""}`);
  if (f.language !== undefined) set.push(sql`language = ${f.language}`);
  if (f.sensitive !== undefined) set.push(sql`sensitive = ${f.sensitive ? 1 : 0}`);
  if (f.discoverable !== undefined) set.push(sql`discoverable = ${f.discoverable ? 1 : 0}`);
  if (tag !== undefined) set.push(sql`tag_id = ${tag ? tagIdOf(tag.name) : null}`);
  await runBatch(db, [
    ...(tag ? upsertTagsStatements(db, [tag], now) : []),
    db.run(sql`UPDATE collections SET ${sql.join(set, sql`, `)} WHERE id = ${padId(id)}`),
  ]);
  return ownCollection(db, ownerId, id);
}
type SQLPart = ReturnType<typeof sql>;

export async function deleteCollection(db: DB, ownerId: string, id: string): Promise<void> {
  await ownCollection(db, ownerId, id);
  await db.batch([db.run(sql`DELETE FROM collection_items WHERE collection_id = ${padId(id)}`), db.run(sql`DELETE FROM collections WHERE id = ${padId(id)}`)]);
}

export async function addCollectionItem(db: DB, ownerId: string, collectionId: string, accountId: string): Promise<CollectionItemRow> {
  const c = await ownCollection(db, ownerId, collectionId);
  await featurable(db, ownerId, [accountId]);
  const [existing] = await db
    .select()
    .from(collectionItems)
    .where(and(eq(collectionItems.collectionId, c.id), eq(collectionItems.accountId, accountId)))
    .limit(1);
  if (existing) throw validationFailed("Account has already been taken");
  const now = Date.now();
  const id = snowflake(now);
  // The capacity check and the insert are one statement: two adds at once cannot pass 25 together.
  const [inserted] = await db.batch([
    db.all<{ id: string }>(sql`INSERT OR IGNORE INTO collection_items (id, collection_id, account_id, state, created_at)
      SELECT ${padId(id)}, ${padId(c.id)}, ${padId(accountId)}, 'accepted', ${now}
      WHERE (SELECT count(*) FROM collection_items WHERE collection_id = ${padId(c.id)} AND state = 'accepted') < ${MAX_COLLECTION_ITEMS}
      RETURNING id`),
    countStatement(db, c.id, now),
  ]);
  if (!inserted.length) throw validationFailed(`Collection items is too long (maximum is ${MAX_COLLECTION_ITEMS} items)`);
  return { id, collectionId: c.id, accountId, state: "accepted", createdAt: now };
}

async function itemOf(db: DB, collectionId: string, itemId: string): Promise<CollectionItemRow> {
  const [item] = await db
    .select()
    .from(collectionItems)
    .where(and(eq(collectionItems.id, itemId), eq(collectionItems.collectionId, collectionId)))
    .limit(1);
  if (!item) throw notFound();
  return item;
}

export async function removeCollectionItem(db: DB, ownerId: string, collectionId: string, itemId: string): Promise<void> {
  await ownCollection(db, ownerId, collectionId);
  await itemOf(db, collectionId, itemId);
  const now = Date.now();
  await db.batch([db.run(sql`DELETE FROM collection_items WHERE id = ${padId(itemId)}`), countStatement(db, collectionId, now)]);
}

/** The featured account takes itself out of someone's collection; the row stays, revoked, so it is not added again. */
export async function revokeCollectionItem(db: DB, accountId: string, collectionId: string, itemId: string): Promise<void> {
  const [c] = await db.select({ id: collections.id }).from(collections).where(eq(collections.id, collectionId)).limit(1);
  if (!c) throw notFound();
  const item = await itemOf(db, collectionId, itemId);
  if (item.accountId !== accountId) throw forbidden();
  const now = Date.now();
  await db.batch([db.run(sql`UPDATE collection_items SET state = 'revoked' WHERE id = ${padId(itemId)}`), countStatement(db, collectionId, now)]);
}
