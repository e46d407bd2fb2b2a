// Full-text status search (GET /api/v2/search, type=statuses) on the FTS5 index: Mastodon's rules for what a user may
// find, its operators, hostile query text, and the index following posts, edits, deletes and remote Create/Update.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { snowflakeTime } from "../../src/lib/text/ids";
import { create, deliver, installFetchMock, newId, note, remoteActor, sql } from "./federation-inbox-fixtures";
import { statusSearchQuery } from "../../src/queries/statuses/search";
import { cfg, db, makeUser, type Res, type TestUser } from "./helpers";
import { makeMedia } from "./statuses-fixtures";

beforeAll(() => installFetchMock());

const pad = (id: string) => id.padStart(20, "0");
const ids = (r: Res): string[] => {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.statuses.map((s: { id: string }) => s.id);
};
const search = (u: TestUser, q: string, extra = "") => u.api.get(`/api/v2/search?type=statuses&q=${encodeURIComponent(q)}${extra}`);
const found = async (u: TestUser, q: string, extra = "") => ids(await search(u, q, extra));
const roundTrips = (r: Res) => Number(/d1;[^,]*dur=(\d+)/.exec(r.headers.get("server-timing") ?? "")?.[1] ?? Number.NaN);

async function post(u: TestUser, status: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await u.api.post("/api/v1/statuses", { status, language: "en", ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id;
}

async function indexable(u: TestUser) {
  expect((await u.api.patch("/api/v1/accounts/update_credentials", { indexable: true })).body.indexable).toBe(true);
}

describe("who finds what (Mastodon's searchable_by and PublicStatusesIndex)", () => {
  it("own, mentioned, favourited, bookmarked, boosted and voted statuses, plus public ones of indexable accounts", async () => {
    const me = await makeUser("seeker");
    const bob = await makeUser("bobsearch");
    const alice = await makeUser("alicesearch");
    await indexable(alice);

    const own = await post(me, "pangolin of mine");
    const ownPrivate = await post(me, "pangolin kept private", { visibility: "private" });
    const mentioned = await post(bob, "@seeker a pangolin for you", { visibility: "direct" });
    const faved = await post(bob, "pangolin to favourite");
    const marked = await post(bob, "pangolin to bookmark");
    const boosted = await post(bob, "pangolin to boost");
    const voted = await post(bob, "pangolin poll", { poll: { options: ["yes", "no"], expires_in: 3600 } });
    const stranger = await post(bob, "pangolin nobody touched");
    const bobPrivate = await post(bob, "pangolin for followers", { visibility: "private" });
    const indexed = await post(alice, "pangolin in the index");
    await post(alice, "pangolin unlisted", { visibility: "unlisted" });
    await post(alice, "pangolin followers only", { visibility: "private" });

    expect((await me.api.post(`/api/v1/statuses/${faved}/favourite`)).status).toBe(200);
    expect((await me.api.post(`/api/v1/statuses/${marked}/bookmark`)).status).toBe(200);
    expect((await me.api.post(`/api/v1/statuses/${boosted}/reblog`)).status).toBe(200);
    const poll = (await me.api.get(`/api/v1/statuses/${voted}`)).body.poll;
    expect((await me.api.post(`/api/v1/polls/${poll.id}/votes`, { choices: ["0"] })).status).toBe(200);

    expect(await found(me, "pangolin")).toEqual([indexed, voted, boosted, marked, faved, mentioned, ownPrivate, own]);
    expect(await found(me, "pangolin in:library")).toEqual([voted, boosted, marked, faved, mentioned, ownPrivate, own]);
    expect(await found(me, "pangolin in:public")).toEqual([indexed]);
    // bob finds his own (the private one too), and alice's indexed status; never me's private one.
    expect(await found(bob, "pangolin")).toEqual([indexed, bobPrivate, stranger, voted, boosted, marked, faved, mentioned]);
    // A boost is not a result: the original is.
    expect((await search(me, "boost")).body.statuses[0].reblog).toBeNull();
    // Without indexable, alice's public status is hers alone again.
    expect((await alice.api.patch("/api/v1/accounts/update_credentials", { indexable: false })).status).toBe(200);
    expect(await found(me, "index")).toEqual([]);
    expect(await found(alice, "index")).toEqual([indexed]);
  });

  it("never shows blocked, muted, blocking or silenced authors, nor what the viewer may no longer read", async () => {
    const me = await makeUser();
    const [blocked, muted, blocker, silenced, fine, followed] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    for (const u of [blocked, muted, blocker, silenced, fine]) await indexable(u);
    await post(blocked, "quokka one");
    const mutedFaved = await post(muted, "quokka two");
    await post(blocker, "quokka three");
    await post(silenced, "quokka four");
    const ok = await post(fine, "quokka five");
    // A private status read while following, favourited, then unfollowed: no longer readable, not found.
    expect((await me.api.post(`/api/v1/accounts/${followed.id}/follow`)).status).toBe(200);
    const priv = await post(followed, "quokka six", { visibility: "private" });
    expect((await me.api.post(`/api/v1/statuses/${priv}/favourite`)).status).toBe(200);
    expect((await me.api.post(`/api/v1/statuses/${mutedFaved}/favourite`)).status).toBe(200);
    expect(await found(me, "quokka")).toEqual([priv, ok, expect.any(String), expect.any(String), mutedFaved, expect.any(String)]);

    expect((await me.api.post(`/api/v1/accounts/${blocked.id}/block`)).status).toBe(200);
    expect((await me.api.post(`/api/v1/accounts/${muted.id}/mute`)).status).toBe(200);
    expect((await blocker.api.post(`/api/v1/accounts/${me.id}/block`)).status).toBe(200);
    await env.DB.prepare("UPDATE accounts SET silenced_at = ? WHERE id = ?").bind(Date.now(), pad(silenced.id)).run();
    expect((await me.api.post(`/api/v1/accounts/${followed.id}/unfollow`)).status).toBe(200);
    expect(await found(me, "quokka")).toEqual([ok]);
    // Following a silenced account shows it again (Mastodon's StatusFilter).
    expect((await me.api.post(`/api/v1/accounts/${silenced.id}/follow`)).status).toBe(200);
    expect((await found(me, "quokka")).length).toBe(2);
  });

  it("finds nothing signed out", async () => {
    const u = await makeUser();
    await indexable(u);
    await post(u, "anonymous armadillo");
    const res = await (await import("./helpers")).anon.get("/api/v2/search?type=statuses&q=armadillo");
    expect(res.status).toBe(200);
    expect(res.body.statuses).toEqual([]);
  });
});

describe("operators", () => {
  it("has: is: language: from: and hashtags, phrases and exclusions", async () => {
    const me = await makeUser("opsuser");
    const other = await makeUser("opsother");
    await indexable(other);
    const alpha = await post(me, "walrus alpha #Seals");
    const beta = await post(me, "walrus beta", { language: "de", spoiler_text: "careful" });
    const reply = await post(me, "walrus gamma reply", { in_reply_to_id: alpha });
    const m1 = await makeMedia(me.id);
    const withMedia = await post(me, "walrus delta", { media_ids: [m1] });
    const m2 = await makeMedia(me.id);
    await env.DB.prepare("UPDATE media_attachments SET description = 'a tusked mammal on the ice' WHERE id = ?").bind(pad(m2)).run();
    const described = await post(me, "photo", { media_ids: [m2] });
    const poll = await post(me, "walrus vote", { poll: { options: ["kelp", "clams"], expires_in: 3600 } });
    const link = await post(me, "walrus link https://news.example/a");
    const embed = await post(me, "walrus video https://video.example/v");
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO preview_cards (id, url, type, created_at, fetched_at) VALUES ('00000000000000000001', 'https://news.example/a', 'link', 0, 0)",
      ),
      env.DB.prepare(
        "INSERT INTO preview_cards (id, url, type, created_at, fetched_at) VALUES ('00000000000000000002', 'https://video.example/v', 'video', 0, 0)",
      ),
      env.DB.prepare(
        "INSERT INTO status_preview_cards (status_id, preview_card_id, url) VALUES (?, '00000000000000000001', 'https://news.example/a'), (?, '00000000000000000002', 'https://video.example/v')",
      ).bind(pad(link), pad(embed)),
    ]);
    const theirs = await post(other, "walrus from elsewhere");

    // Text from every part: content warning, poll options, media descriptions; stems and diacritics fold.
    expect(await found(me, "careful")).toEqual([beta]);
    expect(await found(me, "clams")).toEqual([poll]);
    expect(await found(me, "tusked")).toEqual([described]);
    expect(await found(me, "mammals")).toEqual([described]);
    expect(await found(me, "wälrus from:me alpha")).toEqual([alpha]);

    expect(await found(me, `"walrus alpha"`)).toEqual([alpha]);
    expect(await found(me, `"alpha walrus"`)).toEqual([]);
    expect(await found(me, "walrus -link -video -vote from:me")).toEqual([withMedia, reply, beta, alpha]);
    expect(await found(me, "-walrus from:me")).toEqual([described]);
    expect(await found(me, "#seals")).toEqual([alpha]);
    expect(await found(me, "walrus -#seals from:me")).toEqual([embed, link, poll, withMedia, reply, beta]);

    expect(await found(me, "walrus has:media")).toEqual([withMedia]);
    expect(await found(me, "has:image")).toEqual([described, withMedia]);
    expect(await found(me, "walrus has:video")).toEqual([]);
    expect(await found(me, "walrus has:audio")).toEqual([]);
    expect(await found(me, "walrus has:poll")).toEqual([poll]);
    expect(await found(me, "walrus has:link")).toEqual([embed, link]);
    expect(await found(me, "walrus has:embed")).toEqual([embed]);
    expect(await found(me, "walrus has:nonsense")).toEqual([]);
    expect(await found(me, "walrus from:me -has:link -has:media -has:poll")).toEqual([reply, beta, alpha]);
    expect(await found(me, "walrus is:reply")).toEqual([reply]);
    expect(await found(me, "walrus is:sensitive")).toEqual([beta]);
    expect(await found(me, "walrus -is:reply -is:sensitive from:me -has:link")).toEqual([poll, withMedia, alpha]);
    expect(await found(me, "walrus language:de")).toEqual([beta]);
    expect(await found(me, "walrus language:DE-at")).toEqual([beta]);
    expect(await found(me, "walrus -language:en")).toEqual([beta]);

    expect(await found(me, "walrus from:opsother")).toEqual([theirs]);
    expect(await found(me, "walrus from:@opsother@tern.test")).toEqual([theirs]);
    expect(await found(me, "walrus -from:me")).toEqual([theirs]);
    expect(await found(me, "walrus from:nobody")).toEqual([]);
    expect(await found(me, "walrus from:nobody@remote.example")).toEqual([]);
    expect((await found(me, "walrus from:me")).length).toBe(7);
    // account_id narrows like from:
    expect(await found(me, "walrus", `&account_id=${other.id}`)).toEqual([theirs]);
  });

  it("dates, min_id/max_id, limit and offset", async () => {
    const me = await makeUser();
    const a = await post(me, "narwhal one");
    const b = await post(me, "narwhal two");
    const c = await post(me, "narwhal three");
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    expect(await found(me, `narwhal during:${day(0)}`)).toEqual([c, b, a]);
    expect(await found(me, `narwhal before:${day(0)}`)).toEqual([]);
    expect(await found(me, `narwhal before:${day(1)}`)).toEqual([c, b, a]);
    expect(await found(me, `narwhal after:${day(-1)}`)).toEqual([c, b, a]);
    expect(await found(me, `narwhal after:${day(0)}`)).toEqual([]);
    expect(await found(me, `narwhal -during:${day(0)}`)).toEqual([]);
    // epoch milliseconds: strictly before / after that instant
    const bMs = snowflakeTime(b).getTime();
    expect(await found(me, `narwhal before:${bMs}`)).toEqual(snowflakeTime(a).getTime() < bMs ? [a] : []);
    expect(await found(me, `narwhal after:${bMs}`)).toEqual(snowflakeTime(c).getTime() > bMs ? [c] : []);
    // Far dates stay within int64 ids.
    expect(await found(me, "narwhal before:9999-12-31")).toEqual([c, b, a]);
    expect(await found(me, "narwhal after:9999-12-31")).toEqual([]);
    expect(await found(me, "narwhal -during:9999-12-31 after:0001-01-01")).toEqual([c, b, a]);
    expect(await found(me, `narwhal before:${"9".repeat(19)}`)).toEqual([c, b, a]);
    const bad = await search(me, "narwhal before:2024-13-01");
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: "Invalid date 2024-13-01" });

    expect(await found(me, "narwhal", `&max_id=${c}`)).toEqual([b, a]);
    expect(await found(me, "narwhal", `&min_id=${a}`)).toEqual([c, b]);
    expect(await found(me, "narwhal", `&min_id=${a}&max_id=${c}`)).toEqual([b]);
    expect(await found(me, "narwhal", "&limit=2")).toEqual([c, b]);
    expect(await found(me, "narwhal", "&limit=2&offset=2")).toEqual([a]);
    expect(await found(me, "from:me", "&limit=1")).toEqual([c]);
    expect(await found(me, "narwhal", "&min_id=9223372036854775807")).toEqual([]);
    expect(await found(me, "narwhal", "&max_id=9223372036854775807&min_id=0")).toEqual([c, b, a]);
    expect(await found(me, "narwhal", "&offset=20000")).toEqual([]);
  });

  it("a lone #tag or handle is not a status search unless statuses are asked for", async () => {
    const me = await makeUser();
    const s = await post(me, "#Otters are here");
    expect((await me.api.get(`/api/v2/search?q=${encodeURIComponent("#otters")}`)).body.statuses).toEqual([]);
    expect(await found(me, "#otters")).toEqual([s]);
    expect((await me.api.get(`/api/v2/search?q=${encodeURIComponent("otters from:me")}`)).body.statuses.map((x: any) => x.id)).toEqual([s]);
  });
});

