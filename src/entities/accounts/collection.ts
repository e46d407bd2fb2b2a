// Collection, CollectionItem and CollectionWithAccounts (Mastodon 4.6's REST::CollectionSerializer,
// CollectionItemSerializer, CollectionWithAccountsSerializer), and the `{collection}` / `{collections}` /
// `{collection_item}` wrappers Mastodon answers with (the serializers' `adapter: :json`). A page renders in two round
// trips: the collections' items and tags in one batch, then (with accounts) the accounts they name.
import type { DB } from "../../db/client";
import type { CollectionItemRow, CollectionRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { accountsByIds } from "../../queries/accounts/accounts";
import { collectionBundle, collectionsByIds } from "../../queries/accounts/collections";
import { collectionUri, isoTime, tagUrl } from "../urls";
import { type MastodonAccount, renderAccount } from "./account";

export interface MastodonCollectionItem {
  id: string;
  account_id: string;
  state: "accepted" | "pending";
  created_at: string;
}

export interface MastodonCollection {
  id: string;
  account_id: string;
  uri: string;
  url: string | null;
  name: string;
  description: string;
  language: string | null;
  local: boolean;
  sensitive: boolean;
  discoverable: boolean;
  tag: { name: string; url: string } | null;
  created_at: string;
  updated_at: string;
  item_count: number;
  items: MastodonCollectionItem[];
}

export interface MastodonCollectionWithAccounts {
  collection: MastodonCollection;
  accounts: MastodonAccount[];
}

export function renderCollectionItem(i: CollectionItemRow): MastodonCollectionItem {
  return { id: i.id, account_id: i.accountId, state: i.state === "pending" ? "pending" : "accepted", created_at: isoTime(i.createdAt) };
}

/** One collection, from its row, the items shown and its hashtag's name. */
export function renderCollectionRow(cfg: Config, c: CollectionRow, items: CollectionItemRow[], tagName: string | undefined): MastodonCollection {
  return {
    id: c.id,
    account_id: c.accountId,
    uri: c.uri ?? collectionUri(cfg, c.id),
    // A remote collection's page, as its server names it; a local one's page is at its id (a browser gets HTML there).
    url: c.url ?? (c.uri ? null : collectionUri(cfg, c.id)),
    name: c.name,
    description: c.description,
    language: c.language,
    local: !c.uri,
    sensitive: c.sensitive,
    discoverable: c.discoverable,
    tag: tagName ? { name: tagName, url: tagUrl(cfg, tagName.toLowerCase()) } : null,
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
    item_count: c.itemCount,
    items: items.map(renderCollectionItem),
  };
}

export async function renderCollections(db: DB, cfg: Config, rows: CollectionRow[], viewerId: string | null): Promise<MastodonCollection[]> {
  if (!rows.length) return [];
  const b = await collectionBundle(db, rows, viewerId);
  return rows.map((c) => renderCollectionRow(cfg, c, b.items.get(c.id) ?? [], c.tagId ? b.tagNames.get(c.tagId) : undefined));
}

/** GET /api/v1/collections/:id: the collection with its owner's and its items' accounts. */
export async function renderCollectionWithAccounts(db: DB, cfg: Config, c: CollectionRow, viewerId: string | null): Promise<MastodonCollectionWithAccounts> {
  const [collection] = await renderCollections(db, cfg, [c], viewerId);
  if (!collection) throw new Error("unreachable: one row renders one collection");
  const accounts = await accountsByIds(db, [c.accountId, ...collection.items.map((i) => i.account_id)]);
  return { collection, accounts: accounts.map((a) => renderAccount(cfg, a)) };
}

/** The types of notification that name a collection (Notification `collection`). */
export const COLLECTION_NOTIFICATION_TYPES: readonly string[] = ["added_to_collection", "collection_update"];

/** The collections a page of notifications names, rendered for the viewer (two round trips, none without any). */
export async function notificationCollections(
  db: DB,
  cfg: Config,
  rows: { n: { type: string; collectionId: string | null } }[],
  viewerId: string,
): Promise<Map<string, MastodonCollection>> {
  const ids = [...new Set(rows.flatMap((r) => (r.n.collectionId && COLLECTION_NOTIFICATION_TYPES.includes(r.n.type) ? [r.n.collectionId] : [])))];
  if (!ids.length) return new Map();
  const rendered = await renderCollections(db, cfg, await collectionsByIds(db, ids), viewerId);
  return new Map(rendered.map((c) => [c.id, c]));
}
