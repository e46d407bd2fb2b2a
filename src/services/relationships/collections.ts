// Collections (Mastodon 4.6: CreateCollectionService, UpdateCollectionService, DeleteCollectionService): a user's
// curated lists of accounts they recommend. Rules as Mastodon's model and policies: a name of 1–40 characters, a
// description of at most 100, a language code or none, one usable hashtag or none, at most 25 items; only the owner
// changes a collection. Its items are ./collection-items.ts. Each change is one batch, `item_count` updated in it, and
// federated (FEP-7aa9: Add, Update or Remove of the FeaturedCollection, src/federation/outbound/collections-outbound.ts);
// the local accounts featured in a collection hear of its updates (`collection_update`).
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { CollectionRow } from "../../db/schema";
import { commit } from "../../effects/commit";
import type { Effects } from "../../effects/collector";
import { unprocessable, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { normalizeTag } from "../../lib/text/text";
import { MAX_TAG_LENGTH, upsertTagsStatements } from "../tags/tags";
import { COLLECTION_LIMIT } from "../../entities/accounts/account";
import { collectionUri } from "../../entities/urls";
import { notificationWrites } from "../notifications/notifications";
import { countStatement, featureDecisions, itemInserts, MAX_COLLECTION_ITEMS, ownCollection } from "./collection-items";

export { MAX_COLLECTION_ITEMS, ownCollection } from "./collection-items";

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

const tagIdOf = (name: string) => sql`(SELECT id FROM tags WHERE name = ${name})`;

export async function createCollection(db: DB, fx: Effects, ownerId: string, f: CollectionFields, accountIds: string[] = []): Promise<CollectionRow> {
  const { tag } = checkFields(f, true);
  const ids = [...new Set(accountIds)];
  if (ids.length > MAX_COLLECTION_ITEMS) throw validationFailed(`Collection items is too long (maximum is ${MAX_COLLECTION_ITEMS} items)`);
  const [{ n } = { n: 0 }] = await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM collections WHERE account_id = ${padId(ownerId)} AND uri IS NULL`);
  if (n >= COLLECTION_LIMIT) throw unprocessable(`Validation failed: You cannot create more than ${COLLECTION_LIMIT} collections`);
  const decided = await featureDecisions(db, ownerId, ids);
  const now = Date.now();
  const id = snowflake(now);
  const items = ids.map((accountId) => ({ id: snowflake(now), accountId, remote: decided.get(accountId)!.remote }));
  const { stmts, notes, requests } = itemInserts(db, fx.origin, ownerId, id, items, now);
  await commit(
    db,
    fx,
    [
      ...(tag ? upsertTagsStatements(db, [tag], now) : []),
      db.run(sql`INSERT INTO collections (id, account_id, name, description, language, sensitive, discoverable, tag_id, item_count, created_at, updated_at, url)
        VALUES (${padId(id)}, ${padId(ownerId)}, ${(f.name ?? "").trim()}, ${f.description ?? ""}, ${f.language ?? null}, ${f.sensitive ? 1 : 0},
          ${f.discoverable === false ? 0 : 1}, ${tag ? tagIdOf(tag.name) : null}, 0, ${now}, ${now}, ${collectionUri({ origin: fx.origin }, id)})`),
      ...stmts,
      countStatement(db, id, now),
    ],
    (fx) => {
      fx.add(...notes);
      fx.federate({ kind: "collection_add", collectionId: id });
      for (const itemId of requests) fx.federate({ kind: "feature_request", itemId });
    },
  );
  return ownCollection(db, ownerId, id);
}

type SQLPart = ReturnType<typeof sql>;

/** The local accounts featured (accepted) in a collection: they hear of its updates. */
export const featuredLocalAccountsQuery = (db: DB, collectionId: string) =>
  db.all<{ account_id: string }>(sql`SELECT ci.account_id FROM collection_items ci JOIN accounts a ON a.id = ci.account_id AND a.domain IS NULL
    WHERE ci.collection_id = ${padId(collectionId)} AND ci.state = 'accepted'`);

export async function updateCollection(db: DB, fx: Effects, ownerId: string, id: string, f: CollectionFields): Promise<CollectionRow> {
  await ownCollection(db, ownerId, id);
  const { tag } = checkFields(f, false);
  const now = Date.now();
  const set: SQLPart[] = [sql`updated_at = ${now}`, sql`url = coalesce(url, ${collectionUri({ origin: fx.origin }, id)})`];
  if (f.name !== undefined) set.push(sql`name = ${(f.name ?? "").trim()}`);
  if (f.description !== undefined) set.push(sql`description = ${f.description ?? ""}`);
  if (f.language !== undefined) set.push(sql`language = ${f.language}`);
  if (f.sensitive !== undefined) set.push(sql`sensitive = ${f.sensitive ? 1 : 0}`);
  if (f.discoverable !== undefined) set.push(sql`discoverable = ${f.discoverable ? 1 : 0}`);
  if (tag !== undefined) set.push(sql`tag_id = ${tag ? tagIdOf(tag.name) : null}`);
  const featured = await featuredLocalAccountsQuery(db, id);
  const notes = notificationWrites(
    db,
    featured.map((a) => ({
      recipientId: a.account_id,
      fromAccountId: ownerId,
      type: "collection_update" as const,
      collectionId: id,
      activityId: snowflake(now),
    })),
  );
  await commit(
    db,
    fx,
    [
      ...(tag ? upsertTagsStatements(db, [tag], now) : []),
      db.run(sql`UPDATE collections SET ${sql.join(set, sql`, `)} WHERE id = ${padId(id)}`),
      ...notes.stmts,
    ],
    (fx) => {
      fx.add(...notes.notify);
      fx.federate({ kind: "collection_update", collectionId: id });
    },
  );
  return ownCollection(db, ownerId, id);
}

export async function deleteCollection(db: DB, fx: Effects, ownerId: string, id: string): Promise<void> {
  await ownCollection(db, ownerId, id);
  // The remote accounts it featured hear of it too (their servers keep the item): read before the rows go.
  const remote = await db.all<{ account_id: string }>(sql`SELECT ci.account_id FROM collection_items ci JOIN accounts a ON a.id = ci.account_id
    WHERE ci.collection_id = ${padId(id)} AND a.domain IS NOT NULL AND ci.state = 'accepted'`);
  await commit(
    db,
    fx,
    [
      db.run(sql`DELETE FROM notifications WHERE collection_id = ${padId(id)}`),
      db.run(sql`DELETE FROM collection_items WHERE collection_id = ${padId(id)}`),
      db.run(sql`DELETE FROM collections WHERE id = ${padId(id)}`),
    ],
    (fx) => fx.federate({ kind: "collection_remove", accountId: ownerId, collectionId: id, alsoTo: remote.map((r) => r.account_id) }),
  );
}
