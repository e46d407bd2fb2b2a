// Trends: activity seeded in D1 (local and remote accounts), scored by the cron's refresh, served by
// /api/v1/trends/{tags,statuses,links}. Each threshold is shown from both sides.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { runScheduled } from "../../src/background/cron";
import { snowflake } from "../../src/lib/text/ids";
import { LINK_TRENDS, STATUS_TRENDS, TAG_TRENDS, refreshTrends } from "../../src/trends/refresh";
import { anon, db, links, makeUser } from "./helpers";
import { cardStatement, tagStatements } from "./trends-fixtures";

// These tests are about scoring and listing, so trends need no prior review here (Mastodon's trendable_by_default on);
// review itself: test/integration/trends-review.test.ts.
beforeEach(async () => {
  await env.DB.prepare("INSERT OR REPLACE INTO instance_settings (key, value) VALUES ('trendable_by_default', '1')").run();
});

const pad = (id: string) => id.padStart(20, "0");
const DAY = 86_400_000;
const dayStart = (t: number) => Math.floor(t / DAY) * DAY;

let n = 0;
/** A moment of "today" (UTC) before `now`, distinct for each call, so seeded rows count as today's. */
function todayAt(now: number): number {
  return Math.max(dayStart(now) + 1, now - 60_000) + (n++ % 50);
}

async function remoteAccounts(count: number, opts: { discoverable?: boolean; silenced?: boolean } = {}): Promise<string[]> {
  const ids: string[] = [];
  const stmts: D1PreparedStatement[] = [];
  for (let i = 0; i < count; i++) {
    const id = snowflake();
    ids.push(id);
    const name = `r${id}`;
    stmts.push(
      env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, discoverable, silenced_at, created_at, updated_at) VALUES (?1, ?2, 'remote.example', ?3, ?4, ?5, 1, 1)",
      ).bind(pad(id), name, `https://remote.example/users/${name}`, opts.discoverable === false ? 0 : 1, opts.silenced ? 1 : null),
    );
  }
  await env.DB.batch(stmts);
  return ids;
}

interface StatusOpts {
  at: number;
  visibility?: string;
  language?: string | null;
  spoiler?: string;
  reblogOf?: string;
  inReplyTo?: string;
  tags?: string[];
  card?: string;
}

async function status(accountId: string, o: StatusOpts): Promise<string> {
  const id = snowflake(o.at);
  const stmts = [
    env.DB.prepare(
      `INSERT INTO statuses (id, uri, account_id, local, reblog_of_id, in_reply_to_id, content, spoiler_text, visibility, language, created_at, updated_at)
       VALUES (?1, ?2, ?3, 0, ?4, ?5, '<p>x</p>', ?6, ?7, ?8, ?9, ?9)`,
    ).bind(
      pad(id),
      `https://remote.example/s/${id}`,
      pad(accountId),
      o.reblogOf ? pad(o.reblogOf) : null,
      o.inReplyTo ? pad(o.inReplyTo) : null,
      o.spoiler ?? "",
      o.visibility ?? "public",
      o.language === undefined ? "en" : o.language,
      o.at,
    ),
  ];
  for (const t of o.tags ?? []) stmts.push(...tagStatements(id, t));
  if (o.card) stmts.push(cardStatement(id, o.card));
  await env.DB.batch(stmts);
  return id;
}

// Favourite ids of one instant from a counter: snowflake(at) restarts its sequence at a random point whenever another
// instant came between two calls, so ids made for the same `at` by separate calls could collide (a flake, now gone).
let favouriteSeq = 0;
const favouriteId = (at: number) => ((BigInt(at) << 16n) | BigInt(++favouriteSeq & 0xffff)).toString();

async function favourite(accountIds: string[], statusId: string, at: number) {
  await env.DB.batch(
    accountIds.map((a) =>
      env.DB.prepare("INSERT INTO favourites (id, account_id, status_id, created_at) VALUES (?1, ?2, ?3, ?4)").bind(
        pad(favouriteId(at)),
        pad(a),
        pad(statusId),
        at,
      ),
    ),
  );
}

