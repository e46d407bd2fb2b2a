// OEmbed (docs.joinmastodon.org/methods/oembed): a local status as Mastodon's "rich" answer, its `html` an iframe of
// the status's embed page (src/web/embed.tsx).
import type { Config } from "../../env";
import { escapeHtml } from "../../lib/text/text";
import type { MastodonStatus } from "./status";

export interface MastodonOembed {
  type: "rich";
  version: "1.0";
  title: string;
  author_name: string;
  author_url: string;
  provider_name: string;
  provider_url: string;
  cache_age: number;
  html: string;
  width: number;
  height: number | null;
}

/** A local status (its `url` is its page); the iframe `width` wide, and `height` high when given. */
export function renderOembed(cfg: Config, s: MastodonStatus, { width, height }: { width: number; height: number | null }): MastodonOembed {
  const a = s.account;
  const embed = `${s.url ?? s.uri}/embed`;
  return {
    type: "rich",
    version: "1.0",
    title: `New status by ${a.username}`,
    author_name: a.display_name || a.username,
    author_url: a.url,
    provider_name: cfg.domain,
    provider_url: `${cfg.origin}/`,
    cache_age: 86_400,
    html:
      `<iframe src="${escapeHtml(embed)}" class="mastodon-embed" style="max-width: 100%; border: 0" ` +
      `width="${width}"${height ? ` height="${height}"` : ""} allowfullscreen="allowfullscreen"></iframe>`,
    width,
    height,
  };
}
