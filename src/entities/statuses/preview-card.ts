// PreviewCard (docs.joinmastodon.org/entities/PreviewCard) and Trends::Link (the card with its 7-day history), as
// Mastodon's REST::PreviewCardSerializer and REST::Trends::LinkSerializer write them. Text fields are plain text;
// `html` is empty or an <iframe> Tern wrote itself (federation/remote/link-details.ts). `image` is Tern's copy once cached.
import type { previewCards } from "../../db/schema/index";
import type { TagHistoryDay } from "../instance/tag";
import type { Config } from "../../env";
import { isoTime, mediaUrl } from "../urls";

export type PreviewCardRow = typeof previewCards.$inferSelect;

/** PreviewCardAuthor: the page's author; no fediverse account is resolved for it. */
export interface MastodonPreviewCardAuthor {
  name: string;
  url: string;
  account: null;
}

export interface MastodonPreviewCard {
  url: string;
  title: string;
  description: string;
  language: string | null;
  type: PreviewCardRow["type"];
  author_name: string;
  author_url: string;
  provider_name: string;
  provider_url: string;
  html: string;
  width: number;
  height: number;
  image: string | null;
  image_description: string;
  embed_url: string;
  blurhash: null;
  published_at: string | null;
  authors: MastodonPreviewCardAuthor[];
}

/** Trends::Link: a card with its 7-day history. */
export interface MastodonTrendLink extends MastodonPreviewCard {
  history: TagHistoryDay[];
}

/**
 * `originalUrl`: the link as the status wrote it (Mastodon shows that, not the page's canonical URL). The image is
 * Tern's copy once cached (services/remote-media/card-images.ts), else the remote URL.
 */
export function renderPreviewCard(cfg: Pick<Config, "origin">, c: PreviewCardRow, originalUrl?: string | null): MastodonPreviewCard {
  return {
    url: originalUrl || c.url,
    title: c.title,
    description: c.description,
    language: c.language,
    type: c.type,
    author_name: c.authorName,
    author_url: c.authorUrl,
    provider_name: c.providerName,
    provider_url: c.providerUrl,
    html: c.html,
    width: c.width,
    height: c.height,
    image: c.imageKey ? mediaUrl(cfg, c.imageKey) : c.image,
    image_description: c.imageDescription,
    embed_url: c.embedUrl,
    blurhash: null,
    published_at: isoTime(c.publishedAt),
    // Fediverse accounts of the authors: none are resolved (no fediverse:creator lookup); the page's author, if named.
    authors: c.authorName || c.authorUrl ? [{ name: c.authorName, url: c.authorUrl, account: null }] : [],
  };
}

export function renderTrendLink(cfg: Pick<Config, "origin">, c: PreviewCardRow, history: TagHistoryDay[]): MastodonTrendLink {
  return { ...renderPreviewCard(cfg, c), history };
}
