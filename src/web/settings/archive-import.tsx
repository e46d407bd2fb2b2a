// /settings/import_archive: bring your posts from a Mastodon (or Tern) account archive (issue 33). The upload form (the
// zip, or its outbox.json alone), then each import's progress: its phase, the items processed of all, imported,
// skipped (boosts, likes and bookmarks of statuses this server does not have; items already imported) and failed, its
// error, and a button to resume one that failed. The import itself: src/services/data/import-archive*.ts; the API twin:
// src/api/tern/archive-imports.ts. Plain forms with the session's CSRF token; one script (its nonce in the page's CSP)
// sends an archive over 100 MB in parts, through the session's routes below.
import { routeGroup } from "../../route-group";
import type { Ctx } from "../../context";
import { type TernArchiveImport, renderArchiveImport } from "../../entities/accounts/account-data";
import { ApiError, notFound } from "../../lib/http/errors";
import { readParams } from "../../lib/http/params";
import { parseId } from "../../lib/text/ids";
import { ARCHIVE_UPLOAD_MAX_BYTES, archiveImportsOf, resumeArchiveImport } from "../../services/data/import-archive";
import { archiveUpload } from "../../api/tern/data-responses";
import { abortArchiveUpload, beginArchiveUpload, completeArchiveUpload, putArchivePart, uploadPartsOf } from "../../services/data/import-archive-upload";
import { randomToken } from "../../lib/security/crypto";
import { raw } from "hono/html";
import { declaredBody } from "../../lib/http/capped-body";
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

/** Parts of an archive uploaded from this page: R2 wants every part but the last of one size, at least 5 MiB. */
export const ARCHIVE_WEB_PART_BYTES = 50 * 1024 * 1024;

/**
 * The page's one script: a file over `limit` is not posted whole (the platform takes 100 MB a request) but sent in parts
 * through the session's own routes below, as the API's multipart upload (src/api/tern/archive-imports.ts) takes them;
 * smaller files, and browsers without JavaScript, post the form as it is.
 */
function uploadScript(limit: number, partBytes: number): string {
  return `(() => {
  const form = document.getElementById("archive-form");
  const status = document.getElementById("archive-status");
  const csrf = form.querySelector('input[name="csrf"]').value;
  const call = async (method, path, body, type) => {
    const res = await fetch(path, { method, body, credentials: "same-origin", headers: { "x-csrf-token": csrf, ...(type ? { "content-type": type } : {}) } });
    let data = {};
    try { data = await res.json(); } catch {}
    if (!res.ok) throw new Error(data.error || "HTTP " + res.status);
    return data;
  };
  form.addEventListener("submit", async (event) => {
    const file = form.querySelector('input[type="file"]').files[0];
    if (!file || file.size <= ${limit}) return;
    event.preventDefault();
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    let id = null;
    try {
      const takeProfile = !!form.querySelector('input[name="take_profile"]')?.checked;
      id = (await call("POST", "/settings/import_archive/uploads", JSON.stringify({ filename: file.name, take_profile: takeProfile }), "application/json")).id;
      const count = Math.ceil(file.size / ${partBytes});
      const parts = [];
      for (let n = 1; n <= count; n++) {
        status.textContent = "Uploading part " + n + " of " + count + "…";
        const part = await call("PUT", "/settings/import_archive/uploads/" + id + "/parts/" + n, file.slice((n - 1) * ${partBytes}, n * ${partBytes}), "application/octet-stream");
        parts.push({ part_number: n, etag: part.etag });
      }
      status.textContent = "Checking the archive…";
      await call("POST", "/settings/import_archive/uploads/" + id + "/complete", JSON.stringify({ parts }), "application/json");
      location.assign("/settings/import_archive");
    } catch (e) {
      if (id) await call("DELETE", "/settings/import_archive/uploads/" + id).catch(() => {});
      status.textContent = "The upload failed: " + e.message;
      button.disabled = false;
    }
  });
})();`;
}

