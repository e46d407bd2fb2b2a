// Tern's API for importing an account archive (Mastodon's archive export read back; issue 33):
//   POST /api/tern/archive_imports            the archive zip, or its outbox.json alone: the raw body (with
//                                             Content-Length; `?take_profile=true&filename=…`) or multipart `data`
//                                             (+ `take_profile`) → 202 and the import
//   GET  /api/tern/archive_imports            (read) the account's archive imports, newest first
//   GET  /api/tern/archive_imports/:id        (read) one: phase, total/processed/imported/skipped/failed items, error
//   POST /api/tern/archive_imports/:id/resume a failed import goes on from where it stopped
// Larger than one request (100 MB), through an R2 multipart upload (src/services/data/import-archive-upload.ts):
//   POST   /api/tern/archive_imports/uploads                    `filename`, `take_profile` → 201, the import (uploading)
//   PUT    /api/tern/archive_imports/uploads/:id/parts/:n       the raw part (Content-Length; 5 MiB at least but the
//                                                              last, 100 MB at most) → {part_number, etag}
//   POST   /api/tern/archive_imports/uploads/:id/complete       JSON {parts: [{part_number, etag}]} → 202 and the
//                                                              import, or 422 with nothing left stored
//   DELETE /api/tern/archive_imports/uploads/:id                gives the upload up
//
// An import writes statuses of every visibility, favourites, bookmarks and (if asked) the profile: it takes full
// `write`, as asking for an archive does (src/api/tern/exports.ts).
import { routeGroup } from "../../route-group";
import { notFound } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import { me, requireUser } from "../../oauth/guard";
import { renderArchiveImport } from "../../entities/accounts/account-data";
import { archiveImportOf, archiveImportsOf, resumeArchiveImport } from "../../services/data/import-archive";
import { abortArchiveUpload, beginArchiveUpload, completeArchiveUpload, putArchivePart, uploadPartsOf } from "../../services/data/import-archive-upload";
import { declaredBody } from "../../lib/http/capped-body";
import { readParams } from "../../lib/http/params";
import { archiveUpload } from "./data-responses";

const r = routeGroup();

r.post("/", requireUser("write"), async (c) => c.json(renderArchiveImport(await archiveUpload(c, me(c).account)), 202));

const idOf = (raw: string | undefined) => {
  const id = parseId(raw);
  if (!id) throw notFound();
  return id;
};
const truthy = (v: unknown) => typeof v === "string" && !["", "0", "f", "false", "off"].includes(v.toLowerCase());

r.post("/uploads", requireUser("write"), async (c) => {
  const p = await readParams(c);
  const filename = typeof p.filename === "string" ? p.filename : null;
  const row = await beginArchiveUpload(c.get("db"), c.env, me(c).account, { filename, takeProfile: truthy(p.take_profile) || p.take_profile === true });
  return c.json(renderArchiveImport(row), 201);
});

r.put("/uploads/:id/parts/:n", requireUser("write"), async (c) => {
  const { body, size } = declaredBody(c.req.raw);
  const part = await putArchivePart(c.get("db"), c.env, me(c).account, idOf(c.req.param("id")), Number(c.req.param("n")), body, size);
  return c.json(part);
});

r.post("/uploads/:id/complete", requireUser("write"), async (c) => {
  const p = await readParams(c);
  const row = await completeArchiveUpload(c.get("db"), c.env, c.get("fx"), me(c).account, idOf(c.req.param("id")), uploadPartsOf(p.parts));
  return c.json(renderArchiveImport(row), 202);
});

r.delete("/uploads/:id", requireUser("write"), async (c) => {
  await abortArchiveUpload(c.get("db"), c.env, me(c).account, idOf(c.req.param("id")));
  return c.json({});
});

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
