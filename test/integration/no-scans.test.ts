// No statement the everyday paths run reads a whole table that grows with use. Every SQL text the code prepares during
// a day's worth of actions (posting, replying, boosting, favouriting and undoing each, reading timelines,
// notifications, profiles, threads, search and the other lists clients load, and incoming Create, Like, Announce, Update, Undo and Delete) is
// recorded through createDb's test hook, and its EXPLAIN QUERY PLAN must not SCAN one of the tables below: such a scan
// costs D1 rows read in proportion to the table (issue 12), and the benchmark's seeds may be too small to show it (a
// status's poll lookup once scanned every poll on every page). A second workload covers the rarer paths that still
// repeat: searches made only of operators, deleting a pinned status, revoking tokens, rejecting sign-ups, deleting an
// account, suspending a domain and lifting it.
import { env, SELF } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type D1Client, d1Observer } from "../../src/db/client";
import { users } from "../../src/db/schema";
import { Effects } from "../../src/effects/collector";
import { padId } from "../../src/lib/text/ids";
import { resolveActor } from "../../src/federation/remote/remote-accounts";
import { authorizedApps, revokeAuthorizedApp } from "../../src/services/auth/authorized-apps";
import { changePassword } from "../../src/services/auth/password-change";
import { registerAccount } from "../../src/services/accounts/registration";
import { ADMIN } from "./admin-fixtures";
import { api, cfg, db, makeApp, makeUser, ORIGIN } from "./helpers";
import { issueToken } from "../../src/services/auth/tokens";
import { PASSWORD } from "./oauth-helpers";
import { AS_PUBLIC, create, installFetchMock, newId, note, postInbox, remoteActor, runJobs } from "./federation-inbox-fixtures";

/**
 * Scans accepted by the plan line that shows them: a walk of the newest statuses for a search made only of operators
 * (publicWalk in src/queries/statuses/search.ts) reads the primary key backwards and stops at its LIMIT, a window of the page;
 * the instance's own custom emojis, the whole of a partial index that holds nothing else (custom_emojis_local); the
 * profile directory newest first, a walk of the discoverable accounts that stops at the page (at most 2,000 deep).
 */
const ACCEPTED_PLANS = [
  /^SCAN newest USING COVERING INDEX sqlite_autoindex_statuses_1$/,
  /^SCAN custom_emojis USING INDEX custom_emojis_local$/,
  /^SCAN accounts USING INDEX accounts_discoverable$/,
];

/**
 * Scans accepted, each for its reason: an account deletion's notifications sent by the account
 * (services/accounts/delete-account.ts): once per deleted account, where an index on `from_account_id` would cost a row
 * written for every notification ever made (~2% of the benchmark day's rows written). The deletion's other statements
 * each probe an index. The admin hashtag list walks the tags' primary key and stops at its page.
 */
const ACCEPTED = [
  /^DELETE FROM notifications WHERE from_account_id = \?$/,
  // The admin hashtag list (services/admin/tags.ts): a page of every tag by id, the primary key walked from the cursor
  // and stopped at the page's LIMIT (staff only).
  /^select "id", "name", "display_name", [^;]* from "tags" (where [^;]*)?order by "tags"\."id" (desc|asc) limit \?$/,
];

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
  "status_pins",
  "idempotency_keys",
  "oauth_access_tokens",
  "custom_emojis",
  "annual_reports",
  "collections",
  "collection_items",
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

/** What each statement recorded so far scans of the growing tables (none accepted above), its plan and its text. */
async function scansIn(recorded: Map<string, unknown[]>): Promise<string[]> {
  const scans: string[] = [];
  for (const [text, params] of recorded) {
    if (!/^\s*(select|with|delete|update|insert)/i.test(text)) continue;
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${text}`)
      .bind(...params)
      .all<{ detail: string }>();
    for (const { detail } of plan.results) {
      const m = /^SCAN (\w+)(?: AS \w+)?(?: USING|$)/.exec(detail);
      // A scan names the alias when the table has one: find the table it stands for in the text.
      const name = m?.[1];
      if (!name || ACCEPTED_PLANS.some((a) => a.test(detail))) continue;
      const table = GROWING.includes(name) ? name : new RegExp(`\\b(\\w+)"?\\s+(?:AS\\s+)?"?${name}"?\\b`, "i").exec(text)?.[1]?.replace(/"/g, "");
      if (table && GROWING.includes(table) && !ACCEPTED.some((a) => a.test(text.trim())))
        scans.push(`${detail} (${table}) :: ${text.replace(/\s+/g, " ").slice(-420)}`);
    }
  }
  return scans;
}

