// Collections of remote accounts, as their servers send them (FEP-7aa9; Mastodon 4.6's
// ProcessFeaturedCollectionService, ProcessFeaturedItemService, FeatureRequest, Accept/Reject#…feature_request!):
// the writes. Reading, fetching and checking the documents is src/federation/remote/featured-collections.ts.
// A remote collection is kept with its `uri`; its items are kept only when they are proven: an item featuring a local
// account only when that account consented here (an accepted item made when we answered its FeatureRequest), an item
// featuring a remote account once that account's FeatureAuthorization was fetched and names the collection.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { commit } from "../../effects/commit";
import type { Effects } from "../../effects/collector";
import { padId, snowflake, unpadId } from "../../lib/text/ids";
import { notificationWrite, notificationWrites } from "../notifications/notifications";
import { countStatement } from "./collection-items";
import { localItemStatement } from "../../queries/accounts/collections";
import { upsertTagsStatements } from "../tags/tags";
import { normalizeTag } from "../../lib/text/text";
import type { CollectionItemRow } from "../../db/schema";

/** A remote collection's fields, checked and capped (src/federation/remote/featured-collections.ts). */
export interface RemoteCollection {
  uri: string;
  url: string | null;
  name: string;
  description: string;
  language: string | null;
  sensitive: boolean;
  discoverable: boolean;
  topic: string | null;
  published: number | null;
  items: { uri: string; featuredObject: string; featureAuthorization: string | null }[];
}

/** The items whose consent is still to be checked: remote accounts' items not yet accepted under that id. */
export type UnprovenItem = RemoteCollection["items"][number];

/**
 * Stores (creates or updates) the collection `c` of remote account `ownerId`; items no longer listed go, items of
 * local accounts that consented take their FeaturedItem id. `notify`: the local accounts featured in it hear of the
 * update (`collection_update`) when it changed its name, description, language, flags or hashtag. Answers the collection's id and the items of remote accounts still to be proven, or
 * null when the id belongs to another account's collection.
 */
