// Local custom emojis as ActivityPub `Emoji` tags (Mastodon's ActivityPub::EmojiSerializer), for the Notes and actor
// documents that use them, so other servers can show them.
import type { StoredEmoji } from "../../db/schema/index";
import { emojiUrl } from "../../entities/instance/custom-emoji";
import type { Config } from "../../env";
import { unpadId } from "../../lib/text/ids";

const IMAGE_TYPES: Record<string, string> = {
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  svg: "image/svg+xml",
};

function mediaTypeOf(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase() ?? "";
  return IMAGE_TYPES[ext] ?? "image/png";
}

/** Emoji tags for emojis with an image; the id is the emoji's uri, else `<origin>/emojis/<id>` as Mastodon names them. */
export function emojiTags(cfg: Config, list: readonly StoredEmoji[] | null | undefined): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const e of list ?? []) {
    const url = emojiUrl(cfg, e);
    if (!url) continue;
    out.push({
      id: e.uri ?? `${cfg.origin}/emojis/${unpadId(String(e.id))}`,
      type: "Emoji",
      name: `:${e.shortcode}:`,
      icon: { type: "Image", mediaType: mediaTypeOf(url), url },
    });
  }
  return out;
}
