// Tern's API for importing an account archive (Mastodon's archive export read back; issue 33):
//   POST /api/tern/archive_imports            the archive zip, or its outbox.json alone: the raw body (with
//                                             Content-Length; `?take_profile=true&filename=…`) or multipart `data`
//                                             (+ `take_profile`) → 202 and the import
//   GET  /api/tern/archive_imports            (read) the account's archive imports, newest first
//   GET  /api/tern/archive_imports/:id        (read) one: phase, total/processed/imported/skipped/failed items, error
//   POST /api/tern/archive_imports/:id/resume a failed import goes on from where it stopped
//
// An import writes statuses of every visibility, favourites, bookmarks and (if asked) the profile: it takes full
// `write`, as asking for an archive does (src/api/tern/exports.ts).
import { routeGroup } from "../../route-group";
import { notFound } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import { me, requireUser } from "../../oauth/guard";
import { renderArchiveImport } from "../../entities/accounts/account-data";
import { archiveImportOf, archiveImportsOf, resumeArchiveImport } from "../../services/data/import-archive";
import { archiveUpload } from "./data-responses";

const r = routeGroup();

r.post("/", requireUser("write"), async (c) => c.json(renderArchiveImport(await archiveUpload(c, me(c).account)), 202));

r.get("/", requireUser("read"), async (c) => c.json((await archiveImportsOf(c.get("db"), me(c).account.id)).map(renderArchiveImport)));

r.get("/:id", requireUser("read"), async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  return c.json(renderArchiveImport(await archiveImportOf(c.get("db"), me(c).account.id, id)));
});

r.post("/:id/resume", requireUser("write"), async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  return c.json(renderArchiveImport(await resumeArchiveImport(c.get("db"), c.get("fx"), me(c).account.id, id)), 202);
});

export default r;
