// Tern's API for account imports (Mastodon has them only as the /settings/imports form, which Tern also serves:
// src/web/settings-data.tsx):
//   POST /api/tern/imports      multipart `data` (CSV), `type` (following | blocking | muting | domain_blocking |
//                               bookmarks | lists), `mode` (merge | overwrite) → 202 and the import
//   GET  /api/tern/imports      (read) the account's latest imports, newest first
//   GET  /api/tern/imports/:id  (read) one import: total_items, processed_items, imported_items, failed_items, state
//
// The scope must cover everything the file does (docs/security-coverage.md, P13): an import of one type takes the write
// scope of what its rows do, merged or overwriting (`IMPORT_SCOPES`); a list import also follows each account it adds
// (Mastodon's Import::RowService), so it takes write:follows besides write:lists. The type is only known from the body:
// a token with none of these scopes is refused before the body is read, the type's own scopes are checked once it is
// parsed, before anything is written. The import records themselves (type, file name, counts) are read with `read`.
import { routeGroup } from "../../route-group";
import { notFound } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import { me, requireEveryScope, requireUser } from "../../oauth/guard";
import { renderImport } from "../../entities/accounts/account-data";
import type { ImportType } from "../../services/data/import-csv";
import { importOf, importsOf } from "../../services/data/imports";
import { importUpload } from "./data-responses";

const IMPORT_SCOPES: Record<ImportType, readonly string[]> = {
  following: ["write:follows"],
  blocking: ["write:blocks"],
  muting: ["write:mutes"],
  domain_blocking: ["write:blocks"],
  bookmarks: ["write:bookmarks"],
  lists: ["write:lists", "write:follows"],
};

const ANY_IMPORT_SCOPE = [...new Set(Object.values(IMPORT_SCOPES).flat())];

const r = routeGroup();

r.post("/", requireUser(...ANY_IMPORT_SCOPE), async (c) => {
  const imp = await importUpload(c, me(c).account.id, (type) => requireEveryScope(c, IMPORT_SCOPES[type]));
  return c.json(renderImport(imp), 202);
});

r.get("/", requireUser("read"), async (c) => c.json((await importsOf(c.get("db"), me(c).account.id)).map(renderImport)));

r.get("/:id", requireUser("read"), async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  return c.json(renderImport(await importOf(c.get("db"), me(c).account.id, id)));
});

export default r;
