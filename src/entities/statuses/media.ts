// MediaAttachment entity (docs.joinmastodon.org/entities/MediaAttachment) from a media_attachments row.
import type { Config } from "../../env";
import type { mediaAttachments } from "../../db/schema/index";
import { mediaUrl } from "../urls";

type MediaRow = typeof mediaAttachments.$inferSelect;

/** media_attachments.type holds one of these (media/store.ts, federation/remote/remote-statuses.ts write them). */
export type MastodonMediaType = "image" | "gifv" | "video" | "audio" | "unknown";

/** `meta`: what the file's inspection found (original/small sizes, duration), free-form as Mastodon's, and the focus. */
export interface MastodonMediaMeta {
  focus?: { x: number; y: number };
  [key: string]: unknown;
}

export interface MastodonMediaAttachment {
  id: string;
  type: MastodonMediaType;
  /** null while the file is processed, and for a file not fetched (reject_media). */
  url: string | null;
  preview_url: string | null;
  remote_url: string | null;
  preview_remote_url: string | null;
  text_url: null;
  meta: MastodonMediaMeta | null;
  description: string | null;
  blurhash: string | null;
}

/**
 * `rejected`: its author's domain is blocked with reject_media (accounts.reject_media). Mastodon downloads no file for
 * such an attachment: it is stored with type "unknown" and shown without a file of its own (REST::MediaAttachment-
 * Serializer: the remote URLs stay, meta holds only the focus). Mastodon's url and preview_url then name its media
 * proxy, which refuses to fetch from such a domain; Tern has no proxy, so they are null (as for media not processed).
 */
export function renderMedia(cfg: Config, m: MediaRow, rejected = false): MastodonMediaAttachment {
  // A copy cached before the block (a remote row with a file of ours) is not shown either.
  if (rejected && (!m.fileKey || m.remoteUrl)) {
    return {
      id: m.id,
      type: "unknown",
      url: null,
      preview_url: null,
      remote_url: m.remoteUrl,
      preview_remote_url: m.previewRemoteUrl ?? null,
      text_url: null,
      meta: m.focusX != null && m.focusY != null ? { focus: { x: m.focusX / 1000, y: m.focusY / 1000 } } : null,
      description: m.description ?? null,
      blurhash: m.blurhash ?? null,
    };
  }
  const url = m.fileKey ? mediaUrl(cfg, m.fileKey) : m.remoteUrl;
  // A local video or audio file is no picture: without a thumbnail its preview is null (as in Mastodon for audio).
  const noPicture = !!m.fileKey && m.type !== "image" && !m.previewKey;
  // A cached remote video without a preview of ours keeps its sender's preview (the file itself is no picture).
  const preview = m.previewKey ? mediaUrl(cfg, m.previewKey) : (m.previewRemoteUrl ?? (noPicture ? null : url));
  const meta: MastodonMediaMeta = { ...(m.meta ?? {}) };
  if (m.focusX != null && m.focusY != null) meta.focus = { x: m.focusX / 1000, y: m.focusY / 1000 };
  return {
    id: m.id,
    type: m.type as MastodonMediaType,
    url: m.processing ? null : url,
    preview_url: m.processing ? null : preview,
    // A remote file fetched into R2 (services/remote-media/attachments.ts) keeps its original URL here, as Mastodon's.
    remote_url: m.remoteUrl,
    preview_remote_url: m.previewRemoteUrl ?? null,
    text_url: null,
    meta,
    description: m.description ?? null,
    blurhash: m.blurhash ?? null,
  };
}
