// Tern's API for account exports (Mastodon serves them only to its web session, at /settings/exports/*.csv, which
// Tern also does: src/web/settings-data.tsx). A token with read scope (or the resource's read:* scope) fetches:
//   GET  /api/tern/exports/{follows,followers,lists,blocks,mutes,domain_blocks,bookmarks}.csv
//   GET  /api/tern/exports/archive        the latest archive's state ({id,state,created_at,finished_at,size}) or 404
//   POST /api/tern/exports/archive        (write) asks for a new archive, built in the background; 422 within 6 days
//   GET  /api/tern/exports/archive.zip    the ready archive, streamed from R2 (404 until ready)
import { routeGroup } from "../../route-group";
import { notFound } from "../../lib/errors";
import { me, requireUser } from "../../oauth/guard";
import { renderArchive } from "../../entities/account-data";
import { latestArchive, requestArchive } from "../../services/export-archive";
import { type ExportKind, isExportKind } from "../../services/export-csv";
import { archiveDownload, csvDownload } from "./data-responses";

const r = routeGroup();

const SCOPES: Record<ExportKind, string> = {
  follows: "read:follows",
  followers: "read:follows",
  lists: "read:lists",
  blocks: "read:blocks",
  mutes: "read:mutes",
  domain_blocks: "read:blocks",
  bookmarks: "read:bookmarks",
};

r.get("/archive", requireUser("read:accounts"), async (c) => {
  const b = await latestArchive(c.get("db"), me(c).account.id);
  if (!b) throw notFound();
  return c.json(renderArchive(b));
});

r.post("/archive", requireUser("write:accounts"), async (c) => {
  const b = await requestArchive(c.get("db"), c.get("fx"), me(c).account.id);
  return c.json(renderArchive(b), 202);
});

r.get("/archive.zip", requireUser("read:accounts"), async (c) => archiveDownload(c, await latestArchive(c.get("db"), me(c).account.id)));

r.get("/:file{[a-z_]+\\.csv}", async (c) => {
  const kind = c.req.param("file").slice(0, -4);
  if (!isExportKind(kind)) throw notFound();
  await requireUser(SCOPES[kind])(c, async () => {}); // the scope depends on the file
  return csvDownload(c, me(c).account.id, kind);
});

export default r;