beforeAll(() => installFetchMock());
beforeEach(() => {
  seen.clear();
  d1Observer.wrap = recording;
});
afterEach(() => {
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
      "/api/v1/custom_emojis",
      // What clients load besides the timelines.
      "/api/v1/conversations",
      "/api/v1/timelines/direct",
      "/api/v1/follow_requests",
      "/api/v1/lists",
      "/api/v1/mutes",
      "/api/v1/blocks",
      "/api/v1/domain_blocks",
      `/api/v1/accounts/${bob.id}/followers`,
      `/api/v1/accounts/${bob.id}/following`,
      `/api/v1/accounts/${bob.id}/statuses?pinned=true`,
      `/api/v1/accounts/${bob.id}/statuses?only_media=true`,
      `/api/v1/accounts/${bob.id}/statuses?exclude_replies=true&tagged=scans`,
      `/api/v1/accounts/${bob.id}/featured_tags`,
      `/api/v1/accounts/${bob.id}/lists`,
      `/api/v1/accounts/relationships?id[]=${bob.id}`,
      `/api/v1/accounts/familiar_followers?id[]=${bob.id}`,
      `/api/v1/statuses/${p.id}/reblogged_by`,
      `/api/v1/statuses/${p.id}/history`,
      "/api/v1/followed_tags",
      "/api/v1/featured_tags",
      "/api/v1/scheduled_statuses",
      "/api/v1/filters",
      "/api/v2/filters",
      "/api/v1/markers?timeline[]=home&timeline[]=notifications",
      "/api/v1/announcements",
      "/api/v1/suggestions",
      "/api/v2/suggestions",
      "/api/v1/trends/tags",
      "/api/v1/trends/statuses",
      "/api/v1/trends/links",
      "/api/v1/notifications?types[]=mention",
      "/api/v1/notifications?types[]=mention&types[]=follow&types[]=reblog",
      "/api/v1/notifications?exclude_types[]=favourite&exclude_types[]=reblog&min_id=1",
      "/api/v2/notifications?exclude_types[]=favourite&limit=2",
      "/api/v1/notifications/unread_count?exclude_types[]=favourite",
      "/api/v1/notifications/unread_count",
      "/api/v2/notifications/unread_count",
      "/api/v1/notifications/requests",
      "/api/v2/notifications/policy",
      "/api/v1/preferences",
      "/api/v1/endorsements",
      "/api/v1/directory",
      "/api/v1/directory?order=new",
      "/api/v1/instance/peers",
      "/api/v1/instance/activity",
      "/api/v1/timelines/public?only_media=true",
      "/api/v1/timelines/tag/scans?only_media=true",
      "/api/v2/search?q=%23scans&type=statuses",
    ])
      expect((await ann.api.get(path)).status, path).toBe(200);
    expect((await bob.api.get("/api/v1/notifications")).status).toBe(200);
    // What other servers and browsers read, signed out.
    const statusPath = `/users/${bob.username}/statuses/${p.id}`;
    for (const [path, accept] of [
      [`/users/${bob.username}`, "application/activity+json"],
      [`/users/${bob.username}/outbox?page=true`, "application/activity+json"],
      [`/users/${bob.username}/followers?page=1`, "application/activity+json"],
      [`/users/${bob.username}/following?page=1`, "application/activity+json"],
      [`/users/${bob.username}/collections/featured`, "application/activity+json"],
      [statusPath, "application/activity+json"],
      [`/@${bob.username}`, "text/html"],
      [`/@${bob.username}/${p.id}`, "text/html"],
      [`/.well-known/webfinger?resource=acct:${bob.username}@tern.test`, "application/jrd+json"],
      ["/nodeinfo/2.0", "application/json"],
    ])
      expect((await SELF.fetch(`${ORIGIN}${path}`, { headers: { accept } })).status, path).toBe(200);
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

    expect(seen.size).toBeGreaterThan(50);
    expect(await scansIn(seen)).toEqual([]);
  });
});

