// Whether a stored media key may be served, and where a remote attachment's old key leads now (GET /media/<key>,
// src/api/media/serve.ts): one read of the attachment's row.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, mediaAttachments } from "../../db/schema/index";

const ATTACHMENT_ID = /^\d{1,20}$/;

/** `recache`: what the media route queues again (a remote attachment's id, or a remote account's for its pictures). */
export type MediaAccess = { serve: true } | { serve: false; redirect?: string; recache?: { attachment: string } | { pictures: string } };

/**
 * Whether an attachment key (`media_attachments/<row id>/...`) may be served: its row still exists and names it, and
 * the row is not detached from a deleted status (kept only so the author can post it again). Other keys (avatars,
 * headers) are not attachments and pass. A remote attachment's key it no longer names (its cached copy was pruned, or
 * fetched again under new keys: services/remote-media/prune.ts) is redirected to where the file is now, its
 * copy here or its server's URL; in the second case its fetch is queued again.
 */
export async function attachmentAccess(db: DB, key: string): Promise<MediaAccess> {
  const [top, id] = key.split("/");
  if (top === "remote_accounts") return pictureAccess(db, key, id);
  if (top !== "media_attachments") return { serve: true };
  if (id === undefined || !ATTACHMENT_ID.test(id)) return { serve: false };
  const row = await db
    .select({
      fileKey: mediaAttachments.fileKey,
      previewKey: mediaAttachments.previewKey,
      remoteUrl: mediaAttachments.remoteUrl,
      previewRemoteUrl: mediaAttachments.previewRemoteUrl,
      statusId: mediaAttachments.statusId,
      scheduledStatusId: mediaAttachments.scheduledStatusId,
      detachedAt: mediaAttachments.detachedAt,
    })
    .from(mediaAttachments)
    .where(eq(mediaAttachments.id, id))
    .get();
  if (!row) return { serve: false };
  if (row.fileKey !== key && row.previewKey !== key) {
    if (!row.remoteUrl || row.statusId == null) return { serve: false };
    const small = /\/small\.[a-z0-9]+$/.test(key);
    if (row.fileKey) return { serve: false, redirect: small && row.previewKey ? row.previewKey : row.fileKey };
    return { serve: false, redirect: (small && row.previewRemoteUrl) || row.remoteUrl, recache: { attachment: id } };
  }
  return { serve: !(row.detachedAt != null && row.statusId == null && row.scheduledStatusId == null) };
}

/**
 * A remote account's cached avatar or header (`remote_accounts/<account id>/<random>/<avatar|header>.<ext>`,
 * src/services/remote-media/pictures.ts): served while the account names it; otherwise redirected to its copy now,
 * or to its server's URL with the fetch queued again (pruned, or the picture changed).
 */
async function pictureAccess(db: DB, key: string, id: string | undefined): Promise<MediaAccess> {
  if (id === undefined || !ATTACHMENT_ID.test(id)) return { serve: false };
  const row = await db
    .select({
      domain: accounts.domain,
      avatarKey: accounts.avatarKey,
      avatar: accounts.avatarRemoteUrl,
      headerKey: accounts.headerKey,
      header: accounts.headerRemoteUrl,
    })
    .from(accounts)
    .where(eq(accounts.id, id))
    .get();
  if (!row?.domain) return { serve: false };
  if (key === row.avatarKey || key === row.headerKey) return { serve: true };
  const avatar = /\/avatar\.[a-z0-9]+$/.test(key);
  const now = avatar ? row.avatarKey : row.headerKey;
  if (now) return { serve: false, redirect: now };
  const remote = avatar ? row.avatar : row.header;
  return remote ? { serve: false, redirect: remote, recache: { pictures: id } } : { serve: false };
}