async function card(url: string, extra: Record<string, unknown> = {}) {
  const c = {
    title: "A story",
    description: "What happened",
    type: "link",
    link_type: "article",
    provider_name: "News",
    image: "https://news.example/i.jpg",
    language: "en",
    ...extra,
  };
  await env.DB.prepare(
    `INSERT INTO preview_cards (id, url, title, description, type, link_type, provider_name, image, language, created_at, fetched_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10)`,
  )
    .bind(pad(snowflake()), url, c.title, c.description, c.type, c.link_type, c.provider_name, c.image, c.language, Date.now())
    .run();
}

describe("GET /api/v1/trends/tags", () => {
  it(`lists a tag used today by ${TAG_TRENDS.threshold} distinct accounts, not one used by fewer, with history and following`, async () => {
    const now = Date.now();
    const five = await remoteAccounts(TAG_TRENDS.threshold);
    const seven = await remoteAccounts(7);
    const silenced = await remoteAccounts(1, { silenced: true });
    for (const a of five) await status(a, { at: todayAt(now), tags: ["rising"] });
    // The same account twice counts once.
    await status(five[0], { at: todayAt(now), tags: ["rising"] });
    for (const a of seven) await status(a, { at: todayAt(now), tags: ["bigger"] });
    // Four distinct public uses, plus an unlisted one, a boost and a silenced author: still four.
    for (const a of five.slice(0, 4)) await status(a, { at: todayAt(now), tags: ["almost"] });
    await status(five[4], { at: todayAt(now), tags: ["almost"], visibility: "unlisted" });
    await status(silenced[0], { at: todayAt(now), tags: ["almost"] });
    // As many today as yesterday: nothing unusual, no trend.
    for (const a of seven.slice(0, 5)) await status(a, { at: todayAt(now), tags: ["steady"] });
    for (const a of five) await status(a, { at: dayStart(now) - 3_600_000, tags: ["steady"] });
    await status(seven[5], { at: dayStart(now) - 3_600_000, tags: ["steady"] });
    // Used enough, but not trendable (staff marked it so).
    for (const a of five) await status(a, { at: todayAt(now), tags: ["hidden"] });
    await env.DB.prepare("UPDATE tags SET trendable = 0 WHERE name = 'hidden'").run();

    await refreshTrends(db(), now);

    const res = await anon.get("/api/v1/trends/tags");
    expect(res.status).toBe(200);
    expect(res.body.map((t: any) => t.name)).toEqual(["bigger", "rising"]);
    const rising = res.body[1];
    expect(rising.url).toBe("http://tern.test/tags/rising");
    expect(rising.history).toHaveLength(7);
    expect(rising.history[0]).toEqual({ day: String(dayStart(now) / 1000), uses: "6", accounts: "5" });
    expect(rising.following).toBeUndefined();
    // The alias answers the same.
    expect((await anon.get("/api/v1/trends")).body.map((t: any) => t.name)).toEqual(["bigger", "rising"]);

    const u = await makeUser();
    expect((await u.api.post("/api/v1/tags/rising/follow")).status).toBe(200);
    const mine = await u.api.get("/api/v1/trends/tags?limit=1&offset=1");
    expect(mine.body).toEqual([expect.objectContaining({ name: "rising", following: true })]);
    expect(links(mine.headers)).toEqual({
      next: "/api/v1/trends/tags?limit=1&offset=2",
      prev: "/api/v1/trends/tags?limit=1&offset=0",
    });
  });

  it("keeps a peak decaying (4 h half-life) and forgets it after the 2-day cooldown", async () => {
    const now = Date.now();
    const accounts = await remoteAccounts(5);
    for (const a of accounts) await status(a, { at: todayAt(now), tags: ["peak"] });
    await refreshTrends(db(), now);
    const row = async () => env.DB.prepare("SELECT score, max_score FROM tag_trends").first<{ score: number; max_score: number }>();
    expect(await row()).toEqual({ score: 16, max_score: 16 });
    // Eight hours on, the same uses score no higher than the peak: the peak decays to a quarter.
    await refreshTrends(db(), now + 8 * 3_600_000);
    const later = await row();
    expect(later!.max_score).toBe(16);
    expect(later!.score).toBeCloseTo(4, 5);
    // Past the cooldown, with no uses left in the window, the row goes.
    await refreshTrends(db(), now + 3 * DAY);
    expect(await row()).toBeNull();
    expect((await anon.get("/api/v1/trends/tags")).body).toEqual([]);
  });
});