describe("hostile queries", () => {
  it("answer 200 with results or nothing, never 500", async () => {
    const me = await makeUser();
    const s = await post(me, "harmless text with NEAR and OR inside");
    const hostile = [
      '"',
      '""',
      '"*"',
      "*",
      "NEAR(",
      "NEAR(a b, 2)",
      "^harmless",
      "harmless*",
      "text:harmless",
      "{text}: harmless",
      "harmless OR",
      "AND",
      "NOT harmless",
      "(((",
      ")",
      "-",
      "--",
      "+",
      '-"',
      "'",
      "\\",
      "col:x:y",
      "%_%",
      "harmless\u0000text",
      "🎉🎉",
      "rowid:1",
      "statuses_fts:x",
      "- - - -- ++ ",
      '"unterminated phrase',
      "from: has: is: language: in:",
      "'); DROP TABLE statuses;--",
      `${'"a" '.repeat(300)}`,
      "harmless ".repeat(200),
      "x".repeat(5000),
      "ü".repeat(5000),
      Array.from({ length: 200 }, (_, i) => `-from:u${i}@h${i}.example`).join(" "),
      Array.from({ length: 200 }, (_, i) => `-during:2020-01-${String((i % 28) + 1).padStart(2, "0")}`).join(" "),
    ];
    for (const q of hostile) {
      for (const extra of ["", "&type="]) {
        const res = await me.api.get(`/api/v2/search?q=${encodeURIComponent(q)}${extra || "&type=statuses"}`);
        expect(res.status, `${JSON.stringify(q.slice(0, 40))}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(200);
      }
    }
    expect(await found(me, "^harmless")).toEqual([s]);
    expect(await found(me, "NEAR(")).toEqual([s]);
    expect(await found(me, "text:harmless")).toEqual([]); // a phrase "text harmless": not in that order
    expect(await found(me, '"harmless text"')).toEqual([s]);
    expect((await me.api.get("/api/v1/instance")).status).toBe(200);
  });
});

describe("the index follows the statuses", () => {
  it("an edit re-indexes text, poll options and media descriptions in its batch; a delete removes the row", async () => {
    const me = await makeUser();
    const s = await post(me, "ocelot original", { poll: { options: ["spots", "stripes"], expires_in: 3600 } });
    expect(await found(me, "stripes")).toEqual([s]);
    const edited = await me.api.put(`/api/v1/statuses/${s}`, { status: "lynx rewritten", poll: { options: ["tufts", "ears"], expires_in: 3600 } });
    expect(edited.status).toBe(200);
    expect(await found(me, "ocelot")).toEqual([]);
    expect(await found(me, "stripes")).toEqual([]);
    expect(await found(me, "lynx tufts")).toEqual([s]);

    const m = await makeMedia(me.id);
    const withMedia = await post(me, "caracal", { media_ids: [m] });
    const res = await me.api.put(`/api/v1/statuses/${withMedia}`, {
      status: "caracal",
      media_ids: [m],
      media_attributes: [{ id: m, description: "desert cat" }],
    });
    expect(res.status).toBe(200);
    expect(await found(me, "desert")).toEqual([withMedia]);

    expect((await me.api.delete(`/api/v1/statuses/${s}`)).status).toBe(200);
    expect(await found(me, "lynx")).toEqual([]);
    expect(await sql("SELECT id FROM status_search WHERE id = CAST(? AS INTEGER)", pad(s))).toEqual([]);
    expect(await sql("INSERT INTO statuses_fts(statuses_fts) VALUES ('integrity-check')")).toEqual([]);
  });

  it("remote statuses: Create indexes the text without markup, Update re-indexes, Delete removes; domain blocks hide", async () => {
    const me = await makeUser();
    const bob = await remoteActor("bobfts", "fts.example", { docPatch: { indexable: true } });
    const carl = await remoteActor("carlfts", "fts.example");
    const n = note(bob, {
      content: '<p>Fjord &amp; <a href="https://fts.example/tags/glacier" class="mention hashtag">#<span>glacier</span></a> tours<br>lasting days</p>',
      attachment: [{ type: "Document", mediaType: "image/png", url: "https://fts.example/a.png", name: "iceberg photo" }],
      published: "2020-05-05T12:00:00Z",
    });
    expect((await deliver(bob, create(bob, n))).status).toBe(202);
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", n.id);
    const id = String(BigInt(row!.id));
    expect(await found(me, "glacier fjord")).toEqual([id]);
    expect(await found(me, "iceberg")).toEqual([id]);
    expect(await found(me, "span")).toEqual([]);
    expect(await found(me, "amp")).toEqual([]);
    expect(await found(me, "during:2020-05-05 fjord")).toEqual([id]);
    expect(await found(me, "before:2020-05-05 fjord")).toEqual([]);
    expect(await found(me, "after:2020-05-04 fjord has:image")).toEqual([id]);
    expect(await found(me, "fjord from:bobfts@fts.example")).toEqual([id]);
    // Not indexable: found only by someone who interacted with it.
    const c = note(carl, { content: "<p>fjord from carl</p>" });
    await deliver(carl, create(carl, c));
    const [crow] = await sql("SELECT id FROM statuses WHERE uri = ?", c.id);
    const cid = String(BigInt(crow!.id));
    expect(await found(me, "fjord")).toEqual([id]);
    expect((await me.api.post(`/api/v1/statuses/${cid}/favourite`)).status).toBe(200);
    expect(await found(me, "fjord")).toEqual([cid, id]);

    const updated = new Date(Date.now() + 1000).toISOString();
    await deliver(bob, { id: `${n.id}#updates/1`, type: "Update", actor: bob.uri, object: { ...n, content: "<p>volcano tours</p>", updated } });
    expect(await found(me, "glacier")).toEqual([]);
    expect(await found(me, "volcano")).toEqual([id]);

    expect((await me.api.post("/api/v1/domain_blocks", { domain: "fts.example" })).status).toBe(200);
    expect(await found(me, "fjord")).toEqual([]);
    expect((await me.api.delete("/api/v1/domain_blocks", { domain: "fts.example" })).status).toBe(200);
    expect(await found(me, "volcano")).toEqual([id]);

    await deliver(bob, { id: newId(bob), type: "Delete", actor: bob.uri, object: { id: n.id, type: "Tombstone" } });
    expect(await sql("SELECT id FROM statuses WHERE uri = ?", n.id)).toEqual([]);
    expect(await found(me, "volcano")).toEqual([]);
    expect(await sql("SELECT id FROM status_search WHERE id = CAST(? AS INTEGER)", row!.id)).toEqual([]);
  });

  it("the migration's backfill indexes statuses that were there before it (local text, remote HTML, polls, media)", async () => {
    const me = await makeUser("backfiller");
    const local = await post(me, "tapir & friends", { spoiler_text: "beware", poll: { options: ["mud", "river"], expires_in: 3600 } });
    const m = await makeMedia(me.id);
    await env.DB.prepare("UPDATE media_attachments SET description = 'striped calf' WHERE id = ?").bind(pad(m)).run();
    const withMedia = await post(me, "second", { media_ids: [m] });
    // A remote status as stored: sanitised HTML.
    await env.DB.prepare(
      "INSERT INTO statuses (id, uri, account_id, local, visibility, content, created_at, updated_at) VALUES ('00000000000000000777', 'https://x.example/s/1', ?, 0, 'public', ?, 0, 0)",
    )
      .bind(
        pad(me.id),
        '<p>okapi &lt;3 <a href="https://x.example/"><span class="invisible">https://</span><span>x.example</span></a></p><p>jungle<br>life</p>',
      )
      .run();
    await env.DB.prepare("DELETE FROM status_search").run();
    expect(await found(me, "tapir")).toEqual([]);

    const migration = env.TEST_MIGRATIONS.find((x) => /_status_search\.sql$/.test(x.name))!;
    const backfill = migration.queries.find((q) => q.includes("WITH RECURSIVE"))!;
    await env.DB.prepare(backfill).run();
    const texts = await sql("SELECT printf('%020d', id) AS id, text FROM status_search ORDER BY id");
    expect(texts).toEqual([
      { id: "00000000000000000777", text: "okapi <3 https://x.example\n\njungle\nlife" },
      { id: pad(local), text: "beware\n\ntapir & friends\n\nmud\nriver" },
      { id: pad(withMedia), text: "second\n\nstriped calf" },
    ]);
    // A restore rebuilds the index the same way (scripts/backup.mjs).
    await env.DB.prepare("INSERT INTO statuses_fts(statuses_fts) VALUES ('rebuild')").run();
    expect(await found(me, "tapir")).toEqual([local]);
    expect(await found(me, "calf")).toEqual([withMedia]);
    expect(await found(me, "okapi jungle")).toEqual(["777"]);
  });

  it("one statement finds the page: a status search costs the viewer, the search and the rendering batch", async () => {
    const me = await makeUser();
    for (let i = 0; i < 5; i++) await post(me, `capybara ${i}`);
    const small = await search(me, "capybara", "&limit=2");
    const big = await search(me, "capybara has:poll -is:reply from:me language:en -#x", "&limit=40");
    expect(ids(small)).toHaveLength(2);
    expect(ids(big)).toHaveLength(0);
    expect(roundTrips(small)).toBeLessThanOrEqual(3);
    expect(roundTrips(big)).toBeLessThanOrEqual(3);
    expect(roundTrips(await search(me, "capybara", "&limit=40"))).toBe(roundTrips(small));
  });

  it("the statement reads the library by index ranges and a capped FTS walk, and stays within D1's 100 bound parameters", async () => {
    const me = await makeUser();
    const o = { viewerId: me.id, limit: 40, offset: 0, following: false, accountId: "1", minId: "1", maxId: "9223372036854775807" };
    const many = (f: (i: number) => string) => Array.from({ length: 40 }, (_, i) => f(i)).join(" ");
    const queries = [
      "cats",
      many((i) => `-from:user${i}@host${i}.example`),
      many((i) => `-during:2020-01-${String((i % 28) + 1).padStart(2, "0")}`),
      many((i) => `word${i} -not${i} #tag${i} has:media -is:reply language:en`),
    ];
    for (const q of queries) {
      const { sql: text, params } = (db().all(statusSearchQuery(cfg(), q, o)!) as unknown as { getQuery(): { sql: string; params: unknown[] } }).getQuery();
      expect(params.length, q.slice(0, 30)).toBeLessThanOrEqual(100);
      await env.DB.prepare(text)
        .bind(...params)
        .all(); // runs
    }
    // The plan: the candidates are the viewer's library from their own index ranges, each probed in FTS5 by rowid,
    // and a capped walk of the public matches in rowid order; the page walks them newest first (no sort), each status
    // found by its primary key, every relation check an index lookup. No table is scanned (only FTS5 and the bounded
    // candidate lists), so the plan cannot walk the whole match.
    const plain = { ...o, accountId: null, minId: null, maxId: null };
    const { sql: text, params } = (
      db().all(statusSearchQuery(cfg(), "cats dogs", plain)!) as unknown as { getQuery(): { sql: string; params: unknown[] } }
    ).getQuery();
    const plan = (
      await env.DB.prepare(`EXPLAIN QUERY PLAN ${text}`)
        .bind(...params)
        .all<{ detail: string }>()
    ).results.map((r) => r.detail);
    expect(plan[0]).toMatch(/^SEARCH statuses USING INDEX sqlite_autoindex_statuses_1 \(id=\?\)/);
    expect(plan).toContainEqual(expect.stringMatching(/^SEARCH ps USING INDEX sqlite_autoindex_statuses_1 \(id=\?\)/));
    for (const range of ["statuses_account_id", "mentions_account", "favourites_pair", "bookmarks_pair", "poll_votes_account"])
      expect(plan).toContainEqual(expect.stringMatching(new RegExp(`^SEARCH \\w+ USING (COVERING )?INDEX ${range} \\(account_id=\\?\\)`)));
    const scans = plan.filter((l) => /^SCAN /.test(l));
    expect(scans.filter((l) => /^SCAN statuses_fts VIRTUAL TABLE INDEX/.test(l))).toHaveLength(2);
    expect(scans.filter((l) => !/^SCAN (statuses_fts VIRTUAL TABLE INDEX|lib$|pub$)/.test(l))).toEqual([]);
    expect(plan.join("\n")).not.toMatch(/TEMP B-TREE/);
  });
});
