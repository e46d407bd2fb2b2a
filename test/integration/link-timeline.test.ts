// GET /api/v1/timelines/link?url= (Mastodon 4.3): the public statuses that share a trending link, newest first, paged;
// a link that is not an allowed trend is a 404, a missing url a 400.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, links, makeUser } from "./helpers";

const URL_ = "https://news.example/story";
const pad = (s: string) => s.padStart(20, "0");

async function card(allowed: boolean) {
  await env.DB.batch([
    env.DB.prepare("INSERT INTO preview_cards (id, url, type, created_at, fetched_at) VALUES (?1, ?2, 'link', 0, 0)").bind(pad("77"), URL_),
    env.DB.prepare("INSERT INTO preview_card_trends (preview_card_id, score, max_score, allowed, history, updated_at) VALUES (?1, 10, 10, ?2, '[]', 0)").bind(
      pad("77"),
      allowed ? 1 : 0,
    ),
  ]);
}

async function share(statusId: string) {
  await env.DB.prepare("INSERT INTO status_preview_cards (status_id, preview_card_id, url) VALUES (?1, ?2, ?3)").bind(pad(statusId), pad("77"), URL_).run();
}

describe("link timeline", () => {
  it("lists the public statuses sharing a trending link, newest first, with Link paging", async () => {
    const a = await makeUser();
    const b = await makeUser();
    await card(true);
    const ids: string[] = [];
    for (const [u, visibility] of [
      [a, "public"],
      [b, "public"],
      [a, "unlisted"],
      [b, "public"],
    ] as const) {
      const r = await u.api.post("/api/v1/statuses", { status: `read ${URL_}`, visibility });
      ids.push(r.body.id);
      await share(r.body.id);
    }
    const page = await anon.get(`/api/v1/timelines/link?url=${encodeURIComponent(URL_)}`);
    expect(page.status).toBe(200);
    expect(page.body.map((s: any) => s.id)).toEqual([ids[3], ids[1], ids[0]]);
    const first = await anon.get(`/api/v1/timelines/link?url=${encodeURIComponent(URL_)}&limit=2`);
    expect(first.body.map((s: any) => s.id)).toEqual([ids[3], ids[1]]);
    const next = links(first.headers).next!;
    expect((await anon.get(next)).body.map((s: any) => s.id)).toEqual([ids[0]]);
    // A viewer who blocks b does not see b's statuses.
    expect((await a.api.post(`/api/v1/accounts/${b.id}/block`)).status).toBe(200);
    expect((await a.api.get(`/api/v1/timelines/link?url=${encodeURIComponent(URL_)}`)).body.map((s: any) => s.id)).toEqual([ids[0]]);
  });

  it("404 for a link that is not an allowed trend, 400 without a url", async () => {
    await card(false);
    expect((await anon.get(`/api/v1/timelines/link?url=${encodeURIComponent(URL_)}`)).status).toBe(404);
    expect((await anon.get("/api/v1/timelines/link?url=https://nowhere.example/")).status).toBe(404);
    expect((await anon.get("/api/v1/timelines/link")).status).toBe(400);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get(`/api/v1/timelines/link?url=${encodeURIComponent(URL_)}`)).status).toBe(403);
  });
});
