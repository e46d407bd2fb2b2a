import type { Config } from "../env";
import type { mediaAttachments } from "../db/schema";
import { mediaUrl } from "./urls";

type MediaRow = typeof mediaAttachments.$inferSelect;

export function renderMedia(cfg: Config, m: MediaRow) {
  const url = m.fileKey ? mediaUrl(cfg, m.fileKey) : m.remoteUrl;
  // A local video or audio file is no picture: without a thumbnail its preview is null (as in Mastodon for audio).
  const noPicture = !!m.fileKey && m.type !== "image" && !m.previewKey;
  const preview = m.previewKey ? mediaUrl(cfg, m.previewKey) : noPicture ? null : (m.previewRemoteUrl ?? url);
  const meta: Record<string, unknown> = { ...(m.meta ?? {}) };
  if (m.focusX != null && m.focusY != null) meta.focus = { x: m.focusX / 1000, y: m.focusY / 1000 };
  return {
    id: m.id,
    type: m.type,
    url: m.processing ? null : url,
    preview_url: m.processing ? null : preview,
    remote_url: m.fileKey ? null : m.remoteUrl,
    preview_remote_url: m.fileKey ? null : (m.previewRemoteUrl ?? null),
    text_url: null,
    meta,
    description: m.description ?? null,
    blurhash: m.blurhash ?? null,
  };
}
