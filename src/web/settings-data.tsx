// The settings pages for an account's data, in the signed-in web session, at Mastodon's paths: /settings/exports
// (the CSV downloads at /settings/exports/<kind>.csv and the archive) and /settings/imports (the upload form, the
// progress of each import and the rows that failed, with why). Plain forms with the session's CSRF token; no
// client-side JavaScript. Both are settings pages: the settings navigation and form style (SettingsLayout).
import { routeGroup } from "../route-group";
import type { Ctx } from "../context";
import { ApiError, notFound } from "../lib/http/errors";
import { readParams } from "../lib/http/params";
import { archiveDownload, csvDownload, IMPORT_BODY_LIMIT, importUpload } from "../api/tern/data-responses";
import { latestArchive, requestArchive } from "../services/data/export-archive";
import { EXPORT_KINDS, isExportKind } from "../services/data/export-csv";
import { IMPORT_TYPES, type ImportType } from "../services/data/import-csv";
import { type ImportFailure, importFailures, importsOf } from "../services/data/imports";
import { renderImport } from "../entities/accounts/account-data";
import type { BackupRow } from "../db/schema";
import { page } from "./layout";
import type { WebSession } from "./session-store";
import { postSession, SettingsLayout, settingsGet } from "./settings/kit";
import { Check, ErrorBox, humanTime, NamedCell, PostForm, RowsTable, Table } from "./form-parts";

const r = routeGroup();

const LABELS: Record<(typeof EXPORT_KINDS)[number], string> = {
  follows: "Follows",
  followers: "Followers",
  lists: "Lists",
  blocks: "You block",
  mutes: "You mute",
  domain_blocks: "Domain blocks",
  bookmarks: "Bookmarks",
};

/** What each import type's file holds (Mastodon's names for them). */
const IMPORT_LABELS: Record<ImportType, string> = {
  following: "Following list",
  blocking: "Blocking list",
  muting: "Muting list",
  domain_blocking: "Domain blocking list",
  bookmarks: "Bookmarks",
  lists: "Lists",
};

const ARCHIVE_STATES: Record<string, string> = {
  pending: "Your archive is being prepared. Come back to this page in a few minutes.",
  failed: "Making your archive failed. You can ask for a new one.",
  expired: "Your last archive was replaced or removed. You can ask for a new one.",
};

function ExportsPage(p: { siteTitle: string; csrf: string; archive: BackupRow | null; error?: string }) {
  const a = p.archive;
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Export" path="/settings/exports">
      <div class="card">
        <h1>Export your data</h1>
        <p class="muted">CSV files that this server or Mastodon can import again.</p>
        <ul>
          {EXPORT_KINDS.map((k) => (
            <li>
              <a href={`/settings/exports/${k}.csv`}>{LABELS[k]}</a> (CSV)
            </li>
          ))}
        </ul>
      </div>
      <div class="card">
        <h2>Archive</h2>
        <p class="muted">Your profile, posts, media, favourites and bookmarks in ActivityPub format (a zip file). One archive every 6 days.</p>
        <ErrorBox text={p.error} />
        {a ? (
          <p id="archive-state">
            {a.state === "ready" ? (
              <a href="/settings/exports/archive.zip">Download your archive of {humanTime(a.createdAt)}</a>
            ) : (
              (ARCHIVE_STATES[a.state] ?? `Archive: ${a.state}`)
            )}
          </p>
        ) : null}
        <PostForm action="/settings/exports/archive" csrf={p.csrf}>
          <button type="submit">Request your archive</button>
        </PostForm>
      </div>
    </SettingsLayout>
  );
}

type ImportView = ReturnType<typeof renderImport>;

const typeLabel = (i: ImportView) => IMPORT_LABELS[i.type as ImportType] ?? i.type;

