import { env, SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobMessage } from "../../src/effects/types";
import { anon, api, makeUser, ORIGIN } from "./helpers";
import { follow, makeMedia, captureJobs } from "./statuses-fixtures";
import { insertStatus } from "./feeds-fixtures";

let jobs: JobMessage[] = [];
beforeEach(() => {
  jobs = captureJobs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const FAMILY = "👨‍👩‍👧‍👦";

describe("POST /api/v1/statuses", () => {
  it("puts the author's own post in their home timeline at once, before any fan-out has run", async () => {
    const u = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: "first light" });
    expect(res.status).toBe(200);
    // The JOBS queue is only recorded here: nothing has fanned out.
    expect(jobs.some((j) => j.type === "fanout" && j.statusId === res.body.id)).toBe(true);
    const home = await u.api.get("/api/v1/timelines/home");
    expect(home.status).toBe(200);
    expect(home.body.map((x: { id: string }) => x.id)).toEqual([res.body.id]);
  });

  it("posts a status and returns the Mastodon entity in two D1 round trips", async () => {
    const u = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: "Hello #Tern world https://example.com/x", visibility: "unlisted", language: "en" });
    expect(res.status).toBe(200);
    const s = res.body;
    expect(s.id).toMatch(/^\d+$/);
    expect(s.content).toContain("<p>Hello");
    expect(s.content).toContain('href="http://tern.test/tags/tern"');
    expect(s.visibility).toBe("unlisted");
    expect(s.language).toBe("en");
    expect(s.account.id).toBe(u.id);
    expect(s.account.statuses_count).toBe(1);
    expect(s.tags).toEqual([{ name: "tern", url: `${ORIGIN}/tags/tern` }]);
    expect(s.uri).toBe(`${ORIGIN}/users/${u.username}/statuses/${s.id}`);
    expect(s.url).toBe(`${ORIGIN}/@${u.username}/${s.id}`);
    expect(s.application.name).toBe("Test App");
    expect(s.favourited).toBe(false);
    expect(s.reblog).toBeNull();
    expect(res.headers.get("server-timing")).toMatch(/dur=2$/);
    // The link's preview card is fetched afterwards (preview-cards.test.ts).
    expect(jobs.filter((j) => j.type !== "federate")).toEqual([
      { type: "fanout", statusId: s.id },
      { type: "fetch_card", statusId: s.id },
    ]);
    // the rendered-from-memory response matches a fresh read
    const again = await u.api.get(`/api/v1/statuses/${s.id}`);
    expect(again.body).toEqual(s);
  });

  it("ids above 2^53 round-trip exactly", async () => {
    const u = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: "big id" });
    expect(BigInt(res.body.id) > 2n ** 53n).toBe(true);
    const got = await anon.get(`/api/v1/statuses/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(res.body.id);
  });

  it("uses the user's default visibility and accepts form bodies", async () => {
    const u = await makeUser();
    await env.DB.prepare("UPDATE users SET settings = ? WHERE id = ?")
      .bind(JSON.stringify({ "posting:default:visibility": "private" }), u.userId.padStart(20, "0"))
      .run();
    const res = await u.api.post("/api/v1/statuses", { status: "form post", sensitive: "false", spoiler_text: "cw" }, "form");
    expect(res.status).toBe(200);
    expect(res.body.visibility).toBe("private");
    expect(res.body.spoiler_text).toBe("cw");
    expect(res.body.sensitive).toBe(true);
  });

  it("B1/B2: 401 without a token, 403 with a read or write:favourites token", async () => {
    expect((await anon.post("/api/v1/statuses", { status: "x" })).status).toBe(401);
    const r = await makeUser(undefined, { scopes: "read" });
    const res = await r.api.post("/api/v1/statuses", { status: "x" });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("This action is outside the authorized scopes");
    const f = await makeUser(undefined, { scopes: "write:favourites" });
    expect((await f.api.post("/api/v1/statuses", { status: "x" })).status).toBe(403);
    const w = await makeUser(undefined, { scopes: "write:statuses" });
    expect((await w.api.post("/api/v1/statuses", { status: "x" })).status).toBe(200);
  });

  it("A1/A2: 501 characters is refused, 500 family emoji are 500 characters", async () => {
    const u = await makeUser();
    const long = await u.api.post("/api/v1/statuses", { status: "a".repeat(501) });
    expect(long.status).toBe(422);
    expect(long.body.error).toBe("Validation failed: Text character limit of 500 exceeded");
    const cw = await u.api.post("/api/v1/statuses", { status: "a".repeat(400), spoiler_text: "b".repeat(101) });
    expect(cw.status).toBe(422);
    const fam = await u.api.post("/api/v1/statuses", { status: FAMILY.repeat(500) });
    expect(fam.status).toBe(200);
    expect((await u.api.post("/api/v1/statuses", { status: FAMILY.repeat(501) })).status).toBe(422);
    // URLs count 23
    const url = `https://example.com/${"x".repeat(200)}`;
    expect((await u.api.post("/api/v1/statuses", { status: `${url} ${"a".repeat(470)}` })).status).toBe(200);
    // a huge body is refused without being scanned
    expect((await u.api.post("/api/v1/statuses", { status: "@".repeat(100_000) })).status).toBe(422);
  });

  it("blank text needs media or a poll", async () => {
    const u = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: "   " });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("Validation failed: Text can't be blank");
    const m = await makeMedia(u.id);
    const ok = await u.api.post("/api/v1/statuses", { media_ids: [m] });
    expect(ok.status).toBe(200);
    expect(ok.body.media_attachments.map((x: any) => x.id)).toEqual([m]);
  });

  it("A13: arrays or objects where strings are expected are 422", async () => {
    const u = await makeUser();
    const form = await u.api.post(
      "/api/v1/statuses",
      new URLSearchParams([
        ["status[]", "a"],
        ["status[]", "b"],
      ]),
      "form",
    );
    expect(form.status).toBe(422);
    expect(
      (
        await u.api.post(
          "/api/v1/statuses",
          new URLSearchParams([
            ["status", "a"],
            ["visibility[]", "public"],
          ]),
          "form",
        )
      ).status,
    ).toBe(422);
    expect((await u.api.post("/api/v1/statuses", { status: { $gt: "" } })).status).toBe(422);
    expect((await u.api.post("/api/v1/statuses", { status: "x", visibility: "everyone" })).status).toBe(422);
  });

  it("A14/A15/A16: NUL stripped, lone surrogates replaced, bidi/zalgo/SQL stored verbatim and escaped", async () => {
    const u = await makeUser();
    const nul = await u.api.post("/api/v1/statuses", { status: "a\u0000b \uD800 <script>alert(1)</script>" });
    expect(nul.status).toBe(200);
    expect(nul.body.content).toBe("<p>ab \uFFFD &lt;script&gt;alert(1)&lt;/script&gt;</p>");
    const zalgo = `Z${"\u0301".repeat(10_000)}`;
    const tricky = `\u202Etxt.exe \u200D${zalgo}`;
    const z = await u.api.post("/api/v1/statuses", { status: tricky });
    expect(z.status).toBe(200);
    expect(z.body.content).toBe(`<p>${tricky}</p>`);
    const sqlText = "'); DROP TABLE statuses;--";
    const s = await u.api.post("/api/v1/statuses", { status: sqlText });
    expect(s.status).toBe(200);
    expect(s.body.content).toBe("<p>&#39;); DROP TABLE statuses;--</p>");
    const src = await u.api.get(`/api/v1/statuses/${s.body.id}/source`);
    expect(src.body).toEqual({ id: s.body.id, text: sqlText, spoiler_text: "" });
  });

  it("A3/A4/F6: media limits and ownership", async () => {
    const u = await makeUser();
    const other = await makeUser();
    const five = await Promise.all([1, 2, 3, 4, 5].map(() => makeMedia(u.id)));
    expect((await u.api.post("/api/v1/statuses", { status: "x", media_ids: five })).status).toBe(422);
    const theirs = await makeMedia(other.id);
    const r1 = await u.api.post("/api/v1/statuses", { status: "x", media_ids: [theirs] });
    expect(r1.status).toBe(422);
    const processing = await makeMedia(u.id, { processing: 1 });
    expect((await u.api.post("/api/v1/statuses", { status: "x", media_ids: [processing] })).status).toBe(422);
    const ok = await u.api.post("/api/v1/statuses", { status: "x", media_ids: five.slice(0, 4) });
    expect(ok.status).toBe(200);
    expect(ok.body.media_attachments.map((m: any) => m.id)).toEqual(five.slice(0, 4));
    // already attached
    expect((await u.api.post("/api/v1/statuses", { status: "again", media_ids: [five[0]] })).status).toBe(422);
    const row = await env.DB.prepare("SELECT status_id FROM media_attachments WHERE id = ?").bind(theirs.padStart(20, "0")).first<any>();
    expect(row.status_id).toBeNull();
  });

  it("A5: poll limits, poll with media", async () => {
    const u = await makeUser();
    const post = (poll: unknown, extra: Record<string, unknown> = {}) => u.api.post("/api/v1/statuses", { status: "poll", poll, ...extra });
    expect((await post({ options: ["a", "b", "c", "d", "e"], expires_in: 3600 })).status).toBe(422);
    expect((await post({ options: ["a", "x".repeat(51)], expires_in: 3600 })).status).toBe(422);
    expect((await post({ options: ["a", "b"], expires_in: 10 })).status).toBe(422);
    expect((await post({ options: ["a", "b"], expires_in: 2629747 })).status).toBe(422);
    expect((await post({ options: ["a"], expires_in: 3600 })).status).toBe(422);
    const m = await makeMedia(u.id);
    expect((await post({ options: ["a", "b"], expires_in: 3600 }, { media_ids: [m] })).status).toBe(422);
    const ok = await post({ options: ["a", "b"], expires_in: "3600", multiple: "true" });
    expect(ok.status).toBe(200);
    expect(ok.body.poll.options).toEqual([
      { title: "a", votes_count: 0 },
      { title: "b", votes_count: 0 },
    ]);
    expect(ok.body.poll.multiple).toBe(true);
    const form = await u.api.post(
      "/api/v1/statuses",
      new URLSearchParams([
        ["status", "form poll"],
        ["poll[options][]", "yes"],
        ["poll[options][]", "no"],
        ["poll[expires_in]", "300"],
      ]),
      "form",
    );
    expect(form.status).toBe(200);
    expect(form.body.poll.options.map((o: any) => o.title)).toEqual(["yes", "no"]);
  });

  it("A19: hashtags are normalised, capped and deduplicated", async () => {
    const u = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: "#ａｂｃ #abc #ABC #Café" });
    expect(res.status).toBe(200);
    expect(res.body.tags.map((t: any) => t.name).sort()).toEqual(["abc", "cafe"]);
    const many = Array.from({ length: 60 }, (_, i) => `#t${i}`).join(" ");
    const r2 = await u.api.post("/api/v1/statuses", { status: many });
    expect(r2.status).toBe(200);
    expect(r2.body.tags.length).toBe(20);
    const long = await u.api.post("/api/v1/statuses", { status: `#${"a".repeat(300)}` });
    expect(long.status).toBe(200);
    expect(long.body.tags).toEqual([]);
    const n = await env.DB.prepare("SELECT count(*) AS n FROM tags WHERE name = 'abc'").first<any>();
    expect(n.n).toBe(1);
  });

  it("mentions resolve local accounts, notify them, and leave unknown names as text", async () => {
    const u = await makeUser();
    const bob = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: `hi @${bob.username} and @${bob.username}@tern.test and @nobody and @x@remote.example` });
    expect(res.status).toBe(200);
    expect(res.body.mentions).toEqual([{ id: bob.id, username: bob.username, acct: bob.username, url: `${ORIGIN}/@${bob.username}` }]);
    expect(res.body.content).toContain(`<a href="${ORIGIN}/@${bob.username}" class="u-url mention">@<span>${bob.username}</span></a>`);
    expect(res.body.content).toContain("@nobody");
    const n = await bob.api.get("/api/v1/notifications");
    if (n.status === 200 && Array.isArray(n.body)) expect(n.body.some((x: any) => x.type === "mention")).toBe(true);
    const row = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE type = 'mention' AND account_id = ?")
      .bind(bob.id.padStart(20, "0"))
      .first<any>();
    expect(row.n).toBe(1);
  });

  it("allowed_mentions refuses unexpected mentions with the accounts", async () => {
    const u = await makeUser();
    const bob = await makeUser();
    const carol = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: `@${bob.username} @${carol.username}`, allowed_mentions: [bob.id] });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/^Validation failed/);
    expect(res.body.unexpected_accounts.map((a: any) => a.id)).toEqual([carol.id]);
    const ok = await u.api.post("/api/v1/statuses", { status: `@${bob.username}`, allowed_mentions: [bob.id] });
    expect(ok.status).toBe(200);
  });

  it("direct statuses are visible only to mentioned accounts", async () => {
    const u = await makeUser();
    const bob = await makeUser();
    const eve = await makeUser();
    const res = await u.api.post("/api/v1/statuses", { status: `@${bob.username} secret`, visibility: "direct" });
    expect(res.status).toBe(200);
    expect((await bob.api.get(`/api/v1/statuses/${res.body.id}`)).status).toBe(200);
    expect((await eve.api.get(`/api/v1/statuses/${res.body.id}`)).status).toBe(404);
    expect((await anon.get(`/api/v1/statuses/${res.body.id}`)).status).toBe(404);
  });

  it("replies: inherit the conversation, set in_reply_to_*, B16 404 for an invisible parent", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const root = await a.api.post("/api/v1/statuses", { status: "root" });
    const reply = await b.api.post("/api/v1/statuses", { status: `@${a.username} reply`, in_reply_to_id: root.body.id });
    expect(reply.status).toBe(200);
    expect(reply.body.in_reply_to_id).toBe(root.body.id);
    expect(reply.body.in_reply_to_account_id).toBe(a.id);
    const rows = await env.DB.prepare("SELECT conversation_id FROM statuses WHERE id IN (?, ?)")
      .bind(root.body.id.padStart(20, "0"), reply.body.id.padStart(20, "0"))
      .all<any>();
    expect(rows.results[0].conversation_id).toBeTruthy();
    expect(rows.results[0].conversation_id).toBe(rows.results[1].conversation_id);
    expect((await anon.get(`/api/v1/statuses/${root.body.id}`)).body.replies_count).toBe(1);

    const priv = await a.api.post("/api/v1/statuses", { status: "followers only", visibility: "private" });
    const r2 = await b.api.post("/api/v1/statuses", { status: "sneaky", in_reply_to_id: priv.body.id });
    expect(r2.status).toBe(404);
    expect(r2.body).toEqual({ error: "Record not found" });
    expect((await b.api.post("/api/v1/statuses", { status: "x", in_reply_to_id: "99999999999999999999999" })).status).toBe(404);
  });

  it("A23: scheduled_at is validated (scheduled-statuses.test.ts covers the rest)", async () => {
    const u = await makeUser();
    const bad = await u.api.post("/api/v1/statuses", { status: "x", scheduled_at: "2024-13-45" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/^Validation failed: Scheduled at/);
    const soon = await u.api.post("/api/v1/statuses", { status: "x", scheduled_at: new Date(Date.now() + 60_000).toISOString() });
    expect(soon.status).toBe(422);
    expect(soon.body.error).toMatch(/^Validation failed: Scheduled at/);
    const later = await u.api.post("/api/v1/statuses", { status: "x", scheduled_at: new Date(Date.now() + 3600_000).toISOString() });
    expect(later.status).toBe(200);
    expect(later.body.params.text).toBe("x");
  });

  it("A24: the same Idempotency-Key in parallel makes one status", async () => {
    const u = await makeUser();
    const send = () =>
      SELF.fetch(`${ORIGIN}/api/v1/statuses`, {
        method: "POST",
        headers: { authorization: `Bearer ${u.token}`, "content-type": "application/json", "idempotency-key": "key-1" },
        body: JSON.stringify({ status: "once" }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const [x, y] = await Promise.all([send(), send()]);
    expect([x.status, y.status]).toEqual([200, 200]);
    expect(x.body.id).toBe(y.body.id);
    const z = await send();
    expect(z.body.id).toBe(x.body.id);
    expect(jobs.filter((j) => j.type === "fanout")).toEqual([{ type: "fanout", statusId: x.body.id }]);
    const n = await env.DB.prepare("SELECT count(*) AS n FROM statuses WHERE account_id = ?").bind(u.id.padStart(20, "0")).first<any>();
    expect(n.n).toBe(1);
  });
});

describe("GET /api/v1/statuses", () => {
  it("A8: malformed ids are 404", async () => {
    for (const id of ["abc", "1e3", "0x10", "99999999999999999999999", "-1"]) {
      const res = await anon.get(`/api/v1/statuses/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
  });

  it("A10: a private status is 404 for strangers, visible to followers and mentioned", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const c = await makeUser();
    const priv = await a.api.post("/api/v1/statuses", { status: `followers only @${c.username}`, visibility: "private" });
    expect((await b.api.get(`/api/v1/statuses/${priv.body.id}`)).status).toBe(404);
    expect((await anon.get(`/api/v1/statuses/${priv.body.id}`)).status).toBe(404);
    expect((await c.api.get(`/api/v1/statuses/${priv.body.id}`)).status).toBe(200);
    await follow(b.id, a.id);
    expect((await b.api.get(`/api/v1/statuses/${priv.body.id}`)).status).toBe(200);
  });

  it("a token without read:statuses is refused on public reads; a bad token is 401", async () => {
    const a = await makeUser();
    const s = await a.api.post("/api/v1/statuses", { status: "x" });
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get(`/api/v1/statuses/${s.body.id}`)).status).toBe(403);
    expect((await api("nope").get(`/api/v1/statuses/${s.body.id}`)).status).toBe(401);
  });

  it("GET /statuses?id[] returns visible ones in order, skipping others, capped at 40", async () => {
    const a = await makeUser();
    const s1 = await a.api.post("/api/v1/statuses", { status: "one" });
    const s2 = await a.api.post("/api/v1/statuses", { status: "two", visibility: "private" });
    const s3 = await a.api.post("/api/v1/statuses", { status: "three" });
    const q = [s3.body.id, s2.body.id, "123", "abc", s1.body.id].map((i) => `id[]=${i}`).join("&");
    const res = await anon.get(`/api/v1/statuses?${q}`);
    expect(res.status).toBe(200);
    expect(res.body.map((s: any) => s.id)).toEqual([s3.body.id, s1.body.id]);
    const many = Array.from({ length: 500 }, () => `id[]=${s1.body.id}`).join("&");
    expect((await anon.get(`/api/v1/statuses?${many}`)).status).toBe(200);
  });
});

describe("DELETE /api/v1/statuses/:id", () => {
  it("deletes own status, returns the source for redraft, detaches media", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const m = await makeMedia(a.id);
    const s = await a.api.post("/api/v1/statuses", { status: "bye #gone", media_ids: [m], spoiler_text: "cw" });
    await b.api.post(`/api/v1/statuses/${s.body.id}/favourite`);
    await b.api.post(`/api/v1/statuses/${s.body.id}/reblog`);
    await b.api.post(`/api/v1/statuses/${s.body.id}/bookmark`);
    expect((await anon.delete(`/api/v1/statuses/${s.body.id}`)).status).toBe(401);
    expect((await b.api.delete(`/api/v1/statuses/${s.body.id}`)).status).toBe(404);
    jobs.length = 0;
    const res = await a.api.delete(`/api/v1/statuses/${s.body.id}`);
    expect(res.status).toBe(200);
    expect(jobs[0]).toEqual({ type: "unfanout", statusId: s.body.id, accountId: a.id, reblogOfId: null });
    // The status and its boost leave every feed; open streams hear of it from one more effect (tested below).
    expect(jobs.filter((j) => j.type !== "federate" && j.type !== "stream_delete").length).toBe(2);
    const streamed = jobs.filter((j) => j.type === "stream_delete");
    expect(streamed).toEqual([
      {
        type: "stream_delete",
        statusId: s.body.id,
        info: { visibility: "public", local: true, reblog: false, tags: ["gone"] },
        home: [{ accountId: a.id, statusId: s.body.id }],
        lists: [],
      },
    ]);
    expect(jobs.filter((j) => j.type === "unfanout")[1]).toMatchObject({ type: "unfanout", accountId: b.id, reblogOfId: s.body.id });
    expect(res.body.id).toBe(s.body.id);
    expect(res.body.text).toBe("bye #gone");
    expect(res.body.spoiler_text).toBe("cw");
    expect(res.body.media_attachments[0].id).toBe(m);
    expect((await anon.get(`/api/v1/statuses/${s.body.id}`)).status).toBe(404);
    for (const table of ["favourites", "bookmarks", "status_tags", "notifications"]) {
      const r = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE status_id = ?`).bind(s.body.id.padStart(20, "0")).first<any>();
      expect(r.n, table).toBe(0);
    }
    const reblogs = await env.DB.prepare("SELECT count(*) AS n FROM statuses WHERE reblog_of_id = ?").bind(s.body.id.padStart(20, "0")).first<any>();
    expect(reblogs.n).toBe(0);
    const acct = await anon.get(`/api/v1/statuses?id[]=${s.body.id}`);
    expect(acct.body).toEqual([]);
    // redraft reuses the media
    const redraft = await a.api.post("/api/v1/statuses", { status: res.body.text, media_ids: [m] });
    expect(redraft.status).toBe(200);
    expect((await a.api.delete(`/api/v1/statuses/${s.body.id}`)).status).toBe(404);
  });
});

describe("PUT /api/v1/statuses/:id and history/source", () => {
  it("edits, keeps the original in history, and notifies rebloggers", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const s = await a.api.post("/api/v1/statuses", { status: "first version" });
    const h0 = await anon.get(`/api/v1/statuses/${s.body.id}/history`);
    expect(h0.status).toBe(200);
    expect(h0.body.length).toBe(1);
    expect(h0.body[0].content).toBe("<p>first version</p>");
    expect(h0.body[0].account.id).toBe(a.id);
    const rb = await b.api.post(`/api/v1/statuses/${s.body.id}/reblog`);
    expect(rb.status, JSON.stringify(rb.body)).toBe(200);
    expect((await b.api.put(`/api/v1/statuses/${s.body.id}`, { status: "hack" })).status).toBe(404);
    const m = await makeMedia(a.id);
    const e = await a.api.put(`/api/v1/statuses/${s.body.id}`, {
      status: "second version #edited",
      spoiler_text: "cw",
      media_ids: [m],
      media_attributes: [{ id: m, description: "alt text", focus: "0.5,-0.5" }],
    });
    expect(e.status).toBe(200);
    expect(e.body.content).toContain("second version");
    expect(e.body.edited_at).toBeTruthy();
    expect(e.body.spoiler_text).toBe("cw");
    expect(e.body.tags.map((t: any) => t.name)).toEqual(["edited"]);
    expect(e.body.media_attachments[0].description).toBe("alt text");
    expect(e.body.media_attachments[0].meta.focus).toEqual({ x: 0.5, y: -0.5 });
    const h = await anon.get(`/api/v1/statuses/${s.body.id}/history`);
    expect(h.body.length).toBe(2);
    expect(h.body[0].content).toBe("<p>first version</p>");
    expect(h.body[1].content).toContain("second version");
    expect(h.body[1].media_attachments.length).toBe(1);
    const note = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE type = 'update' AND account_id = ?")
      .bind(b.id.padStart(20, "0"))
      .first<any>();
    expect(note.n).toBe(1);
    const src = await a.api.get(`/api/v1/statuses/${s.body.id}/source`);
    expect(src.body).toEqual({ id: s.body.id, text: "second version #edited", spoiler_text: "cw" });
    expect((await b.api.get(`/api/v1/statuses/${s.body.id}/source`)).status).toBe(404);
    expect((await anon.get(`/api/v1/statuses/${s.body.id}/source`)).status).toBe(401);
    expect((await a.api.put(`/api/v1/statuses/${s.body.id}`, { status: "a".repeat(501) })).status).toBe(422);
  });

  it("editing poll options resets the votes", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const s = await a.api.post("/api/v1/statuses", { status: "poll", poll: { options: ["x", "y"], expires_in: 3600 } });
    const v = await b.api.post(`/api/v1/polls/${s.body.poll.id}/votes`, { choices: [0] });
    expect(v.status).toBe(200);
    const same = await a.api.put(`/api/v1/statuses/${s.body.id}`, { status: "poll edited", poll: { options: ["x", "y"], expires_in: 3600 } });
    expect(same.body.poll.votes_count).toBe(1);
    const changed = await a.api.put(`/api/v1/statuses/${s.body.id}`, { status: "poll edited", poll: { options: ["x", "z"], expires_in: 3600 } });
    expect(changed.status).toBe(200);
    expect(changed.body.poll.votes_count).toBe(0);
    expect(changed.body.poll.options.map((o: any) => o.title)).toEqual(["x", "z"]);
    const h = await anon.get(`/api/v1/statuses/${s.body.id}/history`);
    expect(h.body.length).toBe(3);
    expect(h.body[0].poll).toEqual({ options: [{ title: "x" }, { title: "y" }] });
  });

  it("history of an invisible status is 404", async () => {
    const a = await makeUser();
    const s = await a.api.post("/api/v1/statuses", { status: "private", visibility: "private" });
    expect((await anon.get(`/api/v1/statuses/${s.body.id}/history`)).status).toBe(404);
  });
});

