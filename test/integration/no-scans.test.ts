// No statement the everyday paths run reads a whole table that grows with use. Every SQL text the code prepares during
// a day's worth of actions (posting, replying, boosting, favouriting and undoing each, reading timelines,
// notifications, profiles, threads and search, and incoming Create, Like, Announce, Update, Undo and Delete) is
// recorded through createDb's test hook, and its EXPLAIN QUERY PLAN must not SCAN one of the tables below: such a scan
// costs D1 rows read in proportion to the table (issue 12), and the benchmark's seeds may be too small to show it (a
// status's poll lookup once scanned every poll on every page).
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type D1Client, d1Observer } from "../../src/db/client";
import { makeUser, ORIGIN } from "./helpers";
import { AS_PUBLIC, create, installFetchMock, newId, note, postInbox, remoteActor, runJobs } from "./federation-inbox-fixtures";

/**
 * Scans accepted, each for its reason: hashtag search's prefix LIKE (SQLite's LIKE is case-insensitive, so the name
 * index cannot serve it; tags grow slowly and the search is typed, not polled).
 */
const ACCEPTED = [/FROM "tags" WHERE "tags"."name" LIKE/i, /from "tags" where "tags"."name" LIKE/i];

/** Tables that grow with the instance's life. */
const GROWING = [
  "accounts",
  "statuses",
  "notifications",
  "favourites",
  "follows",
  "home_feed",
  "list_feed",
  "mentions",
  "status_tags",
  "tags",
  "polls",
  "poll_votes",
  "quotes",
  "bookmarks",
  "media_attachments",
  "conversations",
  "account_conversations",
  "status_edits",
  "inbox_seen",
  "tombstones",
  "preview_cards",
  "status_search",
];

const seen = new Map<string, unknown[]>();

