// /settings/import_archive: bring your posts from a Mastodon (or Tern) account archive (issue 33). The upload form (the
// zip, or its outbox.json alone), then each import's progress: its phase, the items processed of all, imported,
// skipped (boosts, likes and bookmarks of statuses this server does not have; items already imported) and failed, its
// error, and a button to resume one that failed. The import itself: src/services/data/import-archive*.ts; the API twin:
// src/api/tern/archive-imports.ts. Plain forms with the session's CSRF token, no client-side JavaScript.
import { routeGroup } from "../../route-group";
import type { Ctx } from "../../context";
import { type TernArchiveImport, renderArchiveImport } from "../../entities/accounts/account-data";
import { ApiError, notFound } from "../../lib/http/errors";
import { readParams } from "../../lib/http/params";
import { parseId } from "../../lib/text/ids";
import { ARCHIVE_UPLOAD_MAX_BYTES, archiveImportsOf, resumeArchiveImport } from "../../services/data/import-archive";
import { archiveUpload } from "../../api/tern/data-responses";
import { page } from "../layout";
import type { WebSession } from "../session-store";
import { Check, NamedCell, PostForm, RowsTable } from "../form-parts";
import { postSession, SettingsLayout, settingsGet, when } from "./kit";

const PHASES: Record<string, string> = {
  split: "Reading the archive",
  statuses: "Posts",
  likes: "Favourites",
  bookmarks: "Bookmarks",
  threads: "Threads",
  done: "Done",
};

const STATES: Record<string, string> = { in_progress: "In progress", finished: "Finished", failed: "Failed" };

export function ArchiveImportPage(p: { siteTitle: string; csrf: string; acct: string; imports: TernArchiveImport[]; error?: string }) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Import an archive" path="/settings/imports" error={p.error}>
      <div class="card">
        <h1>Import your posts from an archive</h1>
        <p>
          Upload the archive you requested from your old Mastodon server (Preferences → Import and export → Request your archive), or its{" "}
          <code>outbox.json</code> alone when the zip is larger than {ARCHIVE_UPLOAD_MAX_BYTES / 1024 / 1024} MB. Your posts become posts of{" "}
          <strong>@{p.acct}</strong> at their original dates, with their media, polls, threads and visibility. Nobody is notified and nothing is sent to other
          servers. Boosts, favourites and bookmarks come along when their posts are known to this server.
        </p>
        <p class="muted">
          The archive must be of this account or of an account you added as an alias (<a href="/settings/aliases">Moving from another account</a>). Importing
          the same archive again imports nothing twice.
        </p>
        <PostForm action="/settings/import_archive" csrf={p.csrf} enctype="multipart/form-data">
          <label for="data">Archive (zip) or outbox.json</label>
          <input id="data" type="file" name="data" accept=".zip,.json,application/zip,application/json" required />
          <Check name="take_profile" value="1">
            Also take my display name, bio, fields, avatar and header from the archive
          </Check>
          <button type="submit">Import</button>
        </PostForm>
      </div>
      <div class="card">
        <h2>Archive imports</h2>
        <p class="muted">Reload this page to see the progress. A large archive is spread over days, to stay within the database's daily budget.</p>
        <RowsTable
          rows={p.imports}
          empty="No archive imports yet."
          headers={["File", "State", "Done", "Imported", "Skipped", "Failed", ""]}
          row={(i) => (
            <tr data-archive-import={i.id}>
              <NamedCell name={i.original_filename ?? "archive"} detail={when(Date.parse(i.created_at))} />
              <td>
                {STATES[i.state] ?? i.state}
                {i.state === "in_progress" ? ` · ${PHASES[i.phase] ?? i.phase}` : ""}
                {i.error ? <div class="muted">{i.error}</div> : null}
              </td>
              <td>
                {i.processed_items} of {i.total_items}
              </td>
              <td>{i.imported_items}</td>
              <td>{i.skipped_items}</td>
              <td>{i.failed_items}</td>
              <td>
                {i.state === "failed" && i.phase !== "done" ? (
                  <PostForm action={`/settings/import_archive/${i.id}/resume`} csrf={p.csrf}>
                    <button type="submit">Resume</button>
                  </PostForm>
                ) : null}
              </td>
            </tr>
          )}
        />
      </div>
    </SettingsLayout>
  );
}

const r = routeGroup();

async function archivePage(c: Ctx, s: WebSession, error?: string, status: 200 | 422 = 200) {
  const imports = (await archiveImportsOf(c.get("db"), s.account.id)).map(renderArchiveImport);
  return page(c, <ArchiveImportPage siteTitle={c.get("config").title} csrf={s.csrf} acct={s.account.username} imports={imports} error={error} />, status);
}

r.get("/settings/import_archive", settingsGet(archivePage));

r.post("/settings/import_archive", async (c) => {
  const declared = Number(c.req.header("content-length") ?? 0);
  if (declared > ARCHIVE_UPLOAD_MAX_BYTES + 64 * 1024) {
    throw new ApiError(413, `Validation failed: File is too large (the limit is ${ARCHIVE_UPLOAD_MAX_BYTES / 1024 / 1024} MB)`);
  }
  const s = await postSession(c, await readParams(c, ARCHIVE_UPLOAD_MAX_BYTES + 64 * 1024));
  if (s instanceof Response) return s;
  try {
    await archiveUpload(c, s.account);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return archivePage(c, s, e.message, 422);
  }
  return c.redirect("/settings/import_archive", 303);
});

r.post("/settings/import_archive/:id/resume", async (c) => {
  const s = await postSession(c, await readParams(c));
  if (s instanceof Response) return s;
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  try {
    await resumeArchiveImport(c.get("db"), c.get("fx"), s.account.id, id);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status === 404) throw e;
    return archivePage(c, s, e.message, 422);
  }
  return c.redirect("/settings/import_archive", 303);
});

export default r;