describe("GET /api/v1/statuses/:id/context", () => {
  it("returns ancestors and descendants of a 3-level thread, depth first, filtered", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const root = await a.api.post("/api/v1/statuses", { status: "root" });
    const r1 = await b.api.post("/api/v1/statuses", { status: "r1", in_reply_to_id: root.body.id });
    const r2 = await a.api.post("/api/v1/statuses", { status: "r2", in_reply_to_id: r1.body.id });
    const r3 = await b.api.post("/api/v1/statuses", { status: "r3", in_reply_to_id: r2.body.id });
    const r1b = await a.api.post("/api/v1/statuses", { status: "r1b", in_reply_to_id: root.body.id });
    const hidden = await b.api.post("/api/v1/statuses", { status: "hidden", in_reply_to_id: root.body.id, visibility: "private" });

    const ctx = await anon.get(`/api/v1/statuses/${root.body.id}/context`);
    expect(ctx.status).toBe(200);
    expect(ctx.body.ancestors).toEqual([]);
    expect(ctx.body.descendants.map((s: any) => s.content)).toEqual(["<p>r1</p>", "<p>r2</p>", "<p>r3</p>", "<p>r1b</p>"]);
    const mine = await b.api.get(`/api/v1/statuses/${root.body.id}/context`);
    expect(mine.body.descendants.map((s: any) => s.id)).toContain(hidden.body.id);

    const mid = await anon.get(`/api/v1/statuses/${r2.body.id}/context`);
    expect(mid.body.ancestors.map((s: any) => s.id)).toEqual([root.body.id, r1.body.id]);
    expect(mid.body.descendants.map((s: any) => s.id)).toEqual([r3.body.id]);
    void r1b;
  });

  it("signed out: 40 ancestors and 60 descendants at most 20 deep, the first in thread order (Mastodon's limits); signed in: all", async () => {
    const a = await makeUser();
    const root = await insertStatus(a, { text: "root" });
    // A chain of 45 replies, then 50 more direct replies to the root.
    const chain: string[] = [];
    for (let i = 0; i < 45; i++) chain.push(await insertStatus(a, { text: `c${i}`, inReplyTo: { id: chain[i - 1] ?? root, accountId: a.id } }));
    const direct: string[] = [];
    for (let i = 0; i < 50; i++) direct.push(await insertStatus(a, { text: `d${i}`, inReplyTo: { id: root, accountId: a.id } }));
    const ids = (r: { body: { ancestors: { id: string }[]; descendants: { id: string }[] } }, k: "ancestors" | "descendants") => r.body[k].map((x) => x.id);

    const out = await anon.get(`/api/v1/statuses/${root}/context`);
    expect(out.status).toBe(200);
    // Depth first: the chain to its 20th reply, then the root's other replies, 60 in all.
    expect(ids(out, "descendants")).toEqual([...chain.slice(0, 20), ...direct.slice(0, 40)]);
    const inside = await a.api.get(`/api/v1/statuses/${root}/context`);
    expect(ids(inside, "descendants")).toEqual([...chain, ...direct]);

    const leaf = chain[44]!;
    expect(ids(await anon.get(`/api/v1/statuses/${leaf}/context`), "ancestors")).toEqual(chain.slice(4, 44));
    expect(ids(await a.api.get(`/api/v1/statuses/${leaf}/context`), "ancestors")).toEqual([root, ...chain.slice(0, 44)]);
  });

  it("terminates on a reply loop and 404s for an invisible root", async () => {
    const a = await makeUser();
    const x = await a.api.post("/api/v1/statuses", { status: "x" });
    const y = await a.api.post("/api/v1/statuses", { status: "y", in_reply_to_id: x.body.id });
    await env.DB.prepare("UPDATE statuses SET in_reply_to_id = ? WHERE id = ?").bind(y.body.id.padStart(20, "0"), x.body.id.padStart(20, "0")).run();
    const ctx = await anon.get(`/api/v1/statuses/${x.body.id}/context`);
    expect(ctx.status).toBe(200);
    expect(ctx.body.ancestors.map((s: any) => s.id)).toEqual([y.body.id]);
    expect(ctx.body.descendants.map((s: any) => s.id)).toEqual([]);
    const p = await a.api.post("/api/v1/statuses", { status: "p", visibility: "private" });
    expect((await anon.get(`/api/v1/statuses/${p.body.id}/context`)).status).toBe(404);
  });
});
