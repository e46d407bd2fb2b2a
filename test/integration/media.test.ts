import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, anon, makeUser, type TestUser } from "./helpers";
import { bytesOf, statusOf, gif, jpeg, mp4, png, pngHeaderOnly } from "./media-fixtures";

function form(bytes: Uint8Array, name = "photo.png", type = "image/png", extra: Record<string, string> = {}) {
  const f = new FormData();
  f.append("file", new File([bytes], name, { type }));
  for (const [k, v] of Object.entries(extra)) f.append(k, v);
  return f;
}

const upload = (u: TestUser, f: FormData, version = "v2") => u.api.post(`/api/${version}/media`, f, "multipart");
const path = (url: string) => new URL(url).pathname;

describe("POST /api/v2/media", () => {
  it("stores a PNG under a server-made key and reports its dimensions", async () => {
    const u = await makeUser();
    const bytes = await png(5, 4);
    const res = await upload(u, form(bytes, "holiday.png", "image/png", { description: "A blue square", focus: "0.5,-0.25" }));
    expect(res.status).toBe(200);
    const m = res.body;
    expect(m).toMatchObject({ type: "image", description: "A blue square", remote_url: null, text_url: null });
    expect(m.blurhash).toMatch(/^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{36}$/);
    expect(m.id).toMatch(/^\d+$/);
    expect(m.url).toMatch(new RegExp(`^${ORIGIN}/media/media_attachments/${m.id}/[0-9a-f]{32}/original\\.png$`));
    expect(m.preview_url).toBe(m.url);
    expect(m.meta.original).toEqual({ width: 5, height: 4, size: "5x4", aspect: 1.25 });
    expect(m.meta.small).toEqual(m.meta.original);
    expect(m.meta.focus).toEqual({ x: 0.5, y: -0.25 });

    const file = await SELF.fetch(m.url);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect(file.headers.get("x-content-type-options")).toBe("nosniff");
    expect(file.headers.get("cache-control")).toContain("immutable");
    expect(file.headers.get("content-disposition")).toBe("inline");
    expect(await bytesOf(file)).toEqual(bytes);

    const head = await SELF.fetch(m.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(bytes.length));
  });

  it("reads JPEG frame headers and GIF frames; the legacy v1 route answers the same", async () => {
    const u = await makeUser();
    const j = await upload(u, form(jpeg(16, 8), "a.jpg", "image/jpeg"), "v1");
    expect(j.status).toBe(200);
    expect(j.body.type).toBe("image");
    expect(j.body.url).toMatch(/\/original\.jpg$/);
    expect(j.body.meta.original).toMatchObject({ width: 16, height: 8 });

    const g = await upload(u, form(gif(4, 3, 3), "a.gif", "image/gif"));
    expect(g.status).toBe(200);
    expect(g.body.type).toBe("image");
    expect(g.body.meta.original).toMatchObject({ width: 4, height: 3 });
    const served = await SELF.fetch(g.body.url);
    expect(served.headers.get("content-type")).toBe("image/gif");
    expect(await bytesOf(served)).toEqual(gif(4, 3, 3));
  });

  it("accepts an MP4 and reads its size and duration from the moov box, wherever it is", async () => {
    const u = await makeUser();
    const res = await upload(u, form(mp4(640, 360, 2.5, { moovLast: true, mdatBytes: 1_200_000 }), "clip.mp4", "video/mp4"));
    expect(res.status).toBe(200);
    expect(res.body.type).toBe("video");
    expect(res.body.url).toMatch(/\/original\.mp4$/);
    expect(res.body.preview_url).toBeNull();
    expect(res.body.meta).toMatchObject({ width: 640, height: 360, duration: 2.5, original: { width: 640, height: 360 } });
    const audio = await upload(u, form(mp4(0, 0, 3, { audioOnly: true }), "a.m4a", "audio/mp4"));
    expect(audio.status).toBe(200);
    expect(audio.body.type).toBe("audio");
  });

  it("takes a thumbnail as the preview", async () => {
    const u = await makeUser();
    const f = form(mp4(320, 240, 1), "v.mp4", "video/mp4");
    f.append("thumbnail", new File([await png(8, 6)], "t.png", { type: "image/png" }));
    const res = await upload(u, f);
    expect(res.status).toBe(200);
    expect(res.body.preview_url).toMatch(new RegExp(`^${ORIGIN}/media/media_attachments/${res.body.id}/[0-9a-f]{32}/thumbnail\\.webp$`));
    expect(res.body.meta.small).toMatchObject({ width: 8, height: 6 });
    expect(await statusOf(res.body.preview_url)).toBe(200);
  });

  it("F1: refuses HTML labelled image/png and any SVG", async () => {
    const u = await makeUser();
    const html = new TextEncoder().encode("<!doctype html><html><script>alert(document.cookie)</script></html>");
    const r1 = await upload(u, form(html, "x.png", "image/png"));
    expect(r1.status).toBe(422);
    expect(r1.body.error).toMatch(/content type is invalid/);
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const r2 = await upload(u, form(svg, "x.svg", "image/svg+xml"));
    expect(r2.status).toBe(422);
  });

  it("F2: ignores the client's filename", async () => {
    const u = await makeUser();
    const res = await upload(u, form(await png(2, 2), "../../x.php", "application/x-php"));
    expect(res.status).toBe(200);
    expect(path(res.body.url)).toMatch(new RegExp(`^/media/media_attachments/${res.body.id}/[0-9a-f]{32}/original\\.png$`));
    const listed = await env.MEDIA.list({ prefix: `media_attachments/${res.body.id}/` });
    expect(listed.objects.map((o) => o.key)).toEqual([path(res.body.url).replace(/^\/media\//, "")]);
    expect((await env.MEDIA.list()).objects.some((o) => o.key.includes("php"))).toBe(false);
    // workerd's multipart parser refuses a NUL in the filename outright: never stored under any name.
    const nul = await upload(u, form(await png(2, 2), "x.php\0.png"));
    expect([200, 400]).toContain(nul.status);
    if (nul.status === 200) expect(path(nul.body.url)).toMatch(/^\/media\/media_attachments\/\d+\/[0-9a-f]{32}\/original\.png$/);
  });

  it("F3: refuses a 20000x20000 PNG and a GIF with too many frames, from the headers", async () => {
    const u = await makeUser();
    const big = await upload(u, form(pngHeaderOnly(20000, 20000)));
    expect(big.status).toBe(422);
    expect(big.body.error).toBe("20000x20000 images are not supported");
    const frames = await upload(u, form(gif(1, 1, 1001), "a.gif", "image/gif"));
    expect(frames.status).toBe(422);
  });

  it("F4: refuses a 17 MB image", async () => {
    const u = await makeUser();
    const res = await upload(u, form(pngHeaderOnly(10, 10, 17 * 1024 * 1024)));
    expect([413, 422]).toContain(res.status);
    expect(res.body.error).toMatch(/16 MB|too large/i);
  });

  it("refuses a body declared over the upload limit before reading it", async () => {
    const u = await makeUser();
    const res = await SELF.fetch(`${ORIGIN}/api/v2/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${u.token}`, "content-type": "multipart/form-data; boundary=x", "content-length": String(101 * 1024 * 1024) },
      body: "--x--\r\n",
    });
    await res.arrayBuffer();
    expect(res.status).toBe(413);
  });

  it("validates file presence, description length and focus", async () => {
    const u = await makeUser();
    const none = await u.api.post("/api/v2/media", { description: "hi" });
    expect(none.status).toBe(422);
    expect(none.body.error).toBe("Validation failed: File can't be blank");
    const long = await upload(u, form(await png(1, 1), "a.png", "image/png", { description: "x".repeat(1501) }));
    expect(long.status).toBe(422);
    const ok = await upload(u, form(await png(1, 1), "a.png", "image/png", { description: "é".repeat(1500) }));
    expect(ok.status).toBe(200);
    const focus = await upload(u, form(await png(1, 1), "a.png", "image/png", { focus: "2,0" }));
    expect(focus.status).toBe(422);
  });

  it("needs a token with write:media", async () => {
    const f = form(await png(1, 1));
    expect((await anon.post("/api/v2/media", f, "multipart")).status).toBe(401);
    const reader = await makeUser(undefined, { scopes: "read" });
    const res = await upload(reader, form(await png(1, 1)));
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("This action is outside the authorized scopes");
    const granular = await makeUser(undefined, { scopes: "write:media" });
    expect((await upload(granular, form(await png(1, 1)))).status).toBe(200);
  });

  it("F5: the 31st upload in 30 minutes is 429", async () => {
    const u = await makeUser();
    const bytes = await png(1, 1);
    for (let i = 0; i < 30; i++) expect((await upload(u, form(bytes))).status).toBe(200);
    const res = await upload(u, form(bytes));
    expect(res.status).toBe(429);
    const other = await makeUser();
    expect((await upload(other, form(bytes))).status).toBe(200);
  });
});

describe("/api/v1/media/:id", () => {
  async function uploaded(u: TestUser) {
    const res = await upload(u, form(await png(3, 3), "a.png", "image/png", { description: "first" }));
    expect(res.status).toBe(200);
    return res.body;
  }
  const attach = (id: string) =>
    env.DB.prepare("UPDATE media_attachments SET status_id = ? WHERE id = ?").bind("1".padStart(20, "0"), id.padStart(20, "0")).run();

  it("shows and updates one's own unattached media", async () => {
    const u = await makeUser();
    const m = await uploaded(u);
    const got = await u.api.get(`/api/v1/media/${m.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(m);
    const put = await u.api.put(`/api/v1/media/${m.id}`, { description: "second", focus: "-1,1" });
    expect(put.status).toBe(200);
    expect(put.body.description).toBe("second");
    expect(put.body.meta.focus).toEqual({ x: -1, y: 1 });
    expect((await u.api.get(`/api/v1/media/${m.id}`)).body.description).toBe("second");
    const tooLong = await u.api.put(`/api/v1/media/${m.id}`, { description: "x".repeat(1501) });
    expect(tooLong.status).toBe(422);
  });

  it("B14: another user's media is 404 for show, update and delete", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const m = await uploaded(a);
    expect((await b.api.get(`/api/v1/media/${m.id}`)).status).toBe(404);
    expect((await b.api.put(`/api/v1/media/${m.id}`, { description: "mine now" })).status).toBe(404);
    expect((await b.api.delete(`/api/v1/media/${m.id}`)).status).toBe(404);
    expect((await a.api.get(`/api/v1/media/${m.id}`)).body.description).toBe("first");
    expect((await a.api.get("/api/v1/media/abc")).status).toBe(404);
  });

  it("attached media is 404 for show and update, 422 for delete", async () => {
    const u = await makeUser();
    const m = await uploaded(u);
    await attach(m.id);
    expect((await u.api.get(`/api/v1/media/${m.id}`)).status).toBe(404);
    expect((await u.api.put(`/api/v1/media/${m.id}`, { description: "late" })).status).toBe(404);
    const del = await u.api.delete(`/api/v1/media/${m.id}`);
    expect(del.status).toBe(422);
    expect(del.body.error).toBe("Media attachment is currently used by a status");
    expect(await statusOf(m.url)).toBe(200);
  });

  it("deletes unattached media and its object", async () => {
    const u = await makeUser();
    const m = await uploaded(u);
    const del = await u.api.delete(`/api/v1/media/${m.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    expect((await u.api.get(`/api/v1/media/${m.id}`)).status).toBe(404);
    expect(await statusOf(m.url)).toBe(404);
    expect(await env.MEDIA.head(path(m.url).replace("/media/", ""))).toBeNull();
  });

  it("needs write:media for show, update and delete", async () => {
    const u = await makeUser();
    const m = await uploaded(u);
    expect((await anon.get(`/api/v1/media/${m.id}`)).status).toBe(401);
    const reader = await makeUser(undefined, { scopes: "read" });
    expect((await reader.api.get(`/api/v1/media/${m.id}`)).status).toBe(403);
    expect((await reader.api.put(`/api/v1/media/${m.id}`, {})).status).toBe(403);
    expect((await reader.api.delete(`/api/v1/media/${m.id}`)).status).toBe(403);
  });
});
