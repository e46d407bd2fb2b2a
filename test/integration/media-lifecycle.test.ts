// Media lifecycle (security issue 7, class 9): unguessable keys, media that goes with its status (or waits a day for a
// redraft, unserved), and the cron that removes what nothing holds. Real R2 and D1 in workerd.
import { SELF, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanupUnattachedMedia, MEDIA_CLEANUP_PER_RUN, UNATTACHED_MEDIA_KEEP_MS } from "../../src/background/housekeeping";
import { Effects } from "../../src/effects/collector";
import { sendEffects } from "../../src/effects/send";
import { loadStatusBundle } from "../../src/entities/statuses/status";
import { removeStatus } from "../../src/services/statuses/delete-status";
import { ORIGIN, db, eventually, makeUser, type TestUser } from "./helpers";
import { mp4, png, statusOf } from "./media-fixtures";

afterEach(() => {
  vi.restoreAllMocks();
});

const DAY = 24 * 60 * 60 * 1000;
const pad = (id: string) => id.padStart(20, "0");
const keyOf = (url: string) => new URL(url).pathname.replace(/^\/media\//, "");
const head = (url: string) => SELF.fetch(url, { method: "HEAD" }).then((r) => r.status);
const stored = async (url: string) => (await env.MEDIA.head(keyOf(url))) !== null;
const rowCount = async (id: string) =>
  ((await env.DB.prepare("SELECT count(*) AS n FROM media_attachments WHERE id = ?").bind(pad(id)).first()) as { n: number }).n;

interface Media {
  id: string;
  url: string;
  preview_url: string;
}

async function upload(u: TestUser, opts: { video?: boolean; thumbnail?: boolean } = {}): Promise<Media> {
  const f = new FormData();
  f.append("file", opts.video ? new File([mp4(320, 240, 1)], "v.mp4", { type: "video/mp4" }) : new File([await png(4, 3)], "p.png", { type: "image/png" }));
  if (opts.thumbnail) f.append("thumbnail", new File([await png(8, 6)], "t.png", { type: "image/png" }));
  const res = await u.api.post("/api/v2/media", f, "multipart");
  expect(res.status).toBe(200);
  return res.body;
}

async function post(u: TestUser, media: string[], status = "with pictures") {
  const res = await u.api.post("/api/v1/statuses", { status, media_ids: media });
  expect(res.status).toBe(200);
  return res.body as { id: string; media_attachments: Media[] };
}

/** Every URL of an attachment (original, and the thumbnail when there is one). */
const urlsOf = (m: Media) => [m.url, ...(m.preview_url && m.preview_url !== m.url ? [m.preview_url] : [])];

describe("unguessable media keys", () => {
  const RANDOM = /^\/media\/media_attachments\/\d+\/([0-9a-f]{32})\/(original|small|thumbnail)\.(png|mp4|webp)$/;

  it("every attachment and thumbnail key carries 128 random bits, different for each upload", async () => {
    const u = await makeUser();
    const a = await upload(u);
    const b = await upload(u);
    const v = await upload(u, { video: true, thumbnail: true });
    const segments = [a.url, b.url, v.url, v.preview_url].map((url) => {
      const m = new URL(url).pathname.match(RANDOM);
      expect(m, url).not.toBeNull();
      return m![1];
    });
    expect(new Set(segments).size).toBe(4);
    // Two uploads' keys differ in at least 32 hex digits of randomness, not only in a sequence.
    const differing = [...segments[0]].filter((ch, i) => ch !== segments[1][i]).length;
    expect(differing).toBeGreaterThan(16);
    for (const url of [a.url, b.url, v.url, v.preview_url]) expect(await statusOf(url)).toBe(200);
  });

  it("a replaced thumbnail gets a new key and the old one is no longer served", async () => {
    const u = await makeUser();
    const v = await upload(u, { video: true, thumbnail: true });
    const f = new FormData();
    f.append("thumbnail", new File([await png(9, 9)], "t2.png", { type: "image/png" }));
    const res = await u.api.put(`/api/v1/media/${v.id}`, f, "multipart");
    expect(res.status).toBe(200);
    expect(res.body.preview_url).not.toBe(v.preview_url);
    expect(new URL(res.body.preview_url).pathname).toMatch(RANDOM);
    expect(await statusOf(res.body.preview_url)).toBe(200);
    expect(await statusOf(v.preview_url)).toBe(404);
    expect(await stored(v.preview_url)).toBe(false);
  });

  it("avatars and headers carry 128 random bits too", async () => {
    const u = await makeUser();
    const f = new FormData();
    f.append("avatar", new File([await png(10, 10)], "a.png", { type: "image/png" }));
    f.append("header", new File([await png(30, 10)], "h.png", { type: "image/png" }));
    const res = await u.api.patch("/api/v1/accounts/update_credentials", f, "multipart");
    expect(res.status).toBe(200);
    for (const url of [res.body.avatar, res.body.header]) {
      expect(new URL(url).pathname).toMatch(/^\/media\/accounts\/(avatars|headers)\/[0-9a-f]{32}\/original\.png$/);
      expect(await statusOf(url)).toBe(200);
    }
  });
});

describe("DELETE /api/v1/statuses/:id and its media", () => {
  it("without delete_media: the media stops being served, and a redraft within the day serves it again", async () => {
    const u = await makeUser();
    const other = await makeUser();
    const pic = await upload(u);
    const vid = await upload(u, { video: true, thumbnail: true });
    const s = await post(u, [pic.id, vid.id]);
    const urls = [...urlsOf(pic), ...urlsOf(vid)];
    for (const url of urls) expect(await statusOf(url)).toBe(200);

    const del = await u.api.delete(`/api/v1/statuses/${s.id}`);
    expect(del.status).toBe(200);
    // The response keeps the media for "delete & redraft".
    expect(del.body.media_attachments.map((m: Media) => m.id)).toEqual([pic.id, vid.id]);
    for (const url of urls) {
      expect(await statusOf(url), url).toBe(404);
      expect(await head(url), url).toBe(404);
      expect(await stored(url), url).toBe(true); // kept for the redraft
    }
    await eventually(async () => {
      for (const url of urls) expect(await stored(url)).toBe(true);
    });

    // Nobody else can take it; its author can, and then it is served again as part of the new post.
    expect((await other.api.post("/api/v1/statuses", { status: "mine now", media_ids: [pic.id] })).status).toBe(422);
    const again = await post(u, [pic.id, vid.id], "redrafted");
    expect(again.media_attachments.map((m) => m.url)).toEqual([pic.url, vid.url]);
    for (const url of urls) expect(await statusOf(url), url).toBe(200);
    const shown = await other.api.get(`/api/v1/statuses/${again.id}`);
    expect(shown.body.media_attachments.map((m: Media) => m.id)).toEqual([pic.id, vid.id]);
  });

  it("an attachment an edit dropped (still in the edit history) stops being served with the status", async () => {
    const u = await makeUser();
    const a = await upload(u);
    const b = await upload(u);
    const s = await post(u, [a.id, b.id]);
    const edit = await u.api.put(`/api/v1/statuses/${s.id}`, { status: "only b", media_ids: [b.id] });
    expect(edit.status).toBe(200);
    expect(await statusOf(a.url)).toBe(200); // the history still shows it
    expect((await u.api.delete(`/api/v1/statuses/${s.id}`)).status).toBe(200);
    expect(await statusOf(a.url)).toBe(404);
    expect(await statusOf(b.url)).toBe(404);
  });

  it("delete_media=true deletes the rows and every R2 object at once", async () => {
    const u = await makeUser();
    const pic = await upload(u);
    const vid = await upload(u, { video: true, thumbnail: true });
    const s = await post(u, [pic.id, vid.id]);
    const urls = [...urlsOf(pic), ...urlsOf(vid)];
    expect(urls).toHaveLength(3);

    const del = await u.api.delete(`/api/v1/statuses/${s.id}?delete_media=true`);
    expect(del.status).toBe(200);
    for (const url of urls) expect(await statusOf(url), url).toBe(404);
    expect(await rowCount(pic.id)).toBe(0);
    expect(await rowCount(vid.id)).toBe(0);
    await eventually(async () => {
      for (const url of urls) expect(await stored(url), url).toBe(false);
    });
    // Nothing is left to redraft with.
    expect((await u.api.post("/api/v1/statuses", { status: "again", media_ids: [pic.id] })).status).toBe(422);
  });

  it("delete_media=false (form body) behaves as the default", async () => {
    const u = await makeUser();
    const pic = await upload(u);
    const s = await post(u, [pic.id]);
    const res = await SELF.fetch(`${ORIGIN}/api/v1/statuses/${s.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${u.token}`, "content-type": "application/x-www-form-urlencoded" },
      body: "delete_media=false",
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await rowCount(pic.id)).toBe(1);
    expect(await stored(pic.url)).toBe(true);
    expect(await statusOf(pic.url)).toBe(404);
  });

  it("a status removed by its server, staff or account cleanup (removeStatus) takes its media and history media with it", async () => {
    const u = await makeUser();
    const a = await upload(u);
    const b = await upload(u, { video: true, thumbnail: true });
    const s = await post(u, [a.id, b.id]);
    expect((await u.api.put(`/api/v1/statuses/${s.id}`, { status: "only b", media_ids: [b.id] })).status).toBe(200);
    const urls = [...urlsOf(a), ...urlsOf(b)];

    const bundle = await loadStatusBundle(db(), [s.id], null);
    const row = bundle.statuses.get(s.id)!;
    const fx = new Effects(ORIGIN);
    expect(await removeStatus(db(), fx, row)).toBe(true);
    expect(
      fx.list
        .filter((e) => e.type === "delete_media")
        .flatMap((e) => (e.type === "delete_media" ? e.keys : []))
        .sort(),
    ).toEqual(urls.map(keyOf).sort());
    await sendEffects(env, fx);
    for (const url of urls) expect(await statusOf(url), url).toBe(404);
    expect(await rowCount(a.id)).toBe(0);
    expect(await rowCount(b.id)).toBe(0);
    await eventually(async () => {
      for (const url of urls) expect(await stored(url), url).toBe(false);
    });
  });
});

