// End to end with masto 8 against `wrangler dev`: the rest of the client API as an app uses it: filters (v2 and the
// legacy v1 list), grouped notifications through masto's own paginator, the notification policy and requests,
// scheduled statuses, conversations, announcements, follow suggestions, removing the avatar, identity proofs, quote posts, trends,
// and Mastodon 4.6's annual report state, collections and Profile through masto's own resources.
// Steps share state and run in order; a step whose prerequisite failed fails with "blocked by ...".
import "../support/polyfills.mjs";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createOAuthAPIClient, createRestAPIClient } from "masto";
import { startTern } from "../support/server.mjs";

const OOB = "urn:ietf:wg:oauth:2.0:oob";
const SCOPES = "read write follow push";
const PASSWORD = "correct horse battery staple";
const WAIT_MS = 20_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value; fails with `what` when WAIT_MS pass first (queue-driven effects only). */
async function eventually(what, fn, intervalMs = 250) {
  const deadline = Date.now() + WAIT_MS;
  while (true) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS} ms`);
    await sleep(intervalMs);
  }
}

/** Makes masto's HTTP errors say which request failed and how. */
async function step(what, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e?.statusCode) {
      throw new Error(`${what}: HTTP ${e.statusCode} ${JSON.stringify(e.message)}${e.description ? ` (${e.description})` : ""}`, {
        cause: e,
      });
    }
    throw e;
  }
}

function need(value, prereq) {
  if (!value) throw new Error(`blocked by an earlier step: ${prereq}`);
  return value;
}

/** Every page of a masto paginator, until an empty page or the Link header has no `next` (at most `max` pages). */
async function allPages(paginator, max = 30) {
  const pages = [];
  for await (const page of paginator) {
    pages.push(page);
    if (pages.length >= max) break;
  }
  return pages;
}

/** A 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

describe("Client features (masto 8 against wrangler dev)", () => {
  let server;
  const s = {}; // shared state between steps
  const nonce = Date.now().toString(36).slice(-5);

  const rest = (accessToken) => createRestAPIClient({ url: server.url, accessToken, timeout: 30_000 });

  async function signUp(appClient, who) {
    const username = `cf_${who}_${nonce}`;
    const email = `${username}@example.test`;
    const token = await step(`POST /api/v1/accounts (${who})`, () =>
      appClient.v1.accounts.create({ username, email, password: PASSWORD, agreement: true, locale: "en" }),
    );
    const client = rest(token.accessToken);
    const me = await step(`verify_credentials (${who})`, () => client.v1.accounts.verifyCredentials());
    return { username, email, token: token.accessToken, client, id: me.id };
  }

  /** The first owner, made through the /setup page (SETUP_TOKEN=e2e-setup), as a person does it in a browser. */
  async function setUpOwner() {
    const page = await fetch(`${server.url}/setup?token=e2e-setup`);
    assert.equal(page.status, 200, "GET /setup answers the form");
    const html = await page.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    assert.ok(csrf, "the setup form carries a csrf token");
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const username = `cf_owner_${nonce}`;
    const email = `${username}@example.test`;
    const res = await fetch(`${server.url}/setup`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams({ csrf, token: "e2e-setup", username, email, password: PASSWORD }),
    });
    assert.equal(res.status, 303, `POST /setup creates the owner (${res.status} ${res.status === 303 ? "" : await res.text()})`);
    return { username, email };
  }

  before(async () => {
    server = await startTern();
    const anon = rest();
    const app = await step("POST /api/v1/apps", () =>
      anon.v1.apps.create({ clientName: "Tern features e2e", redirectUris: OOB, scopes: `${SCOPES} admin:read admin:write` }),
    );
    const oauth = createOAuthAPIClient({ url: server.url, timeout: 30_000 });
    const appToken = await step("POST /oauth/token (client_credentials)", () =>
      oauth.token.create({ grantType: "client_credentials", clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: OOB, scope: SCOPES }),
    );
    const appClient = rest(appToken.accessToken);
    // Sign-up is throttled to 5 per IP per 30 minutes (Mastodon's figure): five users, and the owner from /setup.
    for (const who of ["a", "b", "c", "d", "e"]) s[who] = await signUp(appClient, who);
    const owner = await setUpOwner();
    const token = await step("POST /oauth/token (password, owner)", () =>
      oauth.token.create({
        grantType: "password",
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        redirectUri: OOB,
        username: owner.email,
        password: PASSWORD,
        scope: "read write admin:read admin:write",
      }),
    );
    s.owner = { ...owner, token: token.accessToken, client: rest(token.accessToken) };
  });
  after(async () => {
    await server?.stop();
  });

  // ---- grouped notifications (first: later steps must not add notifications for A) ----

  test("grouped notifications: two favourites make one group, a follow another; masto's paginator walks the pages", async () => {
    const { a, c, d, e } = s;
    need(a && c && d && e, "sign-up");
    const post = await step("POST /api/v1/statuses (A)", () => a.client.v1.statuses.create({ status: "A's post to be favourited", visibility: "public" }));
    s.aPost = post;
    await step("favourite (C)", () => c.client.v1.statuses.$select(post.id).favourite());
    await step("favourite (D)", () => d.client.v1.statuses.$select(post.id).favourite());
    await step("follow (E → A)", () => e.client.v1.accounts.$select(a.id).follow());
    await eventually("A's three notifications in GET /api/v1/notifications", async () => (await a.client.v1.notifications.list({ limit: 30 })).length >= 3);

    const pages = await step("GET /api/v2/notifications (paginated)", () => allPages(a.client.v2.notifications.list({ limit: 1 })));
    const nonEmpty = pages.filter((p) => p.notificationGroups.length > 0);
    assert.ok(nonEmpty.length >= 2, `more than one page of groups at limit=1 (got ${pages.map((p) => p.notificationGroups.length).join(",")})`);
    for (const p of pages) assert.ok(p.notificationGroups.length <= 1, "a page holds at most `limit` groups");

    const groups = new Map();
    for (const p of pages) {
      for (const g of p.notificationGroups) {
        if (!groups.has(g.groupKey)) groups.set(g.groupKey, { group: g, page: p });
      }
    }
    const favs = [...groups.values()].filter((x) => x.group.type === "favourite");
    const follows = [...groups.values()].filter((x) => x.group.type === "follow");
    assert.equal(favs.length, 1, "both favourites are one group");
    assert.equal(follows.length, 1, "one follow group");

    const fav = favs[0];
    assert.equal(fav.group.notificationsCount, 2, "the favourite group counts 2 notifications");
    assert.deepEqual([...fav.group.sampleAccountIds].sort(), [c.id, d.id].sort(), "sample accounts are C and D");
    assert.equal(fav.group.statusId, post.id, "the group is about A's post");
    for (const id of fav.group.sampleAccountIds) {
      assert.ok(
        fav.page.accounts.some((x) => x.id === id),
        "the page carries every sample account",
      );
    }
    assert.ok(
      fav.page.statuses.some((x) => x.id === post.id),
      "the page carries the status",
    );
    const follow = follows[0];
    assert.deepEqual(follow.group.sampleAccountIds, [e.id], "the follow group is E's");
    assert.equal(follow.group.notificationsCount, 1);
    s.groups = { fav: fav.group.groupKey, follow: follow.group.groupKey };

    // One group and its accounts, as a client opens them.
    const one = await step("GET /api/v2/notifications/:group_key", () => a.client.v2.notifications.$select(fav.group.groupKey).fetch());
    assert.equal(one.notificationGroups.length, 1);
    assert.equal(one.notificationGroups[0].groupKey, fav.group.groupKey);
    const accounts = await step("GET /api/v2/notifications/:group_key/accounts", () => a.client.v2.notifications.$select(fav.group.groupKey).accounts.fetch());
    assert.deepEqual(accounts.map((x) => x.id).sort(), [c.id, d.id].sort());
  });

  test("grouped notifications: unread_count counts groups until the marker moves past them", async () => {
    const a = need(s.groups && s.a, "grouped notifications");
    const before = await step("GET /api/v2/notifications/unread_count", () => a.client.v2.notifications.unreadCount.fetch());
    assert.equal(before.count, 2, "two unread groups");
    const [newest] = await a.client.v1.notifications.list({ limit: 1 });
    await step("POST /api/v1/markers", () => a.client.v1.markers.create({ notifications: { lastReadId: newest.id } }));
    const afterRead = await a.client.v2.notifications.unreadCount.fetch();
    assert.equal(afterRead.count, 0, "nothing unread once the marker is at the newest notification");
  });

  test("grouped notifications: dismissing a group removes it from the list", async () => {
    const a = need(s.groups && s.a, "grouped notifications");
    await step("POST /api/v2/notifications/:group_key/dismiss", () => a.client.v2.notifications.$select(s.groups.fav).dismiss());
    const page = await a.client.v2.notifications.list({ limit: 40 });
    const keys = page.notificationGroups.map((g) => g.groupKey);
    assert.ok(!keys.includes(s.groups.fav), "the favourite group is gone");
    assert.ok(keys.includes(s.groups.follow), "the follow group stays");
    await assert.rejects(
      () => a.client.v2.notifications.$select(s.groups.fav).fetch(),
      (e) => e?.statusCode === 404,
      "a dismissed group is not found",
    );
  });

  // ---- notification policy and requests ----

  test("notification policy: D filters strangers; C's mention becomes a request; accepting lets it through", async () => {
    const { c, d } = s;
    need(c && d, "sign-up");
    const policy = await step("PATCH /api/v2/notifications/policy", () => d.client.v2.notifications.policy.update({ forNotFollowing: "filter" }));
    assert.equal(policy.forNotFollowing, "filter");
    assert.equal((await d.client.v2.notifications.policy.fetch()).forNotFollowing, "filter", "the policy persisted");

    const mention = await step("POST /api/v1/statuses (C mentions D)", () =>
      c.client.v1.statuses.create({ status: `@${d.username} hello from a stranger`, visibility: "public" }),
    );
    const request = await eventually("a notification request from C", async () => {
      const list = await step("GET /api/v1/notifications/requests", () => d.client.v1.notifications.requests.list());
      return list.find((r) => r.account.id === c.id);
    });
    assert.equal(request.notificationsCount, "1", "one filtered notification (a string, as Mastodon sends it)");
    assert.equal(request.lastStatus?.id, mention.id, "the request shows the mention");
    const plain = await d.client.v1.notifications.list({ limit: 30 });
    assert.ok(!plain.some((n) => n.status?.id === mention.id), "the filtered mention is not among D's notifications");
    const policyNow = await d.client.v2.notifications.policy.fetch();
    assert.equal(policyNow.summary?.pendingRequestsCount, 1, "the policy summary counts the pending request");

    await step("POST /api/v1/notifications/requests/:id/accept", () => d.client.v1.notifications.requests.$select(request.id).accept());
    assert.deepEqual(await d.client.v1.notifications.requests.list(), [], "no pending requests after accepting");
    const merged = await eventually("the mention among D's notifications", async () =>
      (await d.client.v1.notifications.list({ limit: 30 })).find((n) => n.type === "mention" && n.status?.id === mention.id),
    );
    assert.equal(merged.account.id, c.id);
    assert.deepEqual(await d.client.v1.notifications.requests.merged.fetch(), { merged: true });
  });

  // ---- filters ----

  test("filters: a v2 warn filter with keywords marks a matching status in A's home timeline", async () => {
    const { a, b } = s;
    need(a && b, "sign-up");
    await step("A follows B", () => a.client.v1.accounts.$select(b.id).follow());
    s.aFollowsB = true;
    const filter = await step("POST /api/v2/filters", () =>
      a.client.v2.filters.create({
        title: "Fruit",
        context: ["home"],
        filterAction: "warn",
        keywordsAttributes: [{ keyword: "kumquat", wholeWord: true }],
      }),
    );
    assert.equal(filter.title, "Fruit");
    const listed = (await step("GET /api/v2/filters", () => allPages(a.client.v2.filters.list()))).flat();
    assert.deepEqual(
      listed.map((f) => f.id),
      [filter.id],
      "the filter is listed",
    );
    assert.deepEqual(filter.context, ["home"]);
    assert.equal(filter.filterAction, "warn");
    assert.deepEqual(
      filter.keywords.map((k) => [k.keyword, k.wholeWord]),
      [["kumquat", true]],
    );
    s.filter = filter;

    const post = await step("POST /api/v1/statuses (B)", () => b.client.v1.statuses.create({ status: "I ate a Kumquat today", visibility: "public" }));
    const plain = await step("POST /api/v1/statuses (B, unmatched)", () =>
      b.client.v1.statuses.create({ status: "Kumquats are not whole words", visibility: "public" }),
    );
    const found = await eventually("B's posts in A's home timeline", async () => {
      const page = await a.client.v1.timelines.home.list({ limit: 20 });
      const x = page.find((st) => st.id === post.id);
      return x && page.some((st) => st.id === plain.id) ? { x, page } : null;
    });
    const [result] = found.x.filtered ?? [];
    assert.ok(result, "the status carries `filtered`");
    assert.equal(result.filter.id, filter.id);
    assert.equal(result.filter.filterAction, "warn");
    assert.deepEqual(result.keywordMatches, ["Kumquat"], "the keyword as it appears in the text");
    const other = found.page.find((st) => st.id === plain.id);
    assert.deepEqual(other.filtered ?? [], [], "a whole-word keyword does not match inside another word");
    s.filteredPost = post;
  });

  test("filters: keywords are added and removed through the filter's keywords resource", async () => {
    const a = need(s.filter && s.a, "v2 filter");
    const kw = await step("POST /api/v2/filters/:id/keywords", () =>
      a.client.v2.filters.$select(s.filter.id).keywords.create({ keyword: "durian", wholeWord: false }),
    );
    assert.equal(kw.keyword, "durian");
    assert.equal(kw.wholeWord, false);
    let list = (await step("GET /api/v2/filters/:id/keywords", () => allPages(a.client.v2.filters.$select(s.filter.id).keywords.list()))).flat();
    assert.deepEqual(list.map((k) => k.keyword).sort(), ["durian", "kumquat"]);
    const fetched = await a.client.v2.filters.$select(s.filter.id).fetch();
    assert.equal(fetched.keywords.length, 2, "the filter shows both keywords");

    await step("DELETE /api/v2/filters/keywords/:id", () => a.client.v2.filters.keywords.$select(kw.id).remove());
    list = await a.client.v2.filters.$select(s.filter.id).keywords.list();
    assert.deepEqual(
      list.map((k) => k.keyword),
      ["kumquat"],
    );
  });

  test("filters: the legacy v1 list shows each keyword as a filter", async () => {
    const a = need(s.filter && s.a, "v2 filter");
    const v1 = (await step("GET /api/v1/filters", () => allPages(a.client.v1.filters.list()))).flat();
    const entry = v1.find((f) => f.phrase === "kumquat");
    assert.ok(entry, "the keyword is a v1 filter");
    assert.deepEqual(entry.context, ["home"]);
    assert.equal(entry.wholeWord, true);
    assert.equal(entry.irreversible, false, "a warn filter is not irreversible");
  });

  test("filters: switching the filter to `hide` removes the status from A's home timeline", async () => {
    const a = need(s.filteredPost && s.a, "warn filter on home");
    const updated = await step("PUT /api/v2/filters/:id", () => a.client.v2.filters.$select(s.filter.id).update({ filterAction: "hide" }));
    assert.equal(updated.filterAction, "hide");
    const home = await a.client.v1.timelines.home.list({ limit: 40 });
    assert.ok(!home.some((st) => st.id === s.filteredPost.id), "a hidden status is left out of home");
    assert.ok(home.length > 0, "the rest of home is still there");
    const v1 = await a.client.v1.filters.list();
    assert.equal(v1.find((f) => f.phrase === "kumquat")?.irreversible, true, "v1 shows a hide filter as irreversible");

    await step("DELETE /api/v2/filters/:id", () => a.client.v2.filters.$select(s.filter.id).remove());
    const again = await a.client.v1.timelines.home.list({ limit: 40 });
    const back = again.find((st) => st.id === s.filteredPost.id);
    assert.ok(back, "the status is back once the filter is gone");
    assert.deepEqual(back.filtered ?? [], []);
    assert.deepEqual((await allPages(a.client.v2.filters.list())).flat(), [], "no filters left");
  });

  // ---- scheduled statuses ----

  test("scheduled statuses: create ten minutes ahead, list, reschedule, delete", async () => {
    const a = need(s.a, "sign-up");
    const at = new Date(Date.now() + 10 * 60_000);
    const scheduled = await step("POST /api/v1/statuses (scheduled_at)", () =>
      a.client.v1.statuses.create({ status: "Posted from the future", visibility: "unlisted", scheduledAt: at.toISOString() }),
    );
    assert.ok(/^\d+$/.test(scheduled.id), "a ScheduledStatus id");
    assert.equal(scheduled.params.text, "Posted from the future");
    assert.equal(scheduled.params.visibility, "unlisted");
    assert.ok(Math.abs(Date.parse(scheduled.scheduledAt) - at.getTime()) < 1000, "scheduled_at is the time asked for");

    const list = await step("GET /api/v1/scheduled_statuses", () => a.client.v1.scheduledStatuses.list());
    assert.deepEqual(
      list.map((x) => x.id),
      [scheduled.id],
    );
    const mine = await a.client.v1.accounts.$select(a.id).statuses.list({ limit: 40 });
    assert.ok(!mine.some((st) => st.content.includes("Posted from the future")), "not published yet");

    const later = new Date(Date.now() + 20 * 60_000);
    const moved = await step("PUT /api/v1/scheduled_statuses/:id", () =>
      a.client.v1.scheduledStatuses.$select(scheduled.id).update({ scheduledAt: later.toISOString() }),
    );
    assert.ok(Math.abs(Date.parse(moved.scheduledAt) - later.getTime()) < 1000, "rescheduled");
    const fetched = await a.client.v1.scheduledStatuses.$select(scheduled.id).fetch();
    assert.equal(fetched.scheduledAt, moved.scheduledAt);

    await step("DELETE /api/v1/scheduled_statuses/:id", () => a.client.v1.scheduledStatuses.$select(scheduled.id).remove());
    assert.deepEqual(await a.client.v1.scheduledStatuses.list(), []);
    await assert.rejects(
      () => a.client.v1.scheduledStatuses.$select(scheduled.id).fetch(),
      (e) => e?.statusCode === 404,
    );
  });

  // ---- conversations ----

  test("conversations: A's direct message is an unread conversation for B; read; removed", async () => {
    const { a, b } = s;
    need(a && b, "sign-up");
    const dm = await step("POST /api/v1/statuses (direct)", () =>
      a.client.v1.statuses.create({ status: `@${b.username} just between us`, visibility: "direct" }),
    );
    assert.equal(dm.visibility, "direct");
    const conv = await eventually("B's conversation with A", async () => {
      const list = await step("GET /api/v1/conversations", () => b.client.v1.conversations.list());
      return list.find((x) => x.lastStatus?.id === dm.id);
    });
    assert.equal(conv.unread, true, "unread for the recipient");
    assert.deepEqual(
      conv.accounts.map((x) => x.id),
      [a.id],
      "the other participant",
    );
    const own = await a.client.v1.conversations.list();
    const aConv = own.find((x) => x.lastStatus?.id === dm.id);
    assert.ok(aConv, "the sender has the conversation too");
    assert.equal(aConv.unread, false, "read for the sender");

    const read = await step("POST /api/v1/conversations/:id/read", () => b.client.v1.conversations.$select(conv.id).read());
    assert.equal(read.unread, false);
    assert.equal((await b.client.v1.conversations.list()).find((x) => x.id === conv.id)?.unread, false, "stays read");

    await step("DELETE /api/v1/conversations/:id", () => b.client.v1.conversations.$select(conv.id).remove());
    assert.ok(!(await b.client.v1.conversations.list()).some((x) => x.id === conv.id), "removed from B's list");
    assert.ok(
      (await a.client.v1.conversations.list()).some((x) => x.id === aConv.id),
      "A's side is untouched",
    );
  });

  // ---- announcements ----

  test("announcements: staff publish one; users list it, react, and dismiss it", async () => {
    const owner = need(s.owner, "owner set-up");
    const { a, b } = s;
    need(a && b, "sign-up");
    const res = await fetch(`${server.url}/api/v1/admin/announcements`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "Maintenance on Sunday", published: true }),
    });
    const created = await res.json();
    assert.equal(res.status, 200, `POST /api/v1/admin/announcements (${JSON.stringify(created)})`);
    assert.ok(created.id, "an announcement id");

    const list = await step("GET /api/v1/announcements", () => a.client.v1.announcements.list());
    const ann = list.find((x) => x.id === created.id);
    assert.ok(ann, "A sees the announcement");
    assert.match(ann.content, /Maintenance on Sunday/);
    assert.equal(ann.read, false);
    assert.deepEqual(ann.reactions, []);

    await step("PUT /api/v1/announcements/:id/reactions/:name", () => a.client.v1.announcements.$select(ann.id).reactions.$select("👍").update());
    await step("PUT /api/v1/announcements/:id/reactions/:name (B)", () => b.client.v1.announcements.$select(ann.id).reactions.$select("👍").update());
    const reacted = (await a.client.v1.announcements.list()).find((x) => x.id === ann.id);
    assert.deepEqual(
      reacted.reactions.map((r) => [r.name, r.count, r.me]),
      [["👍", 2, true]],
    );
    await step("DELETE /api/v1/announcements/:id/reactions/:name", () => b.client.v1.announcements.$select(ann.id).reactions.$select("👍").remove());
    const forB = (await b.client.v1.announcements.list()).find((x) => x.id === ann.id);
    assert.deepEqual(
      forB.reactions.map((r) => [r.name, r.count, r.me]),
      [["👍", 1, false]],
    );

    await step("POST /api/v1/announcements/:id/dismiss", () => a.client.v1.announcements.$select(ann.id).dismiss());
    assert.ok(!(await a.client.v1.announcements.list()).some((x) => x.id === ann.id), "dismissed: gone from A's list");
    const withDismissed = await a.client.v1.announcements.list({ withDismissed: true });
    assert.equal(withDismissed.find((x) => x.id === ann.id)?.read, true, "with_dismissed shows it as read");
    assert.ok(
      (await b.client.v1.announcements.list()).some((x) => x.id === ann.id),
      "B has not dismissed it",
    );
  });

  // ---- follow suggestions ----

  test("suggestions: a discoverable account B follows is suggested to A; removing it keeps it away", async () => {
    const { a, b, c } = s;
    need(s.aFollowsB && a && b && c, "A follows B");
    await step("PATCH update_credentials (C discoverable)", () => c.client.v1.accounts.updateCredentials({ discoverable: true }));
    await step("B follows C", () => b.client.v1.accounts.$select(c.id).follow());

    const list = await step("GET /api/v2/suggestions", () => a.client.v2.suggestions.list());
    const sug = list.find((x) => x.account.id === c.id);
    assert.ok(sug, `C is suggested to A (got ${JSON.stringify(list.map((x) => x.account.acct))})`);
    assert.ok(sug.sources.includes("friends_of_friends"), "because someone A follows follows C");
    assert.ok(!list.some((x) => x.account.id === b.id), "B, already followed, is not suggested");
    assert.ok(!list.some((x) => x.account.id === a.id), "never A itself");

    await step("DELETE /api/v1/suggestions/:id", () => a.client.v1.suggestions.$select(c.id).remove());
    const again = await a.client.v2.suggestions.list();
    assert.ok(!again.some((x) => x.account.id === c.id), "C is not suggested again");
  });

  // ---- profile ----

  test("DELETE /api/v1/profile/avatar brings the default picture back", async () => {
    const a = need(s.a, "sign-up");
    const initial = await a.client.v1.accounts.verifyCredentials();
    const withAvatar = await step("PATCH update_credentials (avatar)", () =>
      a.client.v1.accounts.updateCredentials({ avatar: new Blob([PNG], { type: "image/png" }) }),
    );
    assert.notEqual(withAvatar.avatar, initial.avatar, "an uploaded avatar replaces the default");
    const picture = await fetch(withAvatar.avatar);
    assert.equal(picture.status, 200, "the avatar is served");
    await picture.arrayBuffer();

    const removed = await step("DELETE /api/v1/profile/avatar", () => a.client.v1.profile.avatar.remove());
    assert.equal(removed.id, a.id);
    assert.equal(removed.avatar, initial.avatar, "back to the default picture");
    assert.ok(removed.source, "the answer is the CredentialAccount");
    const after = await a.client.v1.accounts.$select(a.id).fetch();
    assert.equal(after.avatar, initial.avatar, "others see the default too");
    const gone = await fetch(withAvatar.avatar);
    await gone.arrayBuffer();
    assert.equal(gone.status, 404, "the old picture is no longer served");
  });

  test("GET /api/v1/accounts/:id/identity_proofs answers an empty list", async () => {
    const { a, b } = s;
    need(a && b, "sign-up");
    const proofs = await step("GET /api/v1/accounts/:id/identity_proofs", () => a.client.v1.accounts.$select(b.id).identityProofs.list());
    assert.deepEqual(proofs, []);
  });

  // ---- quote posts ----

  test("quote posts: B quotes A's post through masto; A is notified, lists the quote and revokes it", async () => {
    const { a, b } = s;
    need(a && b, "sign-up");
    const original = await step("POST /api/v1/statuses (A)", () => a.client.v1.statuses.create({ status: `quotable ${nonce}`, visibility: "public" }));
    assert.deepEqual(original.quoteApproval?.automatic, ["public"], "a public post: anyone may quote it");
    // masto sends unknown parameters as they are, snake_cased: quoted_status_id.
    const quoting = await step("POST /api/v1/statuses (B quotes A)", () =>
      b.client.v1.statuses.create({ status: `so true ${nonce}`, quotedStatusId: original.id }),
    );
    assert.equal(quoting.quote?.state, "accepted", "a local quote of a public post is accepted at once");
    assert.equal(quoting.quote?.quotedStatus?.id, original.id);
    const seen = await step("GET /api/v1/statuses/:id (A)", () => a.client.v1.statuses.$select(original.id).fetch());
    assert.equal(seen.quotesCount, 1);
    const notified = await eventually("A's quote notification", async () => {
      const list = await a.client.v1.notifications.list({ types: ["quote"] });
      return list.find((n) => n.status?.id === quoting.id);
    });
    assert.equal(notified.account.id, b.id);
    const quotes = await fetch(`${server.url}/api/v1/statuses/${original.id}/quotes`, { headers: { authorization: `Bearer ${a.token}` } });
    assert.equal(quotes.status, 200);
    assert.deepEqual(
      (await quotes.json()).map((q) => q.id),
      [quoting.id],
    );
    const revoked = await fetch(`${server.url}/api/v1/statuses/${original.id}/quotes/${quoting.id}/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.token}` },
    });
    assert.equal(revoked.status, 200, await revoked.clone().text());
    const after = await step("GET /api/v1/statuses/:id (B's quote)", () => b.client.v1.statuses.$select(quoting.id).fetch());
    assert.equal(after.quote?.state, "revoked");
    assert.equal(after.quote?.quotedStatus ?? null, null, "a revoked quote no longer shows the post");
  });

  // ---- trends ----

  test("trends: GET /api/v1/trends/tags through masto", async () => {
    const a = need(s.a, "sign-up");
    const tags = await step("GET /api/v1/trends/tags", () => a.client.v1.trends.tags.list({ limit: 5 }));
    assert.ok(Array.isArray(tags));
    assert.ok(tags.length <= 5, "limit is honoured");
    for (const tag of tags) {
      assert.equal(typeof tag.name, "string");
      assert.match(tag.url, /^https?:\/\//);
      assert.ok(Array.isArray(tag.history), "history");
      for (const h of tag.history) {
        assert.match(h.day, /^\d+$/, "history day is a string of digits");
        assert.match(h.uses, /^\d+$/);
        assert.match(h.accounts, /^\d+$/);
      }
    }
  });
  // ---- Mastodon 4.6 through masto's resources ----

  test("Mastodon 4.6: the instance announces API version 10; the annual report's state outside December; generate does nothing", async () => {
    const a = need(s.a, "sign-up");
    const instance = await step("GET /api/v2/instance", () => a.client.v2.instance.fetch());
    assert.equal(instance.apiVersions?.mastodon, 10);
    const year = String(new Date().getUTCFullYear());
    const inDecember = new Date().getUTCMonth() === 11 && new Date().getUTCDate() >= 10;
    const { state } = await step("GET /api/v1/annual_reports/:year/state", () => a.client.v1.annualReports.$select(year).state.fetch());
    assert.ok(["eligible", "ineligible"].includes(state), state);
    if (!inDecember) {
      assert.equal(state, "ineligible", "outside 10-31 December no report is offered");
      await step("POST /api/v1/annual_reports/:year/generate", () => a.client.v1.annualReports.$select(year).generate());
    }
    const reports = await step("GET /api/v1/annual_reports", () => a.client.v1.annualReports.list());
    assert.deepEqual(reports.annualReports, []);
  });

  test("Mastodon 4.6: A curates a collection featuring B; anyone fetches it; A lists, adds to and removes from it", async () => {
    const { a, b, c } = s;
    need(a && b && c, "sign-up");
    for (const u of [b, c]) await step("PATCH update_credentials (discoverable)", () => u.client.v1.accounts.updateCredentials({ discoverable: true }));
    const { collection } = await step("POST /api/v1/collections", () =>
      a.client.v1.collections.create({ name: `Friends ${nonce}`, description: "good people", tagName: "friends", accountIds: [b.id] }),
    );
    assert.equal(collection.itemCount, 1);
    assert.equal(collection.tag?.name, "friends");
    const shown = await step("GET /api/v1/collections/:id", () => rest().v1.collections.$select(collection.id).fetch());
    assert.deepEqual(
      shown.accounts.map((x) => x.id),
      [a.id, b.id],
    );
    const listed = await step("GET /api/v1/accounts/:id/collections", () => c.client.v1.accounts.$select(a.id).collections.list());
    assert.deepEqual(
      listed.collections.map((x) => x.id),
      [collection.id],
    );
    const { collectionItem } = await step("POST /api/v1/collections/:id/items", () =>
      a.client.v1.collections.$select(collection.id).items.create({ accountId: c.id }),
    );
    assert.equal(collectionItem.accountId, c.id);
    const featured = await step("GET /api/v1/accounts/:id/in_collections", () => c.client.v1.accounts.$select(c.id).inCollections.list());
    assert.deepEqual(
      featured.collections.map((x) => x.id),
      [collection.id],
    );
    await step("DELETE /api/v1/collections/:id/items/:item_id", () => a.client.v1.collections.$select(collection.id).items.$select(collectionItem.id).remove());
    const updated = await step("PATCH /api/v1/collections/:id", () => a.client.v1.collections.$select(collection.id).update({ name: `Best friends ${nonce}` }));
    assert.equal(updated.collection.name, `Best friends ${nonce}`);
    assert.equal(updated.collection.itemCount, 1);
    await step("DELETE /api/v1/collections/:id", () => a.client.v1.collections.$select(collection.id).remove());
  });

  test("Mastodon 4.6: the Profile endpoints show the raw bio and change it", async () => {
    const d = need(s.d, "sign-up");
    const before = await step("GET /api/v1/profile", () => d.client.v1.profile.fetch());
    assert.equal(before.id, d.id);
    assert.equal(before.avatar, null, "no avatar set");
    const after = await step("PATCH /api/v1/profile", () => d.client.v1.profile.update({ note: "hello <world> #tern", displayName: "Dee" }));
    assert.equal(after.note, "hello <world> #tern");
    assert.equal(after.displayName, "Dee");
  });
});
