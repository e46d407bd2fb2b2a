// GET /api/oembed and a status's embed page (src/web/embed.tsx): Mastodon's oEmbed "rich" answer for a local public or
// unlisted post, its iframe the embed page, which any site may frame; everything else 404 `Record not found`.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, makeUser, ORIGIN } from "./helpers";

const page = (path: string) => SELF.fetch(`${ORIGIN}${path}`, { headers: { accept: "text/html" } });
const oembed = (url: string, extra = "") => anon.get(`/api/oembed?url=${encodeURIComponent(url)}${extra}`);

describe("oEmbed", () => {
  it("answers a public post's page or id with an iframe of its embed page, sized as asked", async () => {
    const u = await makeUser();
    const st = (await u.api.post("/api/v1/statuses", { status: "Look at <this> & that" })).body;
    expect(st.url).toBe(`${ORIGIN}/@${u.username}/${st.id}`);
    const res = await oembed(st.url);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      type: "rich",
      version: "1.0",
      title: `New status by ${u.username}`,
      author_name: u.username,
      author_url: `${ORIGIN}/@${u.username}`,
      provider_name: "tern.test",
      provider_url: `${ORIGIN}/`,
      cache_age: 86400,
      html: `<iframe src="${st.url}/embed" class="mastodon-embed" style="max-width: 100%; border: 0" width="400" allowfullscreen="allowfullscreen"></iframe>`,
      width: 400,
      height: null,
    });
    const sized = await oembed(st.uri, "&maxwidth=600&maxheight=300");
    expect(sized.status).toBe(200);
    expect(sized.body).toMatchObject({ width: 600, height: 300 });
    expect(sized.body.html).toContain('width="600" height="300"');
    expect((await oembed(st.url, "&maxwidth=abc&maxheight=-1")).body).toMatchObject({ width: 400, height: null });

    // The status page says where its oEmbed is.
    const html = await (await page(`/@${u.username}/${st.id}`)).text();
    expect(html).toContain(`<link rel="alternate" type="application/json+oembed" href="${ORIGIN}/api/oembed?url=${encodeURIComponent(st.url)}"`);
  });

  it("the embed page shows the post without the site's header, and any site may frame it (no other page)", async () => {
    const u = await makeUser();
    const st = (await u.api.post("/api/v1/statuses", { status: "Framed <b>safely</b>" })).body;
    const res = await page(`/@${u.username}/${st.id}/embed`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-frame-options")).toBeNull();
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors *");
    expect(csp).toContain("script-src 'none'");
    const html = await res.text();
    expect(html).toContain("Framed &lt;b&gt;safely&lt;/b&gt;");
    expect(html).not.toContain('<header class="site">');
    expect(html).toContain('<base target="_blank"/>');
    expect(html).not.toContain("<form");
    // The post's own page is still never framed.
    const own = await page(`/@${u.username}/${st.id}`);
    expect(own.headers.get("x-frame-options")).toBe("DENY");
    expect(own.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  it("refuses what is not a local public or unlisted post: 404 Record not found, and no embed page", async () => {
    const u = await makeUser();
    const priv = (await u.api.post("/api/v1/statuses", { status: "followers only", visibility: "private" })).body;
    const direct = (await u.api.post("/api/v1/statuses", { status: `@${u.username} direct`, visibility: "direct" })).body;
    const pub = (await u.api.post("/api/v1/statuses", { status: "public" })).body;
    const boost = (await u.api.post(`/api/v1/statuses/${pub.id}/reblog`)).body;
    for (const url of [
      priv.url,
      direct.url,
      `${ORIGIN}/@${u.username}/${boost.id}`,
      `https://elsewhere.example/@${u.username}/${pub.id}`,
      `${ORIGIN}/@nobody_here/${pub.id}`,
      `${ORIGIN}/@${u.username}/99999999999999999999999`,
      `${ORIGIN}/@${u.username}/${pub.id}/../../admin`,
      "javascript:alert(1)",
      "not a url",
      "",
    ]) {
      const res = await oembed(url);
      expect(res.status, url).toBe(404);
      expect(res.body, url).toEqual({ error: "Record not found" });
    }
    expect((await anon.get("/api/oembed")).status).toBe(404);
    expect((await page(`/@${u.username}/${priv.id}/embed`)).status).toBe(404);
    expect((await page(`/@${u.username}/${direct.id}/embed`)).status).toBe(404);
    expect((await page(`/@${u.username}/x/embed`)).status).toBe(404);
  });
});
