import { describe, expect, it } from "vitest";
import { sanitizeHtml } from "../../src/federation/remote/sanitize";

describe("remote HTML sanitiser (security E1-E5, Mastodon's strict config)", () => {
  it("E1: strips scripts, handlers, styles and frames", async () => {
    const out = await sanitizeHtml(
      '<p>hi<script>alert(1)</script><img src=x onerror=alert(1)><svg onload=alert(1)><circle/></svg><style>p{}</style><iframe src="https://x"></iframe></p>',
    );
    expect(out).toBe("<p>hi</p>");
  });

  it("E2: disallowed link schemes become escaped text, never re-parsed", async () => {
    expect(await sanitizeHtml('<a href="javascript:alert(1)">x</a>')).toBe("x");
    expect(await sanitizeHtml('<a href="JaVaScRiPt:alert(1)">x</a>')).toBe("x");
    expect(await sanitizeHtml('<a href=" https://x">x</a>')).toBe("x");
    expect(await sanitizeHtml('<a href="foo://bar">Test&lt;a href="https://example.com"&gt;test&lt;/a&gt;</a>')).toBe(
      'Test&lt;a href="https://example.com"&gt;test&lt;/a&gt;',
    );
  });

  it("E3: only allowlisted classes, forced rel and target", async () => {
    const out = await sanitizeHtml('<a href="https://x" class="u-url mention evil" style="color:red" onclick="x()">y</a>');
    expect(out).toBe('<a href="https://x" rel="nofollow noopener noreferrer" target="_blank" class="u-url mention">y</a>');
  });

  it("E4/E5: math without encoding and headings, deep nesting", async () => {
    expect(await sanitizeHtml("<math><semantics><annotation>x</annotation></semantics></math>ok")).toBe("ok");
    expect(await sanitizeHtml("<h1>Title</h1>")).toBe("<p><strong>Title</strong></p>");
    const deep = `${"<blockquote>".repeat(10_000)}x${"</blockquote>".repeat(10_000)}`;
    const out = await sanitizeHtml(deep);
    expect(out).toContain("x");
  });

  it("keeps Mastodon's mention markup", async () => {
    const html = '<p><span class="h-card" translate="no"><a href="https://m.example/@a" class="u-url mention">@<span>a</span></a></span> hi</p>';
    expect(await sanitizeHtml(html)).toBe(
      '<p><span class="h-card" translate="no"><a href="https://m.example/@a" rel="nofollow noopener noreferrer" target="_blank" class="u-url mention">@<span>a</span></a></span> hi</p>',
    );
  });
});
