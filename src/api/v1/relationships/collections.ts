// /api/v1/collections (Mastodon 4.6; also at /api/v1_alpha/collections, where 4.6 first served them): create, show,
// update, delete a collection; add, remove and revoke its items. Showing is public (a token, when sent, needs
// read:collections); changes need write:collections and the owner (the featured account, to revoke).
import * as z from "zod";
import { routeGroup } from "../../../route-group";
import { renderCollectionItem, renderCollections, renderCollectionWithAccounts } from "../../../entities/accounts/collection";
import { notFound, unprocessable } from "../../../lib/http/errors";
import { lazy } from "../../../lib/limits/lazy";
import { parse, pathId, zArray, zBool, zId, zStr } from "../../../lib/http/params";
import { parseId } from "../../../lib/text/ids";
import { me, requireUser, scopeIfToken, viewerAccountId } from "../../../oauth/guard";
import { collectionById, ownerBlocksViewer } from "../../../queries/accounts/collections";
import { type CollectionFields, createCollection, deleteCollection, updateCollection } from "../../../services/relationships/collections";
import { addCollectionItem, removeCollectionItem, revokeCollectionItem } from "../../../services/relationships/collection-items";

const r = routeGroup();

const nullableStr = (max: number) => z.preprocess((v) => (v === "" ? null : v), zStr(max).nullable().optional());
const fieldsBody = lazy(() =>
  z.object({
    name: zStr(1_000).optional(),
    description: nullableStr(10_000),
    language: nullableStr(20),
    sensitive: zBool,
    discoverable: zBool,
    tag_name: nullableStr(1_000),
    account_ids: zArray(zId, 100).optional(),
  }),
);
const itemBody = lazy(() => z.object({ account_id: zId.optional() }));

function fieldsOf(p: z.infer<ReturnType<typeof fieldsBody>>): CollectionFields {
  return { name: p.name, description: p.description, language: p.language, sensitive: p.sensitive, discoverable: p.discoverable, tagName: p.tag_name };
}

r.post("/", requireUser("write:collections"), async (c) => {
  const p = await parse(c, fieldsBody());
  const ids = (p.account_ids ?? []).map((x) => parseId(x));
  if (ids.some((x) => !x)) throw notFound();
  const db = c.get("db");
  const v = me(c);
  const row = await createCollection(db, c.get("fx"), v.account.id, fieldsOf(p), ids as string[]);
  const [collection] = await renderCollections(db, c.get("config"), [row], v.account.id);
  return c.json({ collection });
});

r.get("/:id", scopeIfToken("read:collections"), async (c) => {
  const db = c.get("db");
  const viewer = viewerAccountId(c);
  const row = await collectionById(db, pathId(c));
  if (!row || (await ownerBlocksViewer(db, row.accountId, viewer))) throw notFound();
  return c.json(await renderCollectionWithAccounts(db, c.get("config"), row, viewer));
});

for (const method of ["patch", "put"] as const) {
  r[method]("/:id", requireUser("write:collections"), async (c) => {
    const p = await parse(c, fieldsBody());
    const db = c.get("db");
    const v = me(c);
    const row = await updateCollection(db, c.get("fx"), v.account.id, pathId(c), fieldsOf(p));
    const [collection] = await renderCollections(db, c.get("config"), [row], v.account.id);
    return c.json({ collection });
  });
}

r.delete("/:id", requireUser("write:collections"), async (c) => {
  await deleteCollection(c.get("db"), c.get("fx"), me(c).account.id, pathId(c));
  return c.json({});
});

r.post("/:id/items", requireUser("write:collections"), async (c) => {
  const p = await parse(c, itemBody());
  if (!p.account_id) throw unprocessable("`account_id` parameter is missing");
  const accountId = parseId(p.account_id);
  if (!accountId) throw notFound();
  const item = await addCollectionItem(c.get("db"), c.get("fx"), me(c).account.id, pathId(c), accountId);
  return c.json({ collection_item: renderCollectionItem(item) });
});

r.delete("/:id/items/:item_id", requireUser("write:collections"), async (c) => {
  await removeCollectionItem(c.get("db"), c.get("fx"), me(c).account.id, pathId(c), pathId(c, "item_id"));
  return c.json({});
});

r.post("/:id/items/:item_id/revoke", requireUser("write:collections"), async (c) => {
  await revokeCollectionItem(c.get("db"), c.get("fx"), me(c).account.id, pathId(c), pathId(c, "item_id"));
  return c.json({});
});

export default r;