describe("cron: unattached media cleanup", () => {
  const age = (id: string, column: "created_at" | "detached_at", at: number) =>
    env.DB.prepare(`UPDATE media_attachments SET ${column} = ? WHERE id = ?`).bind(at, pad(id)).run();

  it("removes uploads never attached and media detached for over a day, objects and rows; keeps everything else", async () => {
    const u = await makeUser();
    const now = Date.now();
    const old = now - UNATTACHED_MEDIA_KEEP_MS - 60_000;
    const neverAttached = await upload(u, { video: true, thumbnail: true });
    const fresh = await upload(u);
    const detached = await upload(u);
    const detachedRecently = await upload(u);
    const attached = await upload(u);
    const scheduled = await upload(u);

    const gone = await post(u, [detached.id, detachedRecently.id]);
    expect((await u.api.delete(`/api/v1/statuses/${gone.id}`)).status).toBe(200);
    await post(u, [attached.id]);
    const sched = await u.api.post("/api/v1/statuses", {
      status: "later",
      media_ids: [scheduled.id],
      scheduled_at: new Date(now + 7 * DAY).toISOString(),
    });
    expect(sched.status).toBe(200);
    for (const m of [neverAttached, detached, detachedRecently, attached, scheduled]) await age(m.id, "created_at", old - DAY);
    await age(detached.id, "detached_at", old);

    const fx = new Effects(ORIGIN);
    expect(await cleanupUnattachedMedia(db(), env, fx, now)).toBe(2);
    expect(fx.list).toEqual([]);
    for (const m of [neverAttached, detached]) {
      expect(await rowCount(m.id)).toBe(0);
      for (const url of urlsOf(m)) {
        expect(await stored(url), url).toBe(false);
        expect(await statusOf(url), url).toBe(404);
      }
    }
    for (const m of [fresh, detachedRecently, attached, scheduled]) {
      expect(await rowCount(m.id)).toBe(1);
      expect(await stored(m.url)).toBe(true);
    }
    // The redraft window is counted from the delete, not the upload: still there, and a redraft serves it again.
    const redraft = await post(u, [detachedRecently.id], "redraft");
    expect(redraft.media_attachments[0].url).toBe(detachedRecently.url);
    expect(await statusOf(detachedRecently.url)).toBe(200);
    // A day after the upload, the fresh one goes too.
    expect(await cleanupUnattachedMedia(db(), env, fx, Date.now() + UNATTACHED_MEDIA_KEEP_MS + 1)).toBe(1);
    expect(await rowCount(fresh.id)).toBe(0);
    expect(await stored(fresh.url)).toBe(false);
  });

  it("works in bounded batches, oldest first", async () => {
    const u = await makeUser();
    const now = Date.now();
    const ms = await Promise.all([0, 1, 2].map(() => upload(u)));
    for (const [i, m] of ms.entries()) await age(m.id, "created_at", now - 2 * DAY - (3 - i) * 1000);
    const fx = new Effects(ORIGIN);
    expect(MEDIA_CLEANUP_PER_RUN).toBeLessThanOrEqual(500);
    expect(await cleanupUnattachedMedia(db(), env, fx, now, 2)).toBe(2);
    expect(await rowCount(ms[0].id)).toBe(0);
    expect(await rowCount(ms[1].id)).toBe(0);
    expect(await rowCount(ms[2].id)).toBe(1);
    expect(await cleanupUnattachedMedia(db(), env, fx, now, 2)).toBe(1);
    expect(await cleanupUnattachedMedia(db(), env, fx, now, 2)).toBe(0);
    for (const m of ms) expect(await stored(m.url)).toBe(false);
  });

  it("when R2 fails, the keys are retried through the queue", async () => {
    const u = await makeUser();
    const now = Date.now();
    const m = await upload(u);
    await age(m.id, "created_at", now - 2 * DAY);
    vi.spyOn(env.MEDIA, "delete").mockRejectedValueOnce(new Error("R2 unavailable"));
    const fx = new Effects(ORIGIN);
    expect(await cleanupUnattachedMedia(db(), env, fx, now)).toBe(1);
    expect(await rowCount(m.id)).toBe(0);
    expect(await statusOf(m.url)).toBe(404);
    expect(fx.list).toEqual([{ type: "delete_media", keys: [keyOf(m.url)] }]);
    await sendEffects(env, fx);
    await eventually(async () => expect(await stored(m.url)).toBe(false));
  });
});
