// `filtered` on statuses and `hide`: filters of the viewer that apply where the status is shown (home and lists:
// home; notifications; public and tag timelines and search: public; context: thread; account statuses: account),
// matched on content, content warning, media descriptions and poll options; a boost carries its boosted status's
// result; D1 round trips of a page do not grow with the number of filters.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { polls } from "../../src/db/schema";
import { anon, db, makeUser, type Res, type TestUser } from "./helpers";
import { exec, insertStatus, nextId, pad } from "./feeds-fixtures";
import { captureJobs, makeMedia } from "./statuses-fixtures";

beforeEach(() => {
  captureJobs();
});

const roundTrips = (r: Res) => Number(/d1;[^,]*dur=(\d+)/.exec(r.headers.get("server-timing") ?? "")?.[1] ?? NaN);

async function seedHome(accountId: string, entries: { id: string; author: string; reblogOf?: string }[]) {
  const stmt = env.DB.prepare("INSERT INTO home_feed (account_id, status_id, author_id, reblog_of_id) VALUES (?1, ?2, ?3, ?4)");
  await env.DB.batch(entries.map((e) => stmt.bind(pad(accountId), pad(e.id), pad(e.author), e.reblogOf ? pad(e.reblogOf) : null)));
}

async function filter(u: TestUser, title: string, context: string[], action: string, keywords: (string | [string, boolean])[]) {
  const res = await u.api.post("/api/v2/filters", {
    title,
    context,
    filter_action: action,
    keywords_attributes: keywords.map((k) => (typeof k === "string" ? { keyword: k, whole_word: true } : { keyword: k[0], whole_word: k[1] })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; title: string; context: string[]; expires_at: string | null; filter_action: string };
}

const summary = (f: { id: string; title: string; context: string[]; expires_at: string | null; filter_action: string }) => ({
  id: f.id,
  title: f.title,
  context: f.context,
  expires_at: f.expires_at,
  filter_action: f.filter_action,
});

const byId = (list: any[]) => new Map<string, any>(list.map((s) => [s.id, s]));
const filterIds = (s: any) => (s.filtered as any[]).map((r) => r.filter.id);

async function notify(to: TestUser, from: { id: string }, type: string, statusId: string): Promise<string> {
  const id = nextId();
  await exec(
    "INSERT INTO notifications (id, account_id, from_account_id, type, status_id, activity_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    pad(id),
    pad(to.id),
    pad(from.id),
    type,
    pad(statusId),
    pad(nextId()),
    Date.now(),
  );
  return id;
}

describe("filtered on statuses", { timeout: 60000 }, () => {
  it("home lists the home-context filters that match, with keyword_matches as the text has it; a single status lists all", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const s1 = await insertStatus(a, { text: "Big SPOILER ahead" });
    const s2 = await insertStatus(a, { text: "nothing to see" });
    const s3 = await insertStatus(a, { text: "the end" });
    await exec("UPDATE statuses SET spoiler_text = 'Spoiler: the ending' WHERE id = ?", pad(s3));
    await seedHome(
      me.id,
      [s1, s2, s3].map((id) => ({ id, author: a.id })),
    );
    const home = await filter(me, "Spoilers", ["home", "thread"], "warn", ["spoiler"]);
    const pub = await filter(me, "Nothing", ["public"], "warn", ["nothing"]);

    const res = await me.api.get("/api/v1/timelines/home");
    const h = byId(res.body);
    expect(h.get(s1).filtered).toEqual([{ filter: summary(home), keyword_matches: ["SPOILER"], status_matches: null }]);
    expect(h.get(s2).filtered).toEqual([]);
    expect(h.get(s3).filtered).toEqual([{ filter: summary(home), keyword_matches: ["Spoiler"], status_matches: null }]);

    const p = byId((await me.api.get("/api/v1/timelines/public")).body);
    expect(p.get(s1).filtered).toEqual([]);
    expect(p.get(s2).filtered).toEqual([{ filter: summary(pub), keyword_matches: ["nothing"], status_matches: null }]);

    // No place, no context: every matching filter, as Mastodon's REST API reports them.
    expect(filterIds((await me.api.get(`/api/v1/statuses/${s2}`)).body)).toEqual([pub.id]);
    expect(filterIds((await me.api.get(`/api/v1/statuses/${s1}`)).body)).toEqual([home.id]);
    // Another user's filters never show; signed out, there is no `filtered` at all.
    const other = await makeUser();
    expect((await other.api.get(`/api/v1/statuses/${s1}`)).body.filtered).toEqual([]);
    expect((await anon.get(`/api/v1/statuses/${s1}`)).body).not.toHaveProperty("filtered");
  });

  it("matches whole words vs substrings, with non-ASCII letters and punctuation", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const texts = ["Un CAFÉ noir", "cafés partout", "see #tag.", "#tags here", "I ♥ C++!", "abc++ no", "猫が好き", "猫。"];
    const ids: string[] = [];
    for (const t of texts) ids.push(await insertStatus(a, { text: t }));
    await seedHome(
      me.id,
      ids.map((id) => ({ id, author: a.id })),
    );
    const fCafe = await filter(me, "cafe whole", ["home"], "warn", ["café"]);
    const fCaf = await filter(me, "caf substring", ["home"], "warn", [["caf", false]]);
    const fTag = await filter(me, "tag", ["home"], "warn", ["#tag"]);
    const fCpp = await filter(me, "cpp", ["home"], "warn", ["c++"]);
    const fCat = await filter(me, "cat", ["home"], "warn", ["猫"]);
    const h = byId((await me.api.get("/api/v1/timelines/home")).body);
    const hits = (f: { id: string }) => texts.filter((_, i) => filterIds(h.get(ids[i])).includes(f.id));
    expect(hits(fCafe)).toEqual(["Un CAFÉ noir"]);
    expect(hits(fCaf)).toEqual(["Un CAFÉ noir", "cafés partout"]);
    expect(hits(fTag)).toEqual(["see #tag."]);
    expect(hits(fCpp)).toEqual(["I ♥ C++!"]);
    expect(hits(fCat)).toEqual(["猫。"]);
    expect(h.get(ids[0]).filtered.find((r: any) => r.filter.id === fCafe.id).keyword_matches).toEqual(["CAFÉ"]);
  });

  it("matches media descriptions, poll options and remote HTML as plain text; expired filters do nothing", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const withMedia = await insertStatus(a, { text: "look" });
    const m = await makeMedia(a.id, { statusId: withMedia });
    await exec("UPDATE media_attachments SET description = 'A sunset over the sea' WHERE id = ?", pad(m));
    const withPoll = await insertStatus(a, { text: "vote" });
    const pollId = nextId();
    await db()
      .insert(polls)
      .values({
        id: pollId,
        statusId: withPoll,
        accountId: a.id,
        options: ["Tea", "Sunset cocktails"],
        votesPerOption: [0, 0],
        createdAt: Date.now(),
        updatedAt: Date.now(),
      });
    await exec("UPDATE statuses SET poll_id = ? WHERE id = ?", pad(pollId), pad(withPoll));
    const remote = await insertStatus(a, { local: false });
    await exec("UPDATE statuses SET content = '<p>Fish &amp; <a href=\"x\">chips</a></p>' WHERE id = ?", pad(remote));
    await seedHome(
      me.id,
      [withMedia, withPoll, remote].map((id) => ({ id, author: a.id })),
    );
    const sun = await filter(me, "sun", ["home"], "warn", ["sunset"]);
    const fish = await filter(me, "fish", ["home"], "warn", ["fish & chips"]);
    const gone = await filter(me, "expired", ["home"], "hide", [["o", false]]);
    await exec("UPDATE custom_filters SET expires_at = ? WHERE id = ?", Date.now() - 1000, pad(gone.id));
    const h = byId((await me.api.get("/api/v1/timelines/home")).body);
    expect(h.get(withMedia).filtered).toEqual([{ filter: summary(sun), keyword_matches: ["sunset"], status_matches: null }]);
    expect(h.get(withPoll).filtered).toEqual([{ filter: summary(sun), keyword_matches: ["Sunset"], status_matches: null }]);
    expect(h.get(remote).filtered).toEqual([{ filter: summary(fish), keyword_matches: ["Fish & chips"], status_matches: null }]);
  });

  it("a boost carries the boosted status's result on the boost and inside it; status filters report status_matches", async () => {
    const [me, a, b] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const orig = await insertStatus(a, { text: "cats are great" });
    const boost = await insertStatus(b, { reblogOf: orig });
    const plain = await insertStatus(a, { text: "dogs" });
    await seedHome(me.id, [
      { id: boost, author: b.id, reblogOf: orig },
      { id: plain, author: a.id },
    ]);
    const cats = await filter(me, "cats", ["home"], "warn", ["cats"]);
    const byStatus = (await me.api.post("/api/v2/filters", { title: "these", context: ["home"] })).body;
    await me.api.post(`/api/v2/filters/${byStatus.id}/statuses`, { status_id: orig });
    await me.api.post(`/api/v2/filters/${byStatus.id}/statuses`, { status_id: plain });
    const h = byId((await me.api.get("/api/v1/timelines/home")).body);
    const expected = [
      { filter: summary(cats), keyword_matches: ["cats"], status_matches: null },
      { filter: summary(byStatus), keyword_matches: null, status_matches: [orig] },
    ];
    expect(h.get(boost).filtered).toEqual(expected);
    expect(h.get(boost).reblog.filtered).toEqual(expected);
    expect(h.get(plain).filtered).toEqual([{ filter: summary(byStatus), keyword_matches: null, status_matches: [plain] }]);
  });
});

