// Tern's API for account exports (Mastodon serves them only to its web session, at /settings/exports/*.csv, which
// Tern also does: src/web/settings-data.tsx):
//   GET  /api/tern/exports/{follows,followers,lists,blocks,mutes,domain_blocks,bookmarks}.csv
//   GET  /api/tern/exports/archive        the latest archive's state ({id,state,created_at,finished_at,size}) or 404
//   POST /api/tern/exports/archive        asks for a new archive, built in the background; 422 within 6 days
//   GET  /api/tern/exports/archive.zip    the ready archive, streamed from R2 (404 until ready)
//
// The scope must cover everything in the file (docs/security-coverage.md, P13):
// - a CSV holds one kind of relation, so its resource's read scope suffices (`SCOPES`, as the API that lists the same
//   rows asks: read:follows for /api/v1/accounts/relationships, read:blocks for blocks and domain blocks, ...);
// - the archive holds the profile, every status whatever its visibility (direct and followers-only included), the
//   likes and the bookmarks: reading it, or its state, takes full `read` (read:accounts alone let a profile app take
//   the direct messages). Asking for a new one takes full `write`: it replaces the account's only archive and spends its
//   one request in 6 days, and the union of the parts' write scopes (accounts, statuses, favourites, bookmarks) would
//   be most of `write` anyway, while `write` keeps covering whatever the archive holds later.
import { routeGroup } from "../../route-group";
import { notFound } from "../../lib/http/errors";
import { me, requireUser } from "../../oauth/guard";
import { renderArchive } from "../../entities/accounts/account-data";
import { latestArchive, requestArchive } from "../../services/data/export-archive";
import { type ExportKind, isExportKind } from "../../services/data/export-csv";
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

r.get("/archive", requireUser("read"), async (c) => {
  const b = await latestArchive(c.get("db"), me(c).account.id);
  if (!b) throw notFound();
  return c.json(renderArchive(b));
});

r.post("/archive", requireUser("write"), async (c) => {
  const b = await requestArchive(c.get("db"), c.get("fx"), me(c).account.id);
  return c.json(renderArchive(b), 202);
});

r.get("/archive.zip", requireUser("read"), async (c) => archiveDownload(c, await latestArchive(c.get("db"), me(c).account.id)));

r.get("/:file{[a-z_]+\\.csv}", async (c) => {
  const kind = c.req.param("file").slice(0, -4);
  if (!isExportKind(kind)) throw notFound();
  await requireUser(SCOPES[kind])(c, async () => {}); // the scope depends on the file
  return csvDownload(c, me(c).account.id, kind);
});

export default r;
