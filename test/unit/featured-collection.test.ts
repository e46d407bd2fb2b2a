// A remote FeaturedCollection's description: sanitized HTML, capped at 2,048 characters without cutting through markup.
import { describe, expect, it } from "vitest";
import { normalizeFeaturedCollection } from "../../src/federation/remote/featured-collections";
import { sanitizeHtml } from "../../src/federation/remote/sanitize";

const owner = "https://remote.example/users/ann";
const doc = (summary: string) => ({
  id: "https://remote.example/collections/1",
  type: "FeaturedCollection",
  attributedTo: owner,
  name: "Friends",
  summary,
  orderedItems: [],
});

describe("a remote collection's description", () => {
  it("keeps its sanitized HTML when it fits", () => {
    const c = normalizeFeaturedCollection(doc('<p>Birds &amp; <a href="https://birds.example/">more</a><script>x()</script></p>'), owner);
    expect(c?.description).toBe(sanitizeHtml('<p>Birds &amp; <a href="https://birds.example/">more</a></p>'));
    expect(c?.description).toContain('<a href="https://birds.example/"');
  });

  it("too long, is its text cut and escaped in one paragraph: no tag or entity cut in half", () => {
    const chunk = '<a href="https://birds.example/a-long-path-to-somewhere">a link</a> &amp; &lt;b&gt; text ';
    for (const summary of [`<p>${chunk.repeat(120)}</p>`, `<p>${"&amp;".repeat(3000)}</p>`, `<p>${"🐦".repeat(2000)}</p>`]) {
      const d = normalizeFeaturedCollection(doc(summary), owner)!.description;
      expect(d.length).toBeLessThanOrEqual(2048);
      expect(d.length).toBeGreaterThan(1900);
      expect(d.startsWith("<p>") && d.endsWith("</p>")).toBe(true);
      const inner = d.slice(3, -4);
      expect(inner).not.toMatch(/[<>]/);
      // every & starts a whole entity, and no lone surrogate is left at the cut
      expect(inner.replace(/&(amp|lt|gt|quot|#39);/g, "")).not.toContain("&");
      expect(inner).not.toMatch(/[\uD800-\uDBFF]$/);
      // the text shown is the text sent: a reference is not escaped a second time
      expect(inner).not.toContain("&amp;amp;");
    }
  });
});
