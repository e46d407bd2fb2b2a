// Archives larger than one request (the platform takes 100 MB a request) come in parts, through an R2 multipart
// upload: `beginArchiveUpload` makes the upload and an `uploading` row that holds R2's upload id, `putArchivePart`
// stores one part (each but the last at least 5 MiB, R2's rule), `completeArchiveUpload` joins the parts the client
// names (number and etag, as R2 answered them) and runs the same checks as a one-request upload (import-archive.ts
// startStoredImport): refused, the object and the row are deleted; accepted, the row becomes the import.
// `abortArchiveUpload` gives up. Parts are not checked one by one: nothing is read before the whole file is there.
import { and, eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { ownRow } from "../../db/owned";
import { type AccountRow, archiveImports, type ArchiveImportRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import type { Env } from "../../env";
import { ApiError, notFound, validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import { ARCHIVE_UPLOAD_MAX_BYTES, fileKeyOf, newArchiveImportRow, startStoredImport } from "./import-archive";

/** R2: parts 1 to 10,000; every part but the last the same size, at least 5 MiB. */
export const MAX_PARTS = 10_000;
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export async function beginArchiveUpload(
  db: DB,
  env: Pick<Env, "MEDIA">,
  me: AccountRow,
  o: { filename: string | null; takeProfile: boolean },
): Promise<ArchiveImportRow> {
  const now = Date.now();
  const id = snowflake(now);
  const key = fileKeyOf(id);
  const upload = await env.MEDIA.createMultipartUpload(key);
  const row = newArchiveImportRow({
    id,
    accountId: me.id,
    state: "uploading",
    kind: "",
    fileKey: key,
    fileSize: 0,
    originalFilename: o.filename,
    actorUri: null,
    takeProfile: o.takeProfile,
    uploadId: upload.uploadId,
    createdAt: now,
  });
  try {
    await db.insert(archiveImports).values(row);
  } catch (e) {
    await upload.abort().catch(() => {});
    throw e;
  }
  return row;
}

async function uploadingRow(db: DB, me: AccountRow, id: string): Promise<ArchiveImportRow & { uploadId: string }> {
  const row = await ownRow(db, archiveImports, id, me.id);
  if (row.state !== "uploading" || !row.uploadId) throw notFound();
  return row as ArchiveImportRow & { uploadId: string };
}

export async function putArchivePart(
  db: DB,
  env: Pick<Env, "MEDIA">,
  me: AccountRow,
  id: string,
  partNumber: number,
  body: ReadableStream<Uint8Array>,
  size: number,
): Promise<{ part_number: number; etag: string }> {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PARTS) throw validationFailed(`Part number must be 1 to ${MAX_PARTS}`);
  if (size > ARCHIVE_UPLOAD_MAX_BYTES) throw new ApiError(413, `Validation failed: a part is at most ${ARCHIVE_UPLOAD_MAX_BYTES / 1024 / 1024} MB`);
  if (size < 1) throw validationFailed("Part can't be blank");
  const row = await uploadingRow(db, me, id);
  const fixed = new FixedLengthStream(size);
  const upload = env.MEDIA.resumeMultipartUpload(row.fileKey, row.uploadId);
  try {
    const [part] = await Promise.all([upload.uploadPart(partNumber, fixed.readable), body.pipeTo(fixed.writable)]);
    return { part_number: part.partNumber, etag: part.etag };
  } catch {
    throw validationFailed("Part could not be stored (its length differs from the one announced, or the upload is gone)");
  }
}

/** The `parts` a completion names (`[{part_number, etag}]`, as R2 answered each part); refused unless all are well formed. */
export function uploadPartsOf(raw: unknown): { part_number: number; etag: string }[] {
  const list = Array.isArray(raw) ? raw : [];
  const parts = list.flatMap((x) => {
    const o = x as Record<string, unknown> | null;
    const n = Number(o?.part_number);
    return o && Number.isInteger(n) && typeof o.etag === "string" ? [{ part_number: n, etag: o.etag.slice(0, 200) }] : [];
  });
  if (parts.length !== list.length) throw validationFailed("Parts must be a list of {part_number, etag}");
  return parts;
}

export async function completeArchiveUpload(
  db: DB,
  env: Pick<Env, "MEDIA">,
  fx: Effects,
  me: AccountRow,
  id: string,
  parts: { part_number: number; etag: string }[],
): Promise<ArchiveImportRow> {
  const row = await uploadingRow(db, me, id);
  if (!parts.length || parts.length > MAX_PARTS) throw validationFailed("Parts must name every part uploaded");
  const upload = env.MEDIA.resumeMultipartUpload(row.fileKey, row.uploadId);
  let size: number;
  try {
    size = (await upload.complete(parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })))).size;
  } catch (e) {
    throw validationFailed(`The parts could not be joined (${e instanceof Error ? e.message.slice(0, 200) : "R2 refused them"})`);
  }
  return startStoredImport(
    db,
    env,
    fx,
    me,
    { id: row.id, key: row.fileKey, size, filename: row.originalFilename, takeProfile: row.takeProfile, createdAt: row.createdAt },
    true,
  );
}

export async function abortArchiveUpload(db: DB, env: Pick<Env, "MEDIA">, me: AccountRow, id: string): Promise<void> {
  const row = await uploadingRow(db, me, id);
  await env.MEDIA.resumeMultipartUpload(row.fileKey, row.uploadId)
    .abort()
    .catch(() => {});
  await db.delete(archiveImports).where(and(eq(archiveImports.id, row.id), eq(archiveImports.state, "uploading")));
}
