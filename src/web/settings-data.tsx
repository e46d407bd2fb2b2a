// The settings pages for an account's data, in the signed-in web session, at Mastodon's paths: /settings/exports
// (the CSV downloads at /settings/exports/<kind>.csv and the archive) and /settings/imports (the upload form and the
// progress of each import). Plain forms with the session's CSRF token; no client-side JavaScript.
import { routeGroup } from "../route-group";
import type { Ctx } from "../context";
import { ApiError, notFound } from "../lib/http/errors";
import { readParams } from "../lib/http/params";
import { archiveDownload, csvDownload, IMPORT_BODY_LIMIT, importUpload } from "../api/tern/data-responses";
import { latestArchive, requestArchive } from "../services/data/export-archive";
import { EXPORT_KINDS, isExportKind } from "../services/data/export-csv";
import { IMPORT_TYPES } from "../services/data/import-csv";
import { importsOf } from "../services/data/imports";
import { renderImport } from "../entities/accounts/account-data";
import type { BackupRow } from "../db/schema";
import { Layout, page } from "./layout";
import type { WebSession } from "./session-store";
import { postSession, settingsGet } from "./settings/kit";
import { ErrorBox, PostForm, Table } from "./form-parts";

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

function ExportsPage(p: { siteTitle: string; csrf: string; archive: BackupRow | null; error?: string }) {
  const a = p.archive;
  return (
    <Layout title="Export" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Export your data</h1>
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
        <p class="muted">Your profile, posts, media, favourites and bookmarks in ActivityPub format (a zip file).</p>
        <ErrorBox text={p.error} />
        {a ? (
          <p id="archive-state">
            {a.state === "ready" ? (
              <a href="/settings/exports/archive.zip">Download the archive of {new Date(a.createdAt).toISOString()}</a>
            ) : (
              `Archive: ${a.state}`
            )}
          </p>
        ) : null}
        <PostForm action="/settings/exports/archive" csrf={p.csrf}>
          <button type="submit">Request your archive</button>
        </PostForm>
      </div>
    </Layout>
  );
}

function ImportsPage(p: { siteTitle: string; csrf: string; imports: ReturnType<typeof renderImport>[]; error?: string }) {
  return (
    <Layout title="Import" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Import</h1>
        <ErrorBox text={p.error} />
        <PostForm action="/settings/imports" csrf={p.csrf} enctype="multipart/form-data">
          <label for="type">Import type</label>
          <select id="type" name="type">
            {IMPORT_TYPES.map((t) => (
              <option value={t}>{t.replace("_", " ")}</option>
            ))}
          </select>
          <label for="data">CSV file</label>
          <input id="data" type="file" name="data" accept=".csv,text/csv" />
          <label>
            <input type="radio" name="mode" value="merge" checked /> Merge (keep existing records, add new ones)
          </label>
          <label>
            <input type="radio" name="mode" value="overwrite" /> Overwrite (replace existing records with the file's)
          </label>
          <button type="submit">Upload</button>
        </PostForm>
      </div>
      <div class="card">
        <h2>Recent imports</h2>
        <Table headers={["Type", "Mode", "State", "Processed", "Failed"]} id="imports">
          {p.imports.map((i) => (
            <tr>
              <td>{i.type}</td>
              <td>{i.mode}</td>
              <td>{i.state}</td>
              <td>
                {i.processed_items} / {i.total_items}
              </td>
              <td>{i.failed_items}</td>
            </tr>
          ))}
        </Table>
      </div>
    </Layout>
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

const importsPage = async (c: Ctx, s: WebSession, error?: string, status: 200 | 422 = 200) =>
  page(
    c,
    <ImportsPage siteTitle={c.get("config").title} csrf={s.csrf} imports={(await importsOf(c.get("db"), s.account.id)).map(renderImport)} error={error} />,
    status,
  );

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