export function ArchiveImportPage(p: { siteTitle: string; csrf: string; nonce: string; acct: string; imports: TernArchiveImport[]; error?: string }) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Import an archive" path="/settings/imports" error={p.error}>
      <div class="card">
        <h1>Import your posts from an archive</h1>
        <p>
          Upload the archive you requested from your old Mastodon server (Preferences → Import and export → Request your archive). An archive larger than{" "}
          {ARCHIVE_UPLOAD_MAX_BYTES / 1024 / 1024} MB is sent in parts, which needs JavaScript in this page; without it, upload its <code>outbox.json</code>{" "}
          alone (your posts without their media). Your posts become posts of <strong>@{p.acct}</strong> at their original dates, with their media, polls,
          threads and visibility. Nobody is notified and nothing is sent to other servers. Boosts, favourites and bookmarks come along when their posts are
          known to this server.
        </p>
        <p class="muted">
          The archive must be of this account or of an account you added as an alias (<a href="/settings/aliases">Moving from another account</a>). Importing
          the same archive again imports nothing twice.
        </p>
        <PostForm action="/settings/import_archive" csrf={p.csrf} enctype="multipart/form-data" id="archive-form">
          <label for="data">Archive (zip) or outbox.json</label>
          <input id="data" type="file" name="data" accept=".zip,.json,application/zip,application/json" required />
          <Check name="take_profile" value="1">
            Also take my display name, bio, fields, avatar and header from the archive
          </Check>
          <button type="submit">Import</button>
          <p id="archive-status" class="muted" role="status" />
        </PostForm>
        <script nonce={p.nonce}>{raw(uploadScript(ARCHIVE_UPLOAD_MAX_BYTES, ARCHIVE_WEB_PART_BYTES))}</script>
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
  const nonce = randomToken(16);
  return page(
    c,
    <ArchiveImportPage siteTitle={c.get("config").title} csrf={s.csrf} nonce={nonce} acct={s.account.username} imports={imports} error={error} />,
    status,
    { scriptNonce: nonce },
  );
}

/** The session of a request of the page's script: its CSRF token comes in a header (a part's body is the file). */
const scriptSession = (c: Ctx) => postSession(c, { csrf: c.req.header("x-csrf-token") });

const uploadIdOf = (raw: string | undefined) => {
  const id = parseId(raw);
  if (!id) throw notFound();
  return id;
};

// The script's upload in parts: begin, one part, complete, give up (services: src/services/data/import-archive-upload.ts).
r.post("/settings/import_archive/uploads", async (c) => {
  const s = await scriptSession(c);
  if (s instanceof Response) return s;
  const p = await readParams(c);
  const filename = typeof p.filename === "string" ? p.filename.slice(0, 255) : null;
  const row = await beginArchiveUpload(c.get("db"), c.env, s.account, { filename, takeProfile: p.take_profile === true || p.take_profile === "1" });
  return c.json(renderArchiveImport(row), 201);
});

r.put("/settings/import_archive/uploads/:id/parts/:n", async (c) => {
  const s = await scriptSession(c);
  if (s instanceof Response) return s;
  const { body, size } = declaredBody(c.req.raw);
  return c.json(await putArchivePart(c.get("db"), c.env, s.account, uploadIdOf(c.req.param("id")), Number(c.req.param("n")), body, size));
});

r.post("/settings/import_archive/uploads/:id/complete", async (c) => {
  const s = await scriptSession(c);
  if (s instanceof Response) return s;
  const p = await readParams(c);
  const row = await completeArchiveUpload(c.get("db"), c.env, c.get("fx"), s.account, uploadIdOf(c.req.param("id")), uploadPartsOf(p.parts));
  return c.json(renderArchiveImport(row), 202);
});

r.delete("/settings/import_archive/uploads/:id", async (c) => {
  const s = await scriptSession(c);
  if (s instanceof Response) return s;
  await abortArchiveUpload(c.get("db"), c.env, s.account, uploadIdOf(c.req.param("id")));
  return c.json({});
});

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
