// Which link of a remote status becomes its preview card (src/services/statuses/preview-cards.ts cardUrlOfHtml), as
// Mastodon's FetchLinkCardService picks it: not a mention, a hashtag or a mentioned account's page, and not the link of
// a quote's fallback (`.quote-inline`, Mastodon's `:not(.quote-inline) > a`), whichever server wrote it.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/env";
import { cardUrlOfHtml } from "../../src/services/statuses/preview-cards";

const cfg = readConfig(env, "http://tern.test");

describe("cardUrlOfHtml", () => {
  it("skips the link of a quote's fallback, as Mastodon, Pleroma and Akkoma write it", async () => {
    const quoted = "https://social.example/@ann/1";
    expect(await cardUrlOfHtml(`<p>look</p><p class="quote-inline">RE: <a href="${quoted}">${quoted}</a></p>`, cfg)).toBeNull();
    expect(await cardUrlOfHtml(`<p>look<span class="quote-inline"><br/>RT: <a href="${quoted}">${quoted}</a></span></p>`, cfg)).toBeNull();
    // A link of the author's own is still the card, before or after the fallback.
    const own = `<p class="quote-inline">RE: <a href="${quoted}">${quoted}</a></p><p>see <a href="https://news.example/story">this</a></p>`;
    expect(await cardUrlOfHtml(own, cfg)).toBe("https://news.example/story");
  });

  it("skips mentions and hashtags, and takes the first other link", async () => {
    const html =
      '<p><span class="h-card"><a href="https://social.example/@bob" class="u-url mention">@bob</a></span> ' +
      '<a href="https://social.example/tags/x" class="mention hashtag" rel="tag">#x</a> ' +
      '<a href="https://blog.example/post">post</a></p>';
    expect(await cardUrlOfHtml(html, cfg)).toBe("https://blog.example/post");
  });
});