function ImportsPage(p: { siteTitle: string; csrf: string; imports: ImportView[]; failures: Map<string, ImportFailure[]>; error?: string }) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Import" path="/settings/imports">
      <div class="card">
        <h1>Import</h1>
        <p class="muted">A CSV file exported from this server or from Mastodon. A file that cannot be read is refused whole.</p>
        <p>
          Your posts, from the archive of your old account: <a href="/settings/import_archive">Import an archive</a>.
        </p>
        <ErrorBox text={p.error} />
        <PostForm action="/settings/imports" csrf={p.csrf} enctype="multipart/form-data">
          <label for="type">What the file holds</label>
          <select id="type" name="type">
            {IMPORT_TYPES.map((t) => (
              <option value={t}>{IMPORT_LABELS[t]}</option>
            ))}
          </select>
          <label for="data">CSV file</label>
          <input id="data" type="file" name="data" accept=".csv,text/csv" required />
          <fieldset>
            <legend>What you already have</legend>
            <Check type="radio" name="mode" value="merge" checked>
              Merge: keep it, and add what the file adds
            </Check>
            <Check type="radio" name="mode" value="overwrite">
              Overwrite: replace it with what the file holds
            </Check>
          </fieldset>
          <button type="submit">Upload</button>
        </PostForm>
      </div>
      <div class="card">
        <h2>Recent imports</h2>
        <RowsTable
          rows={p.imports}
          empty="No imports yet."
          headers={["File", "Mode", "State", "Done", "Failed"]}
          row={(i) => (
            <tr data-import={i.id}>
              <NamedCell name={i.original_filename ?? "file"} detail={`${typeLabel(i)} · ${humanTime(Date.parse(i.created_at))}`} />
              <td>{i.mode === "overwrite" ? "Overwrite" : "Merge"}</td>
              <td>{i.state === "finished" ? "Finished" : "In progress"}</td>
              <td>
                {i.processed_items} of {i.total_items}
              </td>
              <td>{i.failed_items}</td>
            </tr>
          )}
        />
      </div>
      {p.imports.map((i) => {
        const rows = p.failures.get(i.id) ?? [];
        return rows.length ? (
          <div class="card" data-failures={i.id}>
            <h2>
              Rows of {i.original_filename ?? "the file"} ({typeLabel(i)}) that failed
            </h2>
            <Table headers={["Row", "Entry", "Why"]}>
              {rows.map((f) => (
                <tr>
                  <td>{f.row}</td>
                  <td>
                    <code>{f.subject}</code>
                  </td>
                  <td>{f.error}</td>
                </tr>
              ))}
            </Table>
            {i.failed_items > rows.length ? <p class="muted">And {i.failed_items - rows.length} more.</p> : null}
          </div>
        ) : null;
      })}
    </SettingsLayout>
  );
}

r.get(
  "/exports",
  settingsGet(async (c, s) => {
    const archive = await latestArchive(c.get("db"), s.account.id);
    return page(c, <ExportsPage siteTitle={c.get("config").title} csrf={s.csrf} archive={archive} />);
  }),
);

r.get(
  "/exports/archive.zip",
  settingsGet(async (c, s) => archiveDownload(c, await latestArchive(c.get("db"), s.account.id))),
);

r.post("/exports/archive", async (c) => {
  const s = await postSession(c, await readParams(c));
  if (s instanceof Response) return s;
  try {
    await requestArchive(c.get("db"), c.get("fx"), s.account.id);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    const archive = await latestArchive(c.get("db"), s.account.id);
    return page(c, <ExportsPage siteTitle={c.get("config").title} csrf={s.csrf} archive={archive} error={e.message} />, 422);
  }
  return c.redirect("/settings/exports", 303);
});

r.get(
  "/exports/:file{[a-z_]+\\.csv}",
  settingsGet((c, s) => {
    const kind = (c.req.param("file") ?? "").slice(0, -4);
    if (!isExportKind(kind)) throw notFound();
    return csvDownload(c, s.account.id, kind);
  }),
);

const importsPage = async (c: Ctx, s: WebSession, error?: string, status: 200 | 422 = 200) => {
  const db = c.get("db");
  const imports = await importsOf(db, s.account.id);
  const failures = await importFailures(db, imports);
  return page(c, <ImportsPage siteTitle={c.get("config").title} csrf={s.csrf} imports={imports.map(renderImport)} failures={failures} error={error} />, status);
};

r.get(
  "/imports",
  settingsGet((c, s) => importsPage(c, s)),
);

r.post("/imports", async (c) => {
  const s = await postSession(c, await readParams(c, IMPORT_BODY_LIMIT));
  if (s instanceof Response) return s;
  try {
    await importUpload(c, s.account.id);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return importsPage(c, s, e.message, 422);
  }
  return c.redirect("/settings/imports", 303);
});

export default r;