function recording(d1: D1Client): D1Client {
  return new Proxy(d1, {
    get(target, prop) {
      if (prop === "prepare")
        return (sqlText: string) => {
          const st = target.prepare(sqlText);
          if (!sqlText.includes("?")) {
            // A select without WHERE and values is a frozen statement's head (db/frozen.ts), prepared for its text
            // and never run as it is.
            const head = !/\bwhere\b/i.test(sqlText.slice(sqlText.lastIndexOf(' from "')));
            if (!seen.has(sqlText) && !head) seen.set(sqlText, []);
            return st;
          }
          return new Proxy(st, {
            get(s, p) {
              if (p === "bind")
                return (...args: unknown[]) => {
                  if (!seen.has(sqlText)) seen.set(sqlText, args);
                  return s.bind(...args);
                };
              const v = Reflect.get(s, p);
              return typeof v === "function" ? v.bind(s) : v;
            },
          });
        };
      if (prop === "withSession") return (b?: string) => recording((target as D1Database).withSession(b));
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

beforeAll(() => {
  installFetchMock();
  d1Observer.wrap = recording;
});
afterAll(() => {
  d1Observer.wrap = null;
});

describe("the everyday paths' statements", () => {
  it("scan no table that grows", { timeout: 120_000 }, async () => {
    const [ann, bob] = await Promise.all([makeUser("scanann"), makeUser("scanbob")]);
    // Local: follow, post (a poll, a mention, a tag), reply, boost, favourite, bookmark, quote; undo each; read.
    expect((await ann.api.post(`/api/v1/accounts/${bob.id}/follow`)).status).toBe(200);
    const p = (await bob.api.post("/api/v1/statuses", { status: `hi @scanann #scans`, poll: { options: ["a", "b"], expires_in: 3600 } })).body;
    const r = (await ann.api.post("/api/v1/statuses", { status: "a reply", in_reply_to_id: p.id })).body;
    const q = (await ann.api.post("/api/v1/statuses", { status: "a quote", quoted_status_id: p.id })).body;
    await runJobs();
    for (const path of ["favourite", "reblog", "bookmark"]) expect((await ann.api.post(`/api/v1/statuses/${p.id}/${path}`)).status).toBe(200);
    await runJobs();
    for (const path of [
      "/api/v1/timelines/home",
      "/api/v1/timelines/public",
      "/api/v1/timelines/tag/scans",
      "/api/v1/notifications",
      "/api/v2/notifications",
      `/api/v1/accounts/${bob.id}/statuses`,
      `/api/v1/statuses/${p.id}/context`,
      `/api/v1/statuses/${p.id}/favourited_by`,
      "/api/v1/bookmarks",
      "/api/v1/favourites",
      "/api/v2/search?q=hi&resolve=false",
      "/api/v2/search?q=https://far.example/@x/1&resolve=false",
      "/api/v1/accounts/verify_credentials",
    ])
      expect((await ann.api.get(path)).status, path).toBe(200);
    expect((await bob.api.get("/api/v1/notifications")).status).toBe(200);
    for (const path of ["unfavourite", "unreblog", "unbookmark"]) expect((await ann.api.post(`/api/v1/statuses/${p.id}/${path}`)).status).toBe(200);
    expect((await ann.api.delete(`/api/v1/statuses/${r.id}`)).status).toBe(200);
    expect((await ann.api.delete(`/api/v1/statuses/${q.id}`)).status).toBe(200);
    expect((await ann.api.post(`/api/v1/accounts/${bob.id}/unfollow`)).status).toBe(200);
    await runJobs();

    // Incoming: a remote account's Create (mentioning ann), Like, Announce, Update, Undo and Delete.
    const zed = await remoteActor("zed", "scans.example");
    const annUri = `${ORIGIN}/users/${ann.username}`;
    const n = note(zed, { to: [AS_PUBLIC, annUri], tag: [{ type: "Mention", href: `${ORIGIN}/@${ann.username}` }] });
    const own = (await ann.api.post("/api/v1/statuses", { status: "like this" })).body;
    const like = { "@context": "https://www.w3.org/ns/activitystreams", id: newId(zed), type: "Like", actor: zed.uri, object: own.uri };
    const acts = [
      create(zed, n),
      like,
      { "@context": "https://www.w3.org/ns/activitystreams", id: newId(zed), type: "Announce", actor: zed.uri, object: own.uri, to: [AS_PUBLIC] },
      {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: newId(zed),
        type: "Update",
        actor: zed.uri,
        object: { ...n, content: "<p>edited</p>", updated: new Date().toISOString() },
      },
      { "@context": "https://www.w3.org/ns/activitystreams", id: newId(zed), type: "Undo", actor: zed.uri, object: like },
      { "@context": "https://www.w3.org/ns/activitystreams", id: newId(zed), type: "Delete", actor: zed.uri, object: n.id },
    ];
    for (const a of acts) {
      expect((await postInbox(zed, a)).status).toBe(202);
      await runJobs();
    }

    d1Observer.wrap = null;
    expect(seen.size).toBeGreaterThan(50);
    const scans: string[] = [];
    for (const [text, params] of seen) {
      if (!/^\s*(select|with|delete|update|insert)/i.test(text)) continue;
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${text}`)
        .bind(...params)
        .all<{ detail: string }>();
      for (const { detail } of plan.results) {
        const m = /^SCAN (\w+)(?: AS \w+)?(?: USING|$)/.exec(detail);
        // A scan names the alias when the table has one: find the table it stands for in the text.
        const name = m?.[1];
        if (!name) continue;
        const table = GROWING.includes(name) ? name : new RegExp(`\\b(\\w+)"?\\s+(?:AS\\s+)?"?${name}"?\\b`, "i").exec(text)?.[1]?.replace(/"/g, "");
        if (table && GROWING.includes(table) && !ACCEPTED.some((a) => a.test(text)))
          scans.push(`${detail} (${table}) :: ${text.replace(/\s+/g, " ").slice(-420)}`);
      }
    }
    expect(scans).toEqual([]);
  });
});
