// Tern's API for account imports (Mastodon has them only as the /settings/imports form, which Tern also serves:
// src/web/settings-data.tsx):
//   POST /api/tern/imports      (write) multipart `data` (CSV), `type` (following | blocking | muting |
//                               domain_blocking | bookmarks | lists), `mode` (merge | overwrite) → 202 and the import
//   GET  /api/tern/imports      (read) the account's latest imports, newest first
//   GET  /api/tern/imports/:id  (read) one import: total_items, processed_items, imported_items, failed_items, state
import { routeGroup } from "../../route-group";
import { notFound } from "../../lib/errors";
import { parseId } from "../../lib/ids";
import { me, requireUser } from "../../oauth/guard";
import { renderImport } from "../../entities/account-data";
import { importOf, importsOf } from "../../services/imports";
import { importUpload } from "./data-responses";

const r = routeGroup();

r.post("/", requireUser("write"), async (c) => c.json(renderImport(await importUpload(c, me(c).account.id)), 202));

r.get("/", requireUser("read"), async (c) => c.json((await importsOf(c.get("db"), me(c).account.id)).map(renderImport)));

r.get("/:id", requireUser("read"), async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  return c.json(renderImport(await importOf(c.get("db"), me(c).account.id, id)));
});

export default r;
