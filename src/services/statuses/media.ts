// Media attachments owned by local accounts: upload (checked, processed and stored by media/ingest.ts before the
// row is written; through /api/v2/media a picture to scale down is processed after the 202: media-processing.ts),
// read and edit while unattached, delete while unused. Objects live in R2 under server-made keys (media/store.ts).
import { and, eq, isNull } from "drizzle-orm";
import type { DB } from "../../db/client";
import { insertMedia } from "../../db/inserts";
import { ownedBy } from "../../db/owned";
import { mediaAttachments } from "../../db/schema";
import type { Env } from "../../env";
import { notFound, unprocessable, validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import type { Effects } from "../../effects/collector";
import { ingestInspected, prepareThumbnail, processLater, stageUpload, storeThumbnail, type Ingested, type IngestEnv } from "../../media/ingest";
import { attachmentKeys, buildMeta, deleteStored, inspectFile } from "../../media/store";

export type MediaRow = typeof mediaAttachments.$inferSelect;

export const MAX_DESCRIPTION = 1500;

export interface MediaInput {
  file?: File;
  thumbnail?: File;
  description?: string;
  focus?: string;
}

/** "x,y" with each in -1..1 → thousandths; anything else is a 422. */
export function parseFocus(raw: string): [number, number] {
  const parts = raw.split(",").map((p) => p.trim());
  const nums = parts.map((p) => (/^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(p) ? Number(p) : NaN));
  const [x, y] = nums;
  if (nums.length !== 2 || x === undefined || y === undefined || nums.some((n) => !Number.isFinite(n) || n < -1 || n > 1)) {
    throw validationFailed('Focus must be two numbers between -1.0 and 1.0, as "x,y"');
  }
  return [Math.round(x * 1000), Math.round(y * 1000)];
}

function checkDescription(d: string | undefined): void {
  if (d !== undefined && [...d].length > MAX_DESCRIPTION) {
    throw validationFailed(`Description is too long (maximum is ${MAX_DESCRIPTION} characters)`);
  }
}

/**
 * Checks, processes and stores an upload and writes its row. With `later` (POST /api/v2/media), a picture that must
 * be scaled down is stored as it came and its row marked processing (the route answers 202); a `process_media`
 * effect, run after the answer, makes the rest (media-processing.ts).
 */
export async function createMedia(db: DB, env: IngestEnv, accountId: string, input: MediaInput, later: Effects | null = null): Promise<MediaRow> {
  if (!(input.file instanceof File)) throw validationFailed("File can't be blank");
  checkDescription(input.description);
  const focus = input.focus ? parseFocus(input.focus) : null;
  const thumbnail = input.thumbnail instanceof File && input.thumbnail.size > 0 ? input.thumbnail : null;

  // A refused thumbnail fails the upload before anything is written.
  const thumb = thumbnail ? await prepareThumbnail(env, thumbnail) : null;
  const id = snowflake();
  const keys = attachmentKeys(id);
  const x = await inspectFile(input.file, { declaredType: input.file.type || null });
  const deferred = later !== null && processLater(x);
  const stored: Ingested = deferred
    ? {
        fileKey: await stageUpload(env, x, keys),
        previewKey: null,
        contentType: x.sniffed.mime,
        size: x.size,
        type: "image",
        meta: buildMeta(x.sniffed, x.size),
        blurhash: null,
      }
    : await ingestInspected(env, input.file, x, keys);
  let previewKey = stored.previewKey;
  const meta = stored.meta;
  let blurhash = stored.blurhash;
  try {
    // Mastodon's thumbnail replaces the preview of a video or audio file; a picture keeps its own.
    if (thumb && stored.type !== "image") {
      const t = await storeThumbnail(env, thumb, keys);
      previewKey = t.key;
      meta.small = t.small;
      blurhash = t.blurhash;
    }
    const row: MediaRow = {
      id,
      accountId,
      statusId: null,
      scheduledStatusId: null,
      type: stored.type,
      fileKey: stored.fileKey,
      contentType: stored.contentType,
      fileSize: stored.size,
      remoteUrl: null,
      previewKey,
      previewRemoteUrl: null,
      description: input.description?.trim() ? input.description : null,
      focusX: focus?.[0] ?? null,
      focusY: focus?.[1] ?? null,
      meta,
      blurhash,
      processing: deferred ? 1 : 0,
      createdAt: Date.now(),
      detachedAt: null,
    };
    await insertMedia(db, row);
    if (deferred) later?.afterResponse({ type: "process_media", mediaId: id });
    return row;
  } catch (e) {
    await deleteStored(env, [stored.fileKey, stored.previewKey, previewKey]).catch(() => {});
    throw e;
  }
}

/** The viewer's own attachment that no status uses yet (Mastodon's set_media_attachment); otherwise 404 (B14). */
export async function findOwnUnattached(db: DB, accountId: string, id: string): Promise<MediaRow> {
  const row = await db
    .select()
    .from(mediaAttachments)
    .where(and(eq(mediaAttachments.id, id), eq(mediaAttachments.accountId, accountId), isNull(mediaAttachments.statusId)))
    .get();
  if (!row) throw notFound();
  return row;
}

export async function updateMedia(db: DB, env: IngestEnv, row: MediaRow, input: Omit<MediaInput, "file">): Promise<MediaRow> {
  checkDescription(input.description);
  const next: MediaRow = { ...row };
  if (input.description !== undefined) next.description = input.description.trim() ? input.description : null;
  if (input.focus) [next.focusX, next.focusY] = parseFocus(input.focus);
  const thumbnail = input.thumbnail instanceof File && input.thumbnail.size > 0 ? input.thumbnail : null;
  if (thumbnail) {
    const t = await storeThumbnail(env, await prepareThumbnail(env, thumbnail), attachmentKeys(row.id));
    next.previewKey = t.key;
    next.meta = { ...(row.meta ?? {}), small: t.small };
    next.blurhash = t.blurhash;
  }
  const updated = await db
    .update(mediaAttachments)
    .set({ description: next.description, focusX: next.focusX, focusY: next.focusY, previewKey: next.previewKey, meta: next.meta, blurhash: next.blurhash })
    .where(and(eq(mediaAttachments.id, row.id), isNull(mediaAttachments.statusId)))
    .returning({ id: mediaAttachments.id });
  // The replaced thumbnail goes once the row points at the new one; if a status took the row meanwhile, the new one goes.
  if (next.previewKey !== row.previewKey) await deleteStored(env, [updated.length ? row.previewKey : next.previewKey]);
  return next;
}

/** Deletes the viewer's attachment and its objects; 422 while a status (or scheduled status) uses it. */
export async function deleteMedia(db: DB, env: Pick<Env, "MEDIA">, accountId: string, id: string): Promise<void> {
  const row = await db
    .select()
    .from(mediaAttachments)
    .where(ownedBy(mediaAttachments, id, accountId))
    .get();
  if (!row) throw notFound();
  if (row.statusId || row.scheduledStatusId) throw unprocessable("Media attachment is currently used by a status");
  // Guarded again in SQL: a status may have taken the attachment since the read; then the objects must stay.
  const gone = await db
    .delete(mediaAttachments)
    .where(and(eq(mediaAttachments.id, id), isNull(mediaAttachments.statusId), isNull(mediaAttachments.scheduledStatusId)))
    .returning({ id: mediaAttachments.id });
  if (!gone.length) throw unprocessable("Media attachment is currently used by a status");
  await deleteStored(env, [row.fileKey, row.previewKey]);
}
