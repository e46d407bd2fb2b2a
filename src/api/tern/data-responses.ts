// What the export/import routes of the API (./exports.ts, ./imports.ts) and of the settings pages
// (src/web/settings-data.tsx) answer alike: a CSV download, the archive download, and an upload read into an import.
import type { Ctx } from "../../context";
import type { BackupRow } from "../../db/schema";
import { ApiError, notFound, validationFailed } from "../../lib/http/errors";
import { readParams } from "../../lib/http/params";
import { EXPORT_FILENAMES, type ExportKind, exportCsv } from "../../services/data/export-csv";
import { openArchive } from "../../services/data/export-archive";
import { IMPORT_MAX_BYTES, IMPORT_TYPES, type ImportType } from "../../services/data/import-csv";
import { createImport } from "../../services/data/imports";

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