describe("GET /api/v1/trends/statuses", () => {
  it(`lists public statuses with ${STATUS_TRENDS.threshold}+ boosts and favourites, reader's languages first`, async () => {
    const now = Date.now();
    const [author, german, blockedAuthor] = await remoteAccounts(3);
    const [undiscoverable] = await remoteAccounts(1, { discoverable: false });
    const fans = await remoteAccounts(12);
    const at = now - 30 * 60_000;

    const popular = await status(author, { at, language: "en" });
    await favourite(fans.slice(0, 4), popular, now);
    await status(fans[4], { at: now, reblogOf: popular }); // 4 favourites + 1 boost = 5
    const fewer = await status(author, { at, language: "en" });
    await favourite(fans.slice(0, 4), fewer, now); // 4: below the threshold
    const deutsch = await status(german, { at, language: "de" });
    await favourite(fans.slice(0, 10), deutsch, now); // higher score than `popular`
    const cw = await status(author, { at, spoiler: "spoilers" });
    await favourite(fans.slice(0, 8), cw, now);
    const reply = await status(author, { at, inReplyTo: popular });
    await favourite(fans.slice(0, 8), reply, now);
    const shy = await status(undiscoverable, { at });
    await favourite(fans.slice(0, 8), shy, now);
    const [sensitized] = await remoteAccounts(1);
    await env.DB.prepare("UPDATE accounts SET sensitized_at = 1 WHERE id = ?").bind(pad(sensitized)).run();
    const marked = await status(sensitized, { at });
    await favourite(fans.slice(0, 8), marked, now);
    const blocked = await status(blockedAuthor, { at, language: "en" });
    await favourite(fans.slice(0, 6), blocked, now);

    await runScheduled(env, now, { housekeeping: true });

    const en = await anon.get("/api/v1/trends/statuses");
    expect(en.status).toBe(200);
    // No Accept-Language: by score.
    expect(en.body.map((s: any) => s.id)).toEqual([deutsch, blocked, popular]);
    const english = await anonWith({ "accept-language": "en-GB,en;q=0.8" }).get("/api/v1/trends/statuses");
    expect(english.body.map((s: any) => s.id)).toEqual([blocked, popular, deutsch]);

    // A signed-in reader: chosen languages win; blocked authors are left out.
    const u = await makeUser();
    await env.DB.prepare(`UPDATE users SET chosen_languages = '["de"]' WHERE account_id = ?`).bind(pad(u.id)).run();
    await env.DB.prepare("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, 0)")
      .bind(pad(snowflake()), pad(u.id), pad(blockedAuthor))
      .run();
    const mine = await u.api.get("/api/v1/trends/statuses");
    expect(mine.body.map((s: any) => s.id)).toEqual([deutsch, popular]);
    expect(mine.body[0]).toMatchObject({ favourited: false, account: { acct: expect.stringMatching(/@remote\.example$/) } });

    const paged = await anon.get("/api/v1/trends/statuses?limit=1&offset=1");
    expect(paged.body.map((s: any) => s.id)).toEqual([blocked]);
    expect(links(paged.headers).next).toBe("/api/v1/trends/statuses?limit=1&offset=2");
  });

  it("lets a status's score decay with a 1 h half-life until it drops out", async () => {
    const now = Date.now();
    const [author] = await remoteAccounts(1);
    const fans = await remoteAccounts(5);
    const s = await status(author, { at: now - 60_000 });
    await favourite(fans, s, now);
    await refreshTrends(db(), now);
    expect((await anon.get("/api/v1/trends/statuses")).body.map((x: any) => x.id)).toEqual([s]);
    // (5 − 1)² = 16; ½^6 × 16 = 0.25 < 0.3 six hours later.
    await refreshTrends(db(), now + 6 * 3_600_000);
    expect((await anon.get("/api/v1/trends/statuses")).body).toEqual([]);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM status_trends").first()).toEqual({ n: 0 });
  });
});