export async function storeRemoteCollection(
  db: DB,
  fx: Effects,
  ownerId: string,
  c: RemoteCollection,
  notify: boolean,
): Promise<{ id: string; unproven: UnprovenItem[] } | null> {
  const [existing, items] = await db.batch([
    db.all<{
      id: string;
      account_id: string;
      name: string;
      description: string;
      language: string | null;
      sensitive: number;
      discoverable: number;
      tag: string | null;
    }>(
      sql`SELECT c.id, c.account_id, c.name, c.description, c.language, c.sensitive, c.discoverable, t.name AS tag
        FROM collections c LEFT JOIN tags t ON t.id = c.tag_id WHERE c.uri = ${c.uri}`,
    ),
    db.all<{ uri: string | null; state: string; account_id: string; local: number }>(sql`SELECT ci.uri, ci.state, ci.account_id, a.domain IS NULL AS local
      FROM collection_items ci JOIN accounts a ON a.id = ci.account_id
      WHERE ci.collection_id = (SELECT id FROM collections WHERE uri = ${c.uri})`),
  ]);
  const found = existing[0];
  if (found && unpadId(found.account_id) !== ownerId) return null;
  const id = found ? unpadId(found.id) : snowflake(c.published ?? Date.now());
  const now = Date.now();
  const accepted = new Set(items.filter((i) => i.state === "accepted" && i.uri).map((i) => i.uri));
  const unproven = c.items.filter((i) => !accepted.has(i.uri));
  const listed = JSON.stringify(c.items.map((i) => i.uri));
  const featured = JSON.stringify(c.items.map((i) => [i.uri, i.featuredObject]));
  const tagName = c.topic ? normalizeTag(c.topic.replace(/^#/, "")) : null;
  const tag = tagName ? { name: tagName, display: c.topic!.replace(/^#/, "") } : null;
  // Its featured local accounts hear of an update that changed what the collection says (not of a mere re-send).
  const changed =
    !!found &&
    (found.name !== c.name ||
      found.description !== c.description ||
      found.language !== c.language ||
      !!found.sensitive !== c.sensitive ||
      !!found.discoverable !== c.discoverable ||
      (found.tag ?? null) !== tagName);
  const featuredLocal = notify && changed ? items.filter((i) => i.state === "accepted" && i.local).map((i) => unpadId(i.account_id)) : [];
  const notes = notificationWrites(
    db,
    featuredLocal.map((a) => ({ recipientId: a, fromAccountId: ownerId, type: "collection_update" as const, collectionId: id, activityId: snowflake(now) })),
  );
  const p = padId(id);
  await commit(
    db,
    fx,
    [
      ...(tag ? upsertTagsStatements(db, [tag], now) : []),
      db.run(sql`INSERT INTO collections (id, account_id, name, description, language, sensitive, discoverable, tag_id, item_count, created_at, updated_at, uri, url)
        VALUES (${p}, ${padId(ownerId)}, ${c.name}, ${c.description}, ${c.language}, ${c.sensitive ? 1 : 0}, ${c.discoverable ? 1 : 0},
          ${tag ? sql`(SELECT id FROM tags WHERE name = ${tag.name})` : null}, 0, ${c.published ?? now}, ${now}, ${c.uri}, ${c.url})
        ON CONFLICT (uri) WHERE uri IS NOT NULL DO UPDATE SET name = excluded.name, description = excluded.description,
          language = excluded.language, sensitive = excluded.sensitive, discoverable = excluded.discoverable, tag_id = excluded.tag_id,
          url = excluded.url, updated_at = excluded.updated_at`),
      // Items no longer listed go (those of local accounts waiting for their FeaturedItem id stay).
      db.run(sql`DELETE FROM collection_items WHERE collection_id = ${p} AND uri IS NOT NULL
        AND uri NOT IN (SELECT value FROM json_each(${listed}))`),
      // A local account that consented (we accepted the request) takes its FeaturedItem's id: one statement for all.
      db.run(sql`UPDATE collection_items SET uri = (SELECT json_extract(j.value, '$[0]') FROM json_each(${featured}) j
          JOIN accounts a ON a.uri = json_extract(j.value, '$[1]') AND a.domain IS NULL WHERE a.id = collection_items.account_id LIMIT 1)
        WHERE collection_id = ${p} AND state = 'accepted' AND account_id IN (SELECT a.id FROM json_each(${featured}) j
          JOIN accounts a ON a.uri = json_extract(j.value, '$[1]') AND a.domain IS NULL)`),
      countStatement(db, id, now),
      ...notes.stmts,
    ],
    (fx) => fx.add(...notes.notify),
  );
  return { id, unproven };
}

/** A remote account's item, its consent proven: accepted (made, or updated from pending). */
export async function acceptProvenItem(db: DB, collectionId: string, accountId: string, item: UnprovenItem): Promise<void> {
  const now = Date.now();
  await db.batch([
    db.run(sql`INSERT INTO collection_items (id, collection_id, account_id, state, created_at, uri, approval_uri)
      VALUES (${padId(snowflake(now))}, ${padId(collectionId)}, ${padId(accountId)}, 'accepted', ${now}, ${item.uri}, ${item.featureAuthorization})
      ON CONFLICT (collection_id, account_id) DO UPDATE SET state = 'accepted', uri = excluded.uri, approval_uri = excluded.approval_uri`),
    countStatement(db, collectionId, now),
  ]);
}

/** `ownerId`'s remote collection at `uri`, as a subquery. */
const remoteCollectionSql = (ownerId: string, uri: string) => sql`(SELECT id FROM collections WHERE uri = ${uri} AND account_id = ${padId(ownerId)})`;

/**
 * The remote collection at `uri` of `ownerId` is gone (Remove from its featured collections, or Delete): one batch,
 * which answers whether there was one.
 */
export async function deleteRemoteCollection(db: DB, ownerId: string, uri: string): Promise<boolean> {
  const c = remoteCollectionSql(ownerId, uri);
  const res = await db.batch([
    db.run(sql`DELETE FROM notifications WHERE collection_id = ${c}`),
    db.run(sql`DELETE FROM collection_items WHERE collection_id = ${c}`),
    db.all<{ id: string }>(sql`DELETE FROM collections WHERE id = ${c} RETURNING id`),
  ]);
  return res[2].length > 0;
}

/** Remove of a FeaturedItem (by its id) from `ownerId`'s remote collection `collectionUri`: one batch. */
export async function removeRemoteItem(db: DB, ownerId: string, collectionUri: string, itemUri: string): Promise<boolean> {
  const c = remoteCollectionSql(ownerId, collectionUri);
  const [found] = await db.batch([
    db.all<{ id: string }>(sql`SELECT id FROM collections WHERE id = ${c}`),
    db.run(sql`DELETE FROM collection_items WHERE collection_id = ${c} AND uri = ${itemUri}`),
    countStatement(db, c, Date.now()),
  ]);
  return found.length > 0;
}

/**
 * A remote collection asks to feature a local account (ActivityPub::Activity::FeatureRequest), and may: the item is
 * accepted here under their request's id (their FeaturedItem id comes with the collection's next Add or Update), the
 * account is told, and our Accept names its FeatureAuthorization. An item already there is answered again.
 */
export async function acceptFeatureRequest(db: DB, fx: Effects, curatorId: string, collectionId: string, accountId: string, requestUri: string): Promise<void> {
  const now = Date.now();
  const id = snowflake(now);
  const [inserted] = await db.batch([
    db.all<{ id: string }>(sql`INSERT INTO collection_items (id, collection_id, account_id, state, created_at, activity_uri)
      VALUES (${padId(id)}, ${padId(collectionId)}, ${padId(accountId)}, 'accepted', ${now}, ${requestUri})
      ON CONFLICT (collection_id, account_id) DO UPDATE SET state = 'accepted', activity_uri = excluded.activity_uri
      RETURNING id`),
    countStatement(db, collectionId, now),
  ]);
  const itemId = inserted[0] ? unpadId(inserted[0].id) : id;
  const note = notificationWrite(db, { recipientId: accountId, fromAccountId: curatorId, type: "added_to_collection", collectionId, activityId: itemId });
  await commit(db, fx, [note.statement], (fx) => {
    fx.add(note.effect);
    fx.federate({ kind: "feature_answer", accountId, requesterId: curatorId, activityUri: requestUri, itemId });
  });
}

/** Our FeatureRequest for an item of a local collection, answered by its account (the signer). */
export async function requestedItem(db: DB, accountId: string, requestUri: string): Promise<CollectionItemRow | null> {
  return (await localItemStatement(db, accountId, "activityUri", requestUri))[0] ?? null;
}

/** The answer to our FeatureRequest: accepted under its FeatureAuthorization (then its Add goes out), or rejected. */
export async function answerOwnRequest(db: DB, fx: Effects, item: CollectionItemRow, approvalUri: string | null): Promise<void> {
  const now = Date.now();
  const state = approvalUri ? "accepted" : "rejected";
  await commit(
    db,
    fx,
    [
      db.run(sql`UPDATE collection_items SET state = ${state}, approval_uri = ${approvalUri} WHERE id = ${padId(item.id)}`),
      countStatement(db, item.collectionId, now),
    ],
    (fx) => {
      if (approvalUri) fx.federate({ kind: "collection_item_add", itemId: item.id });
    },
  );
}

/** An item of a local collection whose remote account withdraws the authorization `approvalUri` (Delete). */
export async function itemByApproval(db: DB, accountId: string, approvalUri: string): Promise<CollectionItemRow | null> {
  return (await localItemStatement(db, accountId, "approvalUri", approvalUri))[0] ?? null;
}

/** Whether the account withdrew from the collection (its item revoked): a new request for it is refused. */
export async function withdrawnFrom(db: DB, collectionId: string, accountId: string): Promise<boolean> {
  const rows = await db.all(
    sql`SELECT 1 FROM collection_items WHERE collection_id = ${padId(collectionId)} AND account_id = ${padId(accountId)} AND state = 'revoked'`,
  );
  return rows.length > 0;
}

/** The id of `ownerId`'s remote collection at `uri`, when it is known here. */
export async function remoteCollectionId(db: DB, ownerId: string, uri: string): Promise<string | null> {
  const [row] = await remoteCollectionStatement(db, ownerId, uri);
  return row ? unpadId(row.id) : null;
}

/** remoteCollectionId's read as a statement (for a batch). */
export const remoteCollectionStatement = (db: DB, ownerId: string, uri: string) =>
  db.all<{ id: string }>(sql`SELECT id FROM collections WHERE uri = ${uri} AND account_id = ${padId(ownerId)}`);
