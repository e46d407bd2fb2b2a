// What the export/import routes of the API (./exports.ts, ./imports.ts) and of the settings pages
// (src/web/settings-data.tsx) answer alike: a CSV download, the archive download, and an upload read into an import.
import type { Ctx } from "../../context";
import type { AccountRow, ArchiveImportRow, BackupRow } from "../../db/schema";
import { ApiError, notFound, validationFailed } from "../../lib/http/errors";
import { readParams } from "../../lib/http/params";
import { EXPORT_FILENAMES, type ExportKind, exportCsv } from "../../services/data/export-csv";
import { openArchive } from "../../services/data/export-archive";
import { IMPORT_MAX_BYTES, IMPORT_TYPES, type ImportType } from "../../services/data/import-csv";
import { createImport } from "../../services/data/imports";
import { ARCHIVE_UPLOAD_MAX_BYTES, createArchiveImport } from "../../services/data/import-archive";

export function csvDownload(c: Ctx, accountId: string, kind: ExportKind): Response {
  const body = exportCsv(c.get("db"), c.get("config"), accountId, kind);
  return new Response(body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${EXPORT_FILENAMES[kind]}"`,
      "cache-control": "no-store",
    },
  });
}

export async function archiveDownload(c: Ctx, b: BackupRow | null): Promise<Response> {
  const obj = await openArchive(c.env, b);
  if (!obj || !b) throw notFound();
  const stamp = new Date(b.createdAt).toISOString().replace(/[-:]/g, "").slice(0, 15);
  return new Response(obj.body, {
    headers: {
      "content-type": "application/zip",
      "content-length": String(obj.size),
      "content-disposition": `attachment; filename="archive-${stamp}-${b.id}.zip"`,
      "cache-control": "no-store",
    },
  });
}

/** A multipart body a little over the file limit (the other fields and the part headers) is still read. */
export const IMPORT_BODY_LIMIT = IMPORT_MAX_BYTES + 64 * 1024;

/**
 * Multipart `data` (the CSV file), `type` and `mode` (merge | overwrite), as Mastodon's /settings/imports form.
 * `allow` sees the type once the upload is read and may refuse it (throw) before anything is written (the API's
 * per-type scope).
 */
export async function importUpload(c: Ctx, accountId: string, allow?: (type: ImportType) => void) {
  const p = await readParams(c, IMPORT_BODY_LIMIT);
  const type = typeof p.type === "string" ? p.type : "";
  if (!(IMPORT_TYPES as readonly string[]).includes(type)) throw validationFailed(`Type must be one of ${IMPORT_TYPES.join(", ")}`);
  const mode = p.mode === undefined || p.mode === "" ? "merge" : p.mode;
  if (mode !== "merge" && mode !== "overwrite") throw validationFailed("Mode must be merge or overwrite");
  const file = p.data;
  if (!(file instanceof File)) throw validationFailed("Data must be a CSV file (multipart field `data`)");
  if (file.size > IMPORT_MAX_BYTES) throw new ApiError(413, `Validation failed: Data is too large (the limit is ${IMPORT_MAX_BYTES / 1024 / 1024} MB)`);
  allow?.(type as ImportType);
  const bytes = new Uint8Array(await file.arrayBuffer());
  return createImport(c.get("db"), c.get("fx"), c.get("config"), accountId, {
    type: type as ImportType,
    overwrite: mode === "overwrite",
    filename: file.name || null,
    bytes,
  });
}

/**
 * An archive upload (API and settings page alike): multipart `data` (+ `take_profile`), or the raw body with its
 * Content-Length (`?take_profile=…&filename=…`). The size is checked before the body is read.
 */
export async function archiveUpload(c: Ctx, account: AccountRow): Promise<ArchiveImportRow> {
  const type = c.req.header("content-type") ?? "";
  const declared = Number(c.req.header("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > ARCHIVE_UPLOAD_MAX_BYTES + 64 * 1024) throw tooLargeArchive();
  const db = c.get("db");
  if (type.startsWith("multipart/form-data")) {
    const p = await readParams(c, ARCHIVE_UPLOAD_MAX_BYTES + 64 * 1024);
    const file = p.data;
    if (!(file instanceof File)) throw validationFailed("Data must be the archive (zip) or its outbox.json (multipart field `data`)");
    if (file.size > ARCHIVE_UPLOAD_MAX_BYTES) throw tooLargeArchive();
    return createArchiveImport(db, c.env, c.get("fx"), account, {
      body: file.stream(),
      size: file.size,
      filename: file.name || null,
      takeProfile: truthy(p.take_profile),
    });
  }
  const body = c.req.raw.body;
  if (!body || !Number.isFinite(declared)) throw new ApiError(411, "Validation failed: the upload needs a Content-Length");
  return createArchiveImport(db, c.env, c.get("fx"), account, {
    body,
    size: declared,
    filename: c.req.query("filename") ?? null,
    takeProfile: truthy(c.req.query("take_profile")),
  });
}

const truthy = (v: unknown) => typeof v === "string" && !["", "0", "f", "false", "off"].includes(v.toLowerCase());
const tooLargeArchive = () => new ApiError(413, `Validation failed: File is too large (the limit is ${ARCHIVE_UPLOAD_MAX_BYTES / 1024 / 1024} MB)`);
