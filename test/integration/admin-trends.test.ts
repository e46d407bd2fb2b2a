// Trend review: /api/v1/admin/trends/{tags,statuses,links} (every trend row with the admin entities), approve and
// reject of tags, statuses, links and link publishers; a rejected item leaves the public trends at once and stays
// out when the cron recomputes; an approved one stays.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { LINK_TRENDS, STATUS_TRENDS, TAG_TRENDS, refreshTrends } from "../../src/trends/refresh";
import { anon, db, makeUser } from "./helpers";
import { cardStatement, tagStatements } from "./trends-fixtures";
import { ADMIN, MOD } from "./admin-fixtures";

// These tests are about scoring and listing, so trends need no prior review here (Mastodon's trendable_by_default on);
// review itself: test/integration/trends-review.test.ts.
beforeEach(async () => {
  await env.DB.prepare("INSERT OR REPLACE INTO instance_settings (key, value) VALUES ('trendable_by_default', '1')").run();
});

const pad = (id: string) => id.padStart(20, "0");

async function remoteAccounts(count: number): Promise<string[]> {
  const ids: string[] = [];
  const stmts: D1PreparedStatement[] = [];
  for (let i = 0; i < count; i++) {
    const id = snowflake();
    ids.push(id);
    stmts.push(
      env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, discoverable, created_at, updated_at) VALUES (?1, ?2, 'remote.example', ?3, 1, 1, 1)",
      ).bind(pad(id), `r${id}`, `https://remote.example/users/r${id}`),
    );
  }
  await env.DB.batch(stmts);
  return ids;
}

let n = 0;
async function status(accountId: string, o: { at: number; tag?: string; card?: string; reblogOf?: string }): Promise<string> {
  const id = snowflake(o.at + (n++ % 50));
  const stmts = [
    env.DB.prepare(
      `INSERT INTO statuses (id, uri, account_id, local, reblog_of_id, content, visibility, language, created_at, updated_at)
       VALUES (?1, ?2, ?3, 0, ?4, '<p>x</p>', 'public', 'en', ?5, ?5)`,
    ).bind(pad(id), `https://remote.example/s/${id}`, pad(accountId), o.reblogOf ? pad(o.reblogOf) : null, o.at),
  ];
  if (o.tag) stmts.push(...tagStatements(id, o.tag));
  if (o.card) stmts.push(cardStatement(id, o.card));
  await env.DB.batch(stmts);
  return id;
}

async function card(url: string): Promise<string> {
  const id = snowflake();
  await env.DB.prepare(
    `INSERT INTO preview_cards (id, url, title, description, type, link_type, provider_name, image, language, created_at, fetched_at)
     VALUES (?1, ?2, 'A story', 'What happened', 'link', 'article', 'News', 'https://news.example/i.jpg', 'en', 1, ?3)`,
  )
    .bind(pad(id), url, Date.now())
    .run();
  return id;
}

const soon = () => Date.now() - 60_000;
const logActions = async () =>
  (await env.DB.prepare("SELECT action, target_type FROM admin_action_logs ORDER BY id").all<any>()).results.map((x) => `${x.action}:${x.target_type}`);

describe("refusals", () => {
  it("403 for a role without manage_taxonomies on every route", async () => {
    const mod = await makeUser("trendmod", MOD);
    expect((await anon.get("/api/v1/admin/trends/tags")).status).toBe(401);
    for (const res of [
      await mod.api.get("/api/v1/admin/trends/tags"),
      await mod.api.get("/api/v1/admin/trends/statuses"),
      await mod.api.get("/api/v1/admin/trends/links"),
      await mod.api.get("/api/v1/admin/trends/links/publishers"),
      await mod.api.post("/api/v1/admin/trends/tags/1/approve"),
      await mod.api.post("/api/v1/admin/trends/tags/1/reject"),
      await mod.api.post("/api/v1/admin/trends/statuses/1/approve"),
      await mod.api.post("/api/v1/admin/trends/statuses/1/reject"),
      await mod.api.post("/api/v1/admin/trends/links/1/approve"),
      await mod.api.post("/api/v1/admin/trends/links/1/reject"),
      await mod.api.post("/api/v1/admin/trends/links/publishers/1/approve"),
      await mod.api.post("/api/v1/admin/trends/links/publishers/1/reject"),
    ]) {
      expect(res.status).toBe(403);
    }
    const admin = await makeUser("trendadm404", ADMIN);
    expect((await admin.api.post("/api/v1/admin/trends/tags/999/approve")).status).toBe(404);
    expect((await admin.api.post("/api/v1/admin/trends/statuses/999/reject")).status).toBe(404);
    expect((await admin.api.post("/api/v1/admin/trends/links/999/reject")).status).toBe(404);
    expect((await admin.api.post("/api/v1/admin/trends/links/publishers/999/reject")).status).toBe(404);
    expect(await logActions()).toEqual([]);
  });
});

