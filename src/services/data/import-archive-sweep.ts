// What archive imports leave behind when nobody comes back for them (the hourly cron): an upload in parts never
// completed (its row; R2 itself aborts an incomplete multipart upload after 7 days, and the abort is asked for here
// too), and a failed import never resumed (its upload and split parts in R2, which can be large). A failed import's row
// stays, as its record, with `phase` done: it can no longer be resumed. Bounded per run; the objects go before the row
// says so, so an R2 that fails leaves the row for the next run.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type ArchiveImportRow, archiveImports } from "../../db/schema";
import type { Env } from "../../env";
import { deleteImportObjects } from "./import-archive-rounds";

const DAY = 24 * 60 * 60 * 1000;
/** An upload not completed within this long is given up (R2's own default for incomplete multipart uploads). */
export const ABANDONED_UPLOAD_MS = 7 * DAY;
/** A failed import keeps its files this long after it began, for a resume. */
export const FAILED_IMPORT_KEEP_MS = 30 * DAY;
/** Rows looked at per run: each is a few R2 calls (a list of the split's parts, one delete per 1,000 keys). */
export const ARCHIVE_SWEEP_PER_RUN = 10;

export async function sweepArchiveImports(db: DB, env: Pick<Env, "MEDIA">, at: number, limit = ARCHIVE_SWEEP_PER_RUN): Promise<number> {
  const rows = await db
    .select()
    .from(archiveImports)
    .where(
      sql`${archiveImports.state} IN ('uploading', 'failed') AND ${archiveImports.phase} <> 'done' AND ${archiveImports.createdAt} < ${at - ABANDONED_UPLOAD_MS}`,
    )
    .orderBy(archiveImports.createdAt)
    .limit(limit);
  let swept = 0;
  for (const row of rows) {
    if (row.state === "uploading") swept += await dropUpload(db, env, row);
    else if (row.createdAt < at - FAILED_IMPORT_KEEP_MS) swept += await dropFailedFiles(db, env, row);
  }
  return swept;
}

async function dropUpload(db: DB, env: Pick<Env, "MEDIA">, row: ArchiveImportRow): Promise<number> {
  if (row.uploadId) {
    await env.MEDIA.resumeMultipartUpload(row.fileKey, row.uploadId)
      .abort()
      .catch(() => {}); // already aborted or completed: nothing left to give up
  }
  await db.delete(archiveImports).where(and(eq(archiveImports.id, row.id), eq(archiveImports.state, "uploading")));
  return 1;
}

async function dropFailedFiles(db: DB, env: Pick<Env, "MEDIA">, row: ArchiveImportRow): Promise<number> {
  await deleteImportObjects(env, row);
  const note = "Its files were deleted 30 days after it began; import the archive again.";
  await db
    .update(archiveImports)
    .set({ phase: "done", error: `${row.error ? `${row.error} ` : ""}${note}`.slice(0, 500) })
    .where(and(eq(archiveImports.id, row.id), eq(archiveImports.state, "failed")));
  return 1;
}
