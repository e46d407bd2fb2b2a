// The `process_media` effect: a large picture uploaded through /api/v2/media was stored as it came (the `upload`
// object, row processing = 1) and answered 202; this makes its original, preview and blurhash and points the row at
// them. Mastodon's states: 1 processing (GET answers 206), 0 done (200), 2 failed (422 on GET, the file's fault: the
// upload is removed and the row stays until the cron removes unattached media a day later, as for any upload).
// The Images binding failing is thrown, so the runner retries (10 runs over about 2 h); what this run wrote is
// removed first (media/ingest.ts), so nothing is half-stored, and an upload never processed goes with its row after a day.
import { and, eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { mediaAttachments } from "../../db/schema";
import type { Env } from "../../env";
import { ApiError } from "../../lib/http/errors";
import { storedFileColumns, storeImage } from "../../media/ingest";
import { processImage } from "../../media/process-image";
import { sniff } from "../../media/sniff";
import { attachmentKeys, deleteStored } from "../../media/store";

export const PROCESSING = 1;
export const PROCESSING_FAILED = 2;

export async function processStagedMedia(db: DB, env: Pick<Env, "MEDIA" | "IMAGES" | "IMAGES_TIMEOUT_MS">, mediaId: string): Promise<void> {
  const row = await db.select().from(mediaAttachments).where(eq(mediaAttachments.id, mediaId)).get();
  if (!row || row.processing !== PROCESSING || !row.fileKey) return; // done, failed or gone: running twice changes nothing
  const staged = row.fileKey;
  const fail = async () => {
    await db
      .update(mediaAttachments)
      .set({ processing: PROCESSING_FAILED })
      .where(and(eq(mediaAttachments.id, mediaId), eq(mediaAttachments.processing, PROCESSING)));
    await deleteStored(env, [staged]);
  };
  const obj = await env.MEDIA.get(staged);
  if (!obj) return fail();
  const bytes = new Uint8Array(await obj.arrayBuffer());
  const s = sniff(bytes);
  if (!s) return fail();
  let stored: Awaited<ReturnType<typeof storeImage>>;
  try {
    stored = await storeImage(env, await processImage(env, bytes, s), attachmentKeys(mediaId));
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) return fail();
    throw e;
  }
  const updated = await db
    .update(mediaAttachments)
    .set({
      ...storedFileColumns(stored),
      blurhash: stored.blurhash,
      processing: 0,
    })
    .where(and(eq(mediaAttachments.id, mediaId), eq(mediaAttachments.processing, PROCESSING)))
    .returning({ id: mediaAttachments.id });
  // Deleted (or done by another run) meanwhile: what this run wrote goes; otherwise the staged upload does.
  await deleteStored(env, updated.length ? [staged] : [stored.fileKey, stored.previewKey]);
}
