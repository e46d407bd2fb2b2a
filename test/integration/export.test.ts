// Account exports: every CSV kind in Mastodon's format (app/models/export.rb) through the API (read scope) and the
// signed-in web session at Mastodon's /settings/exports paths; the archive (actor, outbox, likes, bookmarks, media)
// built in the background into R2 and streamed as a zip whose entries and CRCs check out.
import { SELF, env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { crc32 } from "../../src/lib/text/crc32";
import { csv, populate } from "./export-fixtures";
import { ORIGIN, eventually, makeUser } from "./helpers";
import { png } from "./media-fixtures";
import { type Jar, hidden, signIn, web } from "./oauth-helpers";
import { installQueueCapture } from "./queues";

beforeEach(() => installQueueCapture());

describe("CSV exports", () => {
  it("writes every kind in Mastodon's format", async () => {
    const a = await makeUser();
    const { b, c, d, e, remote, statusUri } = await populate(a);
    const follows = await csv(a, "follows");
    expect(follows.status).toBe(200);
    expect(follows.type).toMatch(/^text\/csv/);
    expect(follows.text).toBe(
      `Account address,Show boosts,Notify on new posts,Languages\n${c.username}@tern.test,false,false,\n${b.username}@tern.test,true,true,"en, de"\n`,
    );
    expect((await csv(a, "followers")).text).toBe(`${d.username}@tern.test\n`);
    expect((await csv(a, "lists")).text).toBe(`"Friends, ""close""",${b.username}@tern.test\n`);
    expect((await csv(a, "blocks")).text).toBe(`r${b.username}@remote.example\n${e.username}@tern.test\n`);
    expect((await csv(a, "mutes")).text).toBe(`Account address,Hide notifications\n${d.username}@tern.test,false\n`);
    expect((await csv(a, "domain_blocks")).text).toBe("spam.example\n");
    expect((await csv(a, "bookmarks")).text).toBe(`${statusUri}\n`);
    expect(remote).toBeTruthy();
    expect((await csv(a, "nothing")).status).toBe(404);
  });

  it("needs a token with read scope, or the web session at /settings/exports", async () => {
    const a = await makeUser(undefined, { scopes: "write" });
    expect((await csv(a, "follows")).status).toBe(403);
    expect((await SELF.fetch(`${ORIGIN}/api/tern/exports/follows.csv`)).status).toBe(401);
    const anonymous = await web("/settings/exports/follows.csv");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toMatch(/^\/auth\/sign_in/);

    const jar: Jar = await signIn(`${a.username}@example.com`);
    const page = await web("/settings/exports", { jar });
    expect(page.status).toBe(200);
    expect(page.text_).toContain('href="/settings/exports/follows.csv"');
    const viaSession = await web("/settings/exports/mutes.csv", { jar });
    expect(viaSession.status).toBe(200);
    expect(viaSession.text_).toBe("Account address,Hide notifications\n");
    expect(viaSession.headers.get("content-disposition")).toContain("muted_accounts.csv");
    // The archive form needs the session's CSRF token.
    expect((await web("/settings/exports/archive", { jar, form: { csrf: "nope" } })).status).toBe(403);
    const ok = await web("/settings/exports/archive", { jar, form: { csrf: hidden(page.text_, "csrf")! }, headers: { origin: ORIGIN } });
    expect(ok.status).toBe(303);
  });
});

interface ZipFile {
  name: string;
  data: Uint8Array;
}

/** Reads a STORE-only zip by its central directory and checks each entry's CRC-32 and local header. */
function unzip(buf: Uint8Array): ZipFile[] {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const end = buf.length - 22;
  expect(v.getUint32(end, true)).toBe(0x06054b50);
  const count = v.getUint16(end + 10, true);
  let p = v.getUint32(end + 16, true);
  const out: ZipFile[] = [];
  for (let i = 0; i < count; i++) {
    expect(v.getUint32(p, true)).toBe(0x02014b50);
    expect(v.getUint16(p + 10, true)).toBe(0); // STORE
    const crc = v.getUint32(p + 16, true);
    const size = v.getUint32(p + 20, true);
    const nameLen = v.getUint16(p + 28, true);
    const local = v.getUint32(p + 42, true);
    const name = new TextDecoder().decode(buf.subarray(p + 46, p + 46 + nameLen));
    expect(v.getUint32(local, true)).toBe(0x04034b50);
    const start = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
    const data = buf.subarray(start, start + size);
    expect(crc32(data)).toBe(crc);
    expect(v.getUint32(start + size, true)).toBe(0x08074b50); // data descriptor
    out.push({ name, data });
    p += 46 + nameLen + v.getUint16(p + 30, true) + v.getUint16(p + 32, true);
  }
  return out;
}

describe("archive", () => {
  it("is built in the background into R2 and streamed as a zip in Mastodon's layout", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const form = new FormData();
    form.append("file", new File([await png(4, 3)], "pic.png", { type: "image/png" }));
    const media = await a.api.post("/api/v2/media", form, "multipart");
    expect(media.status).toBe(200);
    const mine = await a.api.post("/api/v1/statuses", { status: "with a picture", media_ids: [media.body.id] });
    expect(mine.status).toBe(200);
    await a.api.post("/api/v1/statuses", { status: "private one", visibility: "private" });
    const theirs = await b.api.post("/api/v1/statuses", { status: "liked" });
    await a.api.post(`/api/v1/statuses/${theirs.body.id}/favourite`);
    await a.api.post(`/api/v1/statuses/${theirs.body.id}/bookmark`);
    await a.api.post(`/api/v1/statuses/${theirs.body.id}/reblog`);

    expect((await a.api.get("/api/tern/exports/archive")).status).toBe(404);
    const req = await a.api.post("/api/tern/exports/archive");
    expect(req.status).toBe(202);
    expect(req.body.state).toBe("pending");
    expect((await a.api.post("/api/tern/exports/archive")).status).toBe(422); // once every 6 days
    const ready = await eventually(async () => {
      const s = await a.api.get("/api/tern/exports/archive");
      expect(s.body.state).toBe("ready");
      return s.body;
    });
    const res = await SELF.fetch(`${ORIGIN}/api/tern/exports/archive.zip`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    const buf = new Uint8Array(await res.arrayBuffer());
    expect(buf.length).toBe(ready.size);
    const files = unzip(buf);
    const names = files.map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(["outbox.json", "likes.json", "bookmarks.json", "actor.json"]));
    const json = (n: string) => JSON.parse(new TextDecoder().decode(files.find((f) => f.name === n)!.data));
    const outbox = json("outbox.json");
    expect(outbox).toMatchObject({ id: "outbox.json", type: "OrderedCollection", totalItems: 3 });
    expect(outbox.orderedItems.map((i: any) => i.type)).toEqual(["Create", "Create", "Announce"]);
    const att = outbox.orderedItems[0].object.attachment[0];
    expect(att.url).toMatch(/^media_attachments\//);
    const file = files.find((f) => f.name === att.url);
    expect(file?.data.length).toBeGreaterThan(0);
    expect(json("likes.json")).toMatchObject({ totalItems: 1, orderedItems: [theirs.body.uri] });
    expect(json("bookmarks.json")).toMatchObject({ totalItems: 1, orderedItems: [theirs.body.uri] });
    expect(json("actor.json")).toMatchObject({ preferredUsername: a.username, outbox: "outbox.json", likes: "likes.json", bookmarks: "bookmarks.json" });
    // The parts the rounds wrote are gone; the zip stays.
    const left = await env.MEDIA.list({ prefix: `backups/${ready.id}/` });
    expect(left.objects.map((o) => o.key)).toEqual([expect.stringMatching(/archive-.*\.zip$/)]);
    // Another account cannot reach it.
    expect((await b.api.get("/api/tern/exports/archive.zip")).status).toBe(404);
  });
});