describe("hide", { timeout: 60000 }, () => {
  it("drops matches from home, public and account statuses, but not the viewer's own nor a single status", async () => {
    const [me, a, b] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const p = await insertStatus(a, { text: "politics today" });
    const q = await insertStatus(a, { text: "cats" });
    const mine = await insertStatus(me, { text: "my politics" });
    const r1 = await insertStatus(b, { reblogOf: p });
    const r2 = await insertStatus(b, { reblogOf: q });
    await seedHome(me.id, [
      { id: p, author: a.id },
      { id: q, author: a.id },
      { id: mine, author: me.id },
      { id: r1, author: b.id, reblogOf: p },
      { id: r2, author: b.id, reblogOf: q },
    ]);
    const hide = await filter(me, "no politics", ["home", "public", "account"], "hide", ["politics"]);
    const home = (await me.api.get("/api/v1/timelines/home")).body;
    expect(home.map((s: any) => s.id)).toEqual([r2, mine, q]);
    expect(byId(home).get(mine).filtered).toEqual([{ filter: summary(hide), keyword_matches: ["politics"], status_matches: null }]);
    const pub = (await me.api.get("/api/v1/timelines/public")).body.map((s: any) => s.id);
    expect(pub).toContain(q);
    expect(pub).not.toContain(p);
    expect((await me.api.get(`/api/v1/accounts/${a.id}/statuses`)).body.map((s: any) => s.id)).toEqual([q]);
    expect((await me.api.get(`/api/v1/accounts/${me.id}/statuses`)).body.map((s: any) => s.id)).toEqual([mine]);
    const single = await me.api.get(`/api/v1/statuses/${p}`);
    expect(single.status).toBe(200);
    expect(filterIds(single.body)).toEqual([hide.id]);
    // Another context: shown, and `filtered` does not list the filter there.
    await exec("UPDATE custom_filters SET context = '[\"notifications\"]' WHERE id = ?", pad(hide.id));
    const again = byId((await me.api.get("/api/v1/timelines/home")).body);
    expect(again.get(p).filtered).toEqual([]);
    expect(again.has(r1)).toBe(true);
  });

  it("drops notifications whose status a notifications-context hide filter matches", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const spam = await insertStatus(a, { text: "buy SPAM now", mentions: [me.id] });
    const hello = await insertStatus(a, { text: "hello there", mentions: [me.id] });
    const nSpam = await notify(me, a, "mention", spam);
    const nHello = await notify(me, a, "mention", hello);
    await filter(me, "spam", ["notifications"], "hide", ["spam"]);
    const warn = await filter(me, "hi", ["notifications"], "warn", ["hello"]);
    await filter(me, "hi at home", ["home"], "warn", ["hello"]);
    const res = await me.api.get("/api/v1/notifications");
    expect(res.body.map((n: any) => n.id)).toEqual([nHello]);
    expect(res.body[0].status.filtered).toEqual([{ filter: summary(warn), keyword_matches: ["hello"], status_matches: null }]);
    expect((await me.api.get(`/api/v1/notifications/${nSpam}`)).status).toBe(404);
  });

  it("thread: drops hidden descendants (their replies stay) and keeps ancestors, reporting the match", async () => {
    const [me, a, b] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const root = await insertStatus(a, { text: "question" });
    const reply1 = await insertStatus(b, { text: "spoiler answer", inReplyTo: { id: root, accountId: a.id } });
    const reply2 = await insertStatus(a, { text: "thanks", inReplyTo: { id: reply1, accountId: b.id } });
    const hide = await filter(me, "spoilers", ["thread"], "hide", ["spoiler"]);
    const ctx = (await me.api.get(`/api/v1/statuses/${root}/context`)).body;
    expect(ctx.descendants.map((s: any) => s.id)).toEqual([reply2]);
    const up = (await me.api.get(`/api/v1/statuses/${reply2}/context`)).body;
    expect(up.ancestors.map((s: any) => s.id)).toEqual([root, reply1]);
    expect(up.ancestors[1].filtered).toEqual([{ filter: summary(hide), keyword_matches: ["spoiler"], status_matches: null }]);
    expect(up.ancestors[0].filtered).toEqual([]);
  });

  it("search results use the public context", async () => {
    const [me, a, other] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    // Status search covers what the searcher was mentioned in (among others).
    const s = await insertStatus(a, { text: "zorglub findme", mentions: [me.id, other.id] });
    const kept = await insertStatus(a, { text: "zorglub keepme", mentions: [me.id, other.id] });
    await filter(me, "x", ["public"], "hide", ["findme"]);
    const warn = await filter(me, "y", ["public"], "warn", ["keepme"]);
    const res = await me.api.get("/api/v2/search?q=zorglub&type=statuses");
    expect(res.status).toBe(200);
    expect(res.body.statuses.map((x: any) => x.id)).toEqual([kept]);
    expect(filterIds(res.body.statuses[0])).toEqual([warn.id]);
    // the same search without filters finds both
    expect((await other.api.get("/api/v2/search?q=zorglub&type=statuses")).body.statuses.map((x: any) => x.id).sort()).toEqual([s, kept].sort());
  });
});

describe("cost", { timeout: 60000 }, () => {
  it("GET home takes the same D1 round trips with 20 active filters as with none", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await insertStatus(a, { text: i % 7 ? `word${i} plain` : `word${i} banned` }));
    await seedHome(
      me.id,
      ids.map((id) => ({ id, author: a.id })),
    );
    const before = await me.api.get("/api/v1/timelines/home?limit=40");
    expect(before.body).toHaveLength(40);
    const n = roundTrips(before);
    expect(n).toBeGreaterThan(0);
    for (let i = 0; i < 19; i++) await filter(me, `f${i}`, ["home", "public"], "warn", [`word${i}`, [`x${i}y`, false], `z${i}`]);
    await filter(me, "banned", ["home"], "hide", ["banned"]);
    const after = await me.api.get("/api/v1/timelines/home?limit=40");
    expect(roundTrips(after)).toBe(n);
    expect(after.body).toHaveLength(40 - ids.filter((_, i) => i % 7 === 0).length);
    const w3 = after.body.find((s: any) => s.id === ids[3]);
    expect(w3.filtered.map((r: any) => r.filter.title)).toEqual(["f3"]);
  });
});