describe("the rarer paths' statements", () => {
  it("scan no table that grows", { timeout: 120_000 }, async () => {
    const [cal, dee] = await Promise.all([makeUser("scancal"), makeUser("scandee")]);
    const admin = await makeUser("scanadmin", ADMIN);
    // Searches made only of operators.
    for (const q of ["#scans", "has:poll", `from:${dee.username}`, "is:sensitive", "-is:reply language:en"])
      expect((await cal.api.get(`/api/v2/search?type=statuses&q=${encodeURIComponent(q)}`)).status, q).toBe(200);
    // A pinned status posted with an Idempotency-Key, then deleted: its pin and its key go with it.
    const keyed = await SELF.fetch(`${ORIGIN}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: `Bearer ${cal.token}`, "content-type": "application/json", "idempotency-key": "scan-key" },
      body: JSON.stringify({ status: "pinned, then gone" }),
    });
    const pinned = (await keyed.json()) as { id: string };
    expect((await cal.api.post(`/api/v1/statuses/${pinned.id}/pin`)).status).toBe(200);
    expect((await cal.api.delete(`/api/v1/statuses/${pinned.id}`)).status).toBe(200);
    await runJobs();
    const left = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM status_pins WHERE status_id = ?1) AS pins, (SELECT count(*) FROM idempotency_keys WHERE status_id = ?1) AS keys",
    )
      .bind(padId(pinned.id))
      .first();
    expect(left).toEqual({ pins: 0, keys: 0 });
    // Tokens: the authorized apps, one revoked (a second sign-in keeps another), all revoked by a password change; the
    // admin's sign-up sources.
    const d = db();
    const other = await makeUser("scaneve");
    const again = await issueToken(d, "test-pepper", { applicationId: (await makeApp()).id, userId: other.userId, scopes: ["read"] });
    const apps = await authorizedApps(d, other.userId);
    expect(apps.length).toBe(2);
    await revokeAuthorizedApp(d, new Effects(""), { userId: other.userId, accountId: other.id }, apps[0]!.applicationId);
    expect(await authorizedApps(d, other.userId)).toHaveLength(1);
    const eve = (await d.select().from(users).where(eq(users.id, other.userId)))[0]!;
    await changePassword(
      d,
      new Effects(""),
      "test-pepper",
      // The current password's check (src/oauth/credentials.ts needs a request for its budgets; none here).
      async (given) => "password" in given && given.password === PASSWORD,
      { user: eve, accountId: other.id },
      { current: PASSWORD, password: "another long password", confirmation: "another long password" },
      null,
    );
    for (const token of [other.token, again.accessToken]) expect((await api(token).get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    expect(
      (
        await admin.api.post("/api/v1/admin/dimensions", {
          keys: ["sources"],
          start_at: new Date(Date.now() - 7 * 86_400_000).toISOString(),
          end_at: new Date().toISOString(),
        })
      ).status,
    ).toBe(200);
    // A pending sign-up rejected; an account with statuses, follows, favourites and notifications deleted by staff.
    const pending = await registerAccount(
      d,
      new Effects(""),
      { ...cfg(), registrations: "approval" as const },
      env,
      { applicationId: (await makeApp()).id, scopes: ["read"] },
      { username: "scanspam", email: "scanspam@example.net", password: "a long enough password", agreement: true, locale: "en", reason: "hello" },
      "198.51.100.9",
    );
    expect(pending).toBeTruthy();
    const spam = await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM accounts WHERE username = 'scanspam'").first<{ id: string }>();
    expect((await admin.api.post(`/api/v1/admin/accounts/${BigInt(spam!.id)}/reject`)).status).toBe(200);
    const s = (await cal.api.post("/api/v1/statuses", { status: `to @${dee.username}` })).body;
    expect((await dee.api.post(`/api/v1/accounts/${cal.id}/follow`)).status).toBe(200);
    expect((await dee.api.post(`/api/v1/statuses/${s.id}/favourite`)).status).toBe(200);
    await runJobs();
    expect((await admin.api.post(`/api/v1/admin/accounts/${cal.id}/action`, { type: "suspend" })).status).toBe(200);
    expect((await admin.api.delete(`/api/v1/admin/accounts/${cal.id}`)).status).toBe(200);
    await runJobs();
    expect(await env.DB.prepare("SELECT count(*) AS n FROM statuses WHERE account_id = ?").bind(padId(cal.id)).first("n")).toBe(0);

    // A domain suspended and lifted (with an account of it known, on a subdomain).
    await resolveActor(d, cfg(), (await remoteActor("far", "sub.scans-blocked.example")).uri);
    const block = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "scans-blocked.example", severity: "suspend", reject_media: true });
    expect(block.status).toBe(200);
    await runJobs();
    expect(await env.DB.prepare("SELECT count(*) AS n FROM accounts WHERE domain = 'sub.scans-blocked.example' AND suspended_at IS NOT NULL").first("n")).toBe(
      1,
    );
    expect((await admin.api.delete(`/api/v1/admin/domain_blocks/${block.body.id}`)).status).toBe(200);
    await runJobs();

    expect(seen.size).toBeGreaterThan(50);
    expect(await scansIn(seen)).toEqual([]);
  });
});

describe("the statements of Mastodon 4.3-4.6's endpoints", () => {
  it("scan no table that grows", { timeout: 120_000 }, async () => {
    vi.setSystemTime(Date.UTC(2026, 11, 12, 12));
    try {
      const [fay, gus] = await Promise.all([makeUser("scanfay"), makeUser("scangus")]);
      await env.DB.prepare("UPDATE accounts SET discoverable = 1 WHERE id = ?").bind(padId(gus.id)).run();
      expect((await gus.api.post(`/api/v1/accounts/${fay.id}/follow`)).status).toBe(200);
      for (const text of ["one #scans", "two #scans", "three"]) expect((await fay.api.post("/api/v1/statuses", { status: text })).status).toBe(200);
      await runJobs();
      // An annual report: its state, its generation's rounds, the report read.
      expect((await fay.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "eligible" });
      expect((await fay.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(202);
      await runJobs();
      expect((await fay.api.get("/api/v1/annual_reports/2026")).status).toBe(200);
      expect((await fay.api.get("/api/v1/annual_reports")).status).toBe(200);
      expect((await fay.api.post("/api/v1/annual_reports/2026/read")).status).toBe(200);
      // Collections: made, shown, listed, items added and removed, revoked, deleted.
      const col = (await fay.api.post("/api/v1/collections", { name: "Scans", tag_name: "scans", account_ids: [gus.id] })).body.collection;
      expect((await gus.api.get(`/api/v1/collections/${col.id}`)).status).toBe(200);
      expect((await gus.api.get(`/api/v1/accounts/${fay.id}/collections`)).status).toBe(200);
      expect((await gus.api.get(`/api/v1/accounts/${gus.id}/in_collections`)).status).toBe(200);
      expect((await fay.api.patch(`/api/v1/collections/${col.id}`, { name: "Scanned" })).status).toBe(200);
      // A status linking to it shows it (tagged_collections), on its page and in a timeline; a report names it.
      const linking = (await fay.api.post("/api/v1/statuses", { status: `see ${col.url}` })).body;
      expect(linking.tagged_collections.map((c: any) => c.id)).toEqual([col.id]);
      expect((await gus.api.get(`/api/v1/statuses/${linking.id}`)).body.tagged_collections.map((c: any) => c.id)).toEqual([col.id]);
      expect((await gus.api.get(`/api/v1/accounts/${fay.id}/statuses`)).status).toBe(200);
      expect((await gus.api.post("/api/v1/reports", { account_id: fay.id, collection_ids: [col.id] })).status).toBe(200);
      expect((await gus.api.post(`/api/v1/collections/${col.id}/items/${col.items[0].id}/revoke`)).status).toBe(200);
      expect((await fay.api.delete(`/api/v1/collections/${col.id}`)).status).toBe(200);
      // The Profile, the link timeline, the peers search, the domain block preview, the admin tags.
      expect((await fay.api.get("/api/v1/profile")).status).toBe(200);
      expect((await fay.api.get("/api/v1/timelines/link?url=https://scans.example/")).status).toBe(404);
      expect((await fay.api.get("/api/v1/peers/search?q=scans")).status).toBe(200);
      expect((await fay.api.get("/api/v1/domain_blocks/preview?domain=scans.example")).status).toBe(200);
      const admin = await makeUser("scanadmin2", ADMIN);
      expect((await admin.api.get("/api/v1/admin/tags")).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
    expect(seen.size).toBeGreaterThan(20);
    expect(await scansIn(seen)).toEqual([]);
  });
});
