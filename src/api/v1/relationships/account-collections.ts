// GET /api/v1/accounts/:id/collections and /in_collections (Mastodon 4.6; also under /api/v1_alpha/accounts): an
// account's collections (public; discoverable ones only unless it is the viewer's own, none when the owner blocks the
// viewer) and the collections an account is featured in (the viewer's own account only). Offset-paged, 40 by default.
import { routeGroup } from "../../../route-group";
import { refreshFeaturedIfStale } from "../../../federation/remote/featured-collection";
import { renderCollections } from "../../../entities/accounts/collection";
import { forbidden, notFound } from "../../../lib/http/errors";
import { readOffsetPage, setOffsetLinks } from "../../../lib/http/pagination";
import { pathId } from "../../../lib/http/params";
import { me, requireUser, scopeIfToken, viewerAccountId } from "../../../oauth/guard";
import { getAccount } from "../../../queries/accounts/accounts";
import { accountCollections, collectionsFeaturing, ownerBlocksViewer } from "../../../queries/accounts/collections";

const r = routeGroup();

r.get("/:id/collections", scopeIfToken("read:collections"), async (c) => {
  const db = c.get("db");
  const viewer = viewerAccountId(c);
  const account = await getAccount(db, pathId(c));
  if (!account || account.suspendedAt) throw notFound();
  const page = await readOffsetPage(c, 40, 80);
  if (await ownerBlocksViewer(db, account.id, viewer)) return c.json({ collections: [] });
  // A remote account's collections are read from its server at most every few hours, by the job that reads its pins.
  if (account.domain) await refreshFeaturedIfStale(db, c.get("fx"), account);
  const rows = await accountCollections(db, account.id, viewer === account.id, page);
  setOffsetLinks(c, page, rows.length);
  return c.json({ collections: await renderCollections(db, c.get("config"), rows, viewer) });
});

r.get("/:id/in_collections", requireUser("read:collections"), async (c) => {
  const db = c.get("db");
  const v = me(c);
  const id = pathId(c);
  if (id !== v.account.id) throw (await getAccount(db, id)) ? forbidden() : notFound();
  const page = await readOffsetPage(c, 40, 80);
  const rows = await collectionsFeaturing(db, id, page);
  setOffsetLinks(c, page, rows.length);
  return c.json({ collections: await renderCollections(db, c.get("config"), rows, id) });
});

export default r;