describe("tags", () => {
  it("a rejected tag leaves the public trends and stays out after a refresh; approving brings it back", async () => {
    const admin = await makeUser("trendadm", ADMIN);
    const now = Date.now();
    for (const a of await remoteAccounts(TAG_TRENDS.threshold)) await status(a, { at: soon(), tag: "rising" });
    await refreshTrends(db(), now);
    const pub = async () => (await anon.get("/api/v1/trends/tags")).body.map((t: any) => t.name);
    expect(await pub()).toEqual(["rising"]);

    const list = await admin.api.get("/api/v1/admin/trends/tags");
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    const tag = list.body[0];
    expect(tag).toMatchObject({ name: "rising", trendable: true, usable: true, requires_review: true, following: false });
    expect(tag.history).toHaveLength(7);

    const rejected = await admin.api.post(`/api/v1/admin/trends/tags/${tag.id}/reject`);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ id: tag.id, name: "rising", trendable: false, requires_review: false });
    expect(await pub()).toEqual([]);
    await refreshTrends(db(), now + 60_000);
    expect(await pub()).toEqual([]);
    // Staff still see it, rejected.
    expect((await admin.api.get("/api/v1/admin/trends/tags")).body).toEqual([expect.objectContaining({ name: "rising", trendable: false })]);

    expect((await admin.api.post(`/api/v1/admin/trends/tags/${tag.id}/approve`)).body).toMatchObject({ trendable: true, requires_review: false });
    expect(await pub()).toEqual(["rising"]);
    await refreshTrends(db(), now + 120_000);
    expect(await pub()).toEqual(["rising"]);
    expect(await logActions()).toEqual(["reject:Tag", "approve:Tag"]);
  });
});

describe("statuses", () => {
  it("a rejected status leaves the public trends and stays out after a refresh", async () => {
    const admin = await makeUser("trendadms", ADMIN);
    const now = Date.now();
    const [author, ...fans] = await remoteAccounts(STATUS_TRENDS.threshold + 2);
    const popular = await status(author!, { at: now - 30 * 60_000 });
    await env.DB.batch(
      fans.map((a) =>
        env.DB.prepare("INSERT INTO favourites (id, account_id, status_id, created_at) VALUES (?1, ?2, ?3, ?4)").bind(
          pad(snowflake()),
          pad(a),
          pad(popular),
          now,
        ),
      ),
    );
    await refreshTrends(db(), now);
    const pub = async () => (await anon.get("/api/v1/trends/statuses")).body.map((s: any) => s.id);
    expect(await pub()).toEqual([popular]);
    const list = await admin.api.get("/api/v1/admin/trends/statuses");
    expect(list.body).toEqual([expect.objectContaining({ id: popular, requires_review: true, content: "<p>x</p>" })]);

    const rejected = await admin.api.post(`/api/v1/admin/trends/statuses/${popular}/reject`);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ id: popular, requires_review: false });
    expect(await pub()).toEqual([]);
    await refreshTrends(db(), now + 60_000);
    expect(await pub()).toEqual([]);
    expect((await admin.api.get("/api/v1/admin/trends/statuses")).body.map((s: any) => [s.id, s.requires_review])).toEqual([[popular, false]]);
    await admin.api.post(`/api/v1/admin/trends/statuses/${popular}/approve`);
    expect(await pub()).toEqual([popular]);
    await refreshTrends(db(), now + 120_000);
    expect(await pub()).toEqual([popular]);
    expect(await logActions()).toEqual(["reject:Status", "approve:Status"]);
  });
});

describe("links and publishers", () => {
  it("lists publishers; a rejected publisher takes its unreviewed links out; a link's own review wins", async () => {
    const admin = await makeUser("trendadml", ADMIN);
    const now = Date.now();
    const url = "https://news.example/story";
    const cardId = await card(url);
    for (const a of await remoteAccounts(LINK_TRENDS.threshold)) await status(a, { at: soon(), card: url });
    await refreshTrends(db(), now);
    const pub = async () => (await anon.get("/api/v1/trends/links")).body.map((l: any) => l.url);
    expect(await pub()).toEqual([url]);

    const list = await admin.api.get("/api/v1/admin/trends/links");
    expect(list.body).toEqual([expect.objectContaining({ id: cardId, url, requires_review: true, title: "A story" })]);
    expect(list.body[0].history).toHaveLength(7);

    const publishers = await admin.api.get("/api/v1/admin/trends/links/publishers");
    expect(publishers.status).toBe(200);
    expect(publishers.body).toEqual([
      { id: expect.any(String), domain: "news.example", trendable: false, reviewed_at: null, requested_review_at: null, requires_review: true },
    ]);
    const providerId = publishers.body[0].id;

    const rejected = await admin.api.post(`/api/v1/admin/trends/links/publishers/${providerId}/reject`);
    expect(rejected.body).toMatchObject({ id: providerId, domain: "news.example", trendable: false, requires_review: false });
    expect(typeof rejected.body.reviewed_at).toBe("string");
    expect(await pub()).toEqual([]);
    await refreshTrends(db(), now + 60_000);
    expect(await pub()).toEqual([]);
    // Reviewed publisher: its links no longer need review.
    expect((await admin.api.get("/api/v1/admin/trends/links")).body[0].requires_review).toBe(false);

    const approved = await admin.api.post(`/api/v1/admin/trends/links/${cardId}/approve`);
    expect(approved.body).toMatchObject({ id: cardId, url, requires_review: false });
    expect(await pub()).toEqual([url]);
    await refreshTrends(db(), now + 120_000);
    expect(await pub()).toEqual([url]);

    await admin.api.post(`/api/v1/admin/trends/links/${cardId}/reject`);
    expect(await pub()).toEqual([]);
    await admin.api.post(`/api/v1/admin/trends/links/publishers/${providerId}/approve`);
    await refreshTrends(db(), now + 180_000);
    expect(await pub()).toEqual([]);
    expect(await logActions()).toEqual(["reject:PreviewCardProvider", "approve:PreviewCard", "reject:PreviewCard", "approve:PreviewCardProvider"]);
  });
});