describe("GET /api/v1/trends/links", () => {
  it(`lists an article shared by ${LINK_TRENDS.threshold} distinct accounts (boosts count), not one shared by fewer`, async () => {
    const now = Date.now();
    const sharers = await remoteAccounts(LINK_TRENDS.threshold);
    await card("https://news.example/hot");
    await card("https://news.example/warm");
    await card("https://news.example/page", { link_type: "unknown" });
    await card("https://news.example/plain", { image: null });

    // Hot: 14 statuses and one boost by a 15th account.
    let first = "";
    for (const a of sharers.slice(0, -1)) {
      const id = await status(a, { at: todayAt(now), card: "https://news.example/hot" });
      first ||= id;
    }
    await status(sharers[sharers.length - 1], { at: todayAt(now), reblogOf: first });
    // Warm: one account short. Not an article, or no image: never trends.
    for (const a of sharers.slice(0, -1)) await status(a, { at: todayAt(now), card: "https://news.example/warm" });
    for (const a of sharers) await status(a, { at: todayAt(now), card: "https://news.example/page" });
    for (const a of sharers) await status(a, { at: todayAt(now), card: "https://news.example/plain" });
    // A content warning keeps a share out.
    await status(sharers[0], { at: todayAt(now), card: "https://news.example/warm", spoiler: "cw" });

    await refreshTrends(db(), now);

    const res = await anon.get("/api/v1/trends/links");
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({
      url: "https://news.example/hot",
      title: "A story",
      description: "What happened",
      type: "link",
      provider_name: "News",
      image: "https://news.example/i.jpg",
      authors: [],
    });
    expect(res.body[0].history).toHaveLength(7);
    expect(res.body[0].history[0]).toEqual({ day: String(dayStart(now) / 1000), uses: "15", accounts: "15" });
    expect(res.body[0].history[1]).toMatchObject({ uses: "0", accounts: "0" });
  });

  it("orders by the reader's language, then score", async () => {
    const now = Date.now();
    const sharers = await remoteAccounts(20);
    await card("https://news.example/en", { language: "en" });
    await card("https://news.example/fr", { language: "fr" });
    for (const a of sharers.slice(0, 15)) await status(a, { at: todayAt(now), card: "https://news.example/en" });
    for (const a of sharers) await status(a, { at: todayAt(now), card: "https://news.example/fr" });
    await refreshTrends(db(), now);
    const urls = async (h: Record<string, string>) => (await anonWith(h).get("/api/v1/trends/links")).body.map((l: any) => l.url);
    expect(await urls({})).toEqual(["https://news.example/fr", "https://news.example/en"]);
    expect(await urls({ "accept-language": "en" })).toEqual(["https://news.example/en", "https://news.example/fr"]);
  });
});

/** A signed-out client sending extra headers. */
function anonWith(headers: Record<string, string>) {
  return {
    get: async (path: string) => {
      const { SELF } = await import("cloudflare:test");
      const res = await SELF.fetch(`http://tern.test${path}`, { headers });
      return { status: res.status, body: (await res.json()) as any, headers: res.headers };
    },
  };
}
