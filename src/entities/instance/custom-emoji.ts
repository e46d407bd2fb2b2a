// CustomEmoji entity (docs.joinmastodon.org/entities/CustomEmoji) as statuses and accounts carry it in `emojis`.
import type { StoredEmoji } from "../../db/schema/index";
import type { Config } from "../../env";
import { httpUrl } from "../../lib/http/urls";
import { mediaUrl } from "../urls";

export interface MastodonCustomEmoji {
  shortcode: string;
  url: string;
  static_url: string;
  visible_in_picker: boolean;
}

/** The image of an emoji: the local copy, else the remote URL when it is http(s); null when neither. */
export function emojiUrl(cfg: Config, e: Pick<StoredEmoji, "image_key" | "image_remote_url">): string | null {
  return e.image_key ? mediaUrl(cfg, e.image_key) : httpUrl(e.image_remote_url);
}

/**
 * Renders emojis, dropping any without a usable image. There is no still copy of an animated image, so `static_url`
 * is the image itself (as for remote avatars).
 */
export function renderEmojis(cfg: Config, list: readonly StoredEmoji[] | null | undefined): MastodonCustomEmoji[] {
  if (!list?.length) return [];
  const out: MastodonCustomEmoji[] = [];
  for (const e of list) {
    const url = emojiUrl(cfg, e);
    if (url) out.push({ shortcode: e.shortcode, url, static_url: url, visible_in_picker: !!e.visible_in_picker });
  }
  return out;
}
