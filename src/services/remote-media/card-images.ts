// Preview-card images cached in R2 (issue 32 point 3): once the `fetch_card` job stored a card whose image is not
// cached, it fetches the image through the guarded fetch, checks it as an uploaded avatar (a still or animated
// picture, its bytes deciding the type, at most 8 MB) and stores it as it came (no Images transformation: the
// monthly transformations are kept for attachments); the card then shows Tern's copy. One try: a card image is an
// extra, and a failure (logged) leaves the remote URL until the card is fetched again (two weeks). A refetch naming
// another image drops the copy's key (preview-cards.ts), and the next store removes the old object; a pruned card's
// objects go with it (pruneOrphanCards).
import { and, eq, isNull } from "drizzle-orm";
import type { DB } from "../../db/client";
import { previewCards } from "../../db/schema";
import type { Env } from "../../env";
import { RemoteMediaFailed, storeRemotePicture } from "../../media/remote";
import { deleteOtherCopies, deleteStored, randomKeyPart } from "../../media/store";
import type { SafeFetchOptions } from "../../net/safe-fetch";

export const cardImageKey = (cardId: string) => (ext: string) => `preview_cards/${cardId}/${randomKeyPart()}/image.${ext}`;

/** Caches card `cardId`'s image when it has one not cached yet. Never throws for the file server's failures. */
export async function cacheCardImage(db: DB, env: Pick<Env, "MEDIA">, fetchOpts: SafeFetchOptions, cardId: string): Promise<void> {
  const card = await db.select({ image: previewCards.image, imageKey: previewCards.imageKey }).from(previewCards).where(eq(previewCards.id, cardId)).get();
  if (!card?.image || card.imageKey) return;
  let key: string;
  try {
    key = await storeRemotePicture(env, card.image, cardImageKey(cardId), fetchOpts);
  } catch (e) {
    if (!(e instanceof RemoteMediaFailed)) throw e;
    console.warn(`card ${cardId} image: ${e.message}`);
    return;
  }
  let updated: { id: string }[] = [];
  try {
    updated = await db
      .update(previewCards)
      .set({ imageKey: key })
      .where(and(eq(previewCards.id, cardId), eq(previewCards.image, card.image), isNull(previewCards.imageKey)))
      .returning({ id: previewCards.id });
  } finally {
    if (!updated.length) await deleteStored(env, [key]);
  }
  await deleteOtherCopies(env, `preview_cards/${cardId}/`, key);
}
