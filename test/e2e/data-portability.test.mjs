// Data portability across instances (issue 11: "Export then import into a fresh instance brings back every CSV
// kind"): two Terns under `wrangler dev` on 127.0.0.1, federating over loopback. On Tern A, alice follows, lists,
// blocks, mutes, blocks a domain and bookmarks; every CSV kind is exported with her token. On Tern B, a fresh user
// imports each importable kind (followers is export-only, as in Mastodon) through POST /api/tern/imports, which
// resolves A's accounts by WebFinger and A's statuses by fetching their URIs, and follows A's users through a Follow
// that A accepts. B's API then shows the same relations, and B's exports equal A's: A writes its own accounts as
// `user@<A's host>`, which is exactly how B names them.
import "../support/polyfills.mjs";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { poll, signUp } from "../federation/tern-api.mjs";
import { startTern } from "../support/server.mjs";

/** Cap of every wait (a failure bound, not a pace): two Terns share a busy 2-core machine. */
const WAIT_MS = 90_000;

// Export file name → import type (Mastodon's names for both).
const IMPORTS = {
  follows: "following",
  blocks: "blocking",
  mutes: "muting",
  domain_blocks: "domain_blocking",
  bookmarks: "bookmarks",
  lists: "lists",
};
const KINDS = [...Object.keys(IMPORTS), "followers"];

async function exportCsv(base, token, kind) {
  const res = await fetch(`${base}/api/tern/exports/${kind}.csv`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `GET /api/tern/exports/${kind}.csv: ${text.slice(0, 300)}`);
  assert.match(res.headers.get("content-type") ?? "", /text\/csv/);
  return text;
}

/** Header (when the format has one) then the rows sorted: an import applies rows in file order, newest-first exports flip. */
function normal(text) {
  const lines = text.split("\n").filter(Boolean);
  const head = /^Account address,/.test(lines[0] ?? "") ? [lines.shift()] : [];
  return [...head, ...lines.sort()];
}

async function upload(base, token, type, text, filename) {
  const form = new FormData();
  form.append("type", type);
  form.append("mode", "merge");
  form.append("data", new File([text], filename, { type: "text/csv" }));
  const res = await fetch(`${base}/api/tern/imports`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    body: form,
    signal: AbortSignal.timeout(20_000),
  });
  const body = await res.text();
  assert.equal(res.status, 202, `POST /api/tern/imports (${type}): ${body.slice(0, 300)}`);
  return JSON.parse(body);
}

describe("data portability: export from one Tern, import into a fresh second Tern", () => {
  let a; // Tern A
  let b; // Tern B
  let usersA;
  let alice;
  let zoe; // the fresh user on B
  const exported = {}; // kind → CSV text from A
  const statusUris = []; // the two bookmarked statuses' URIs
  const s = {}; // shared state between steps

  before(async () => {
    [a, b] = await Promise.all([startTern({ vars: { ALLOW_LOOPBACK_FETCH: "true" } }), startTern({ vars: { ALLOW_LOOPBACK_FETCH: "true" } })]);
    assert.notEqual(a.port, b.port);
    assert.notEqual(a.persistTo, b.persistTo);
    // Five: Tern allows five sign-ups per IP per 30 minutes (Mastodon's figure), loopback included.
    usersA = await signUp(a.url, ["alice", "bob", "carol", "dave", "eve"]);
    alice = usersA.alice;
    zoe = (await signUp(b.url, ["zoe"])).zoe;
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const hostA = () => `127.0.0.1:${a.port}`;
  const handle = (name) => `${name}@${hostA()}`;
  const need = (key) => {
    if (!s[key]) throw new Error(`blocked by an earlier step (${key})`);
    return s[key];
  };

  test("on A: alice follows, lists, blocks, mutes, blocks a domain and bookmarks", async () => {
    const u = usersA;
    await alice.api.post(`/api/v1/accounts/${u.bob.id}/follow`, { reblogs: false, notify: true });
    await alice.api.post(`/api/v1/accounts/${u.carol.id}/follow`);
    await u.bob.api.post(`/api/v1/accounts/${alice.id}/follow`); // a follower, for followers.csv
    const list = await alice.api.post("/api/v1/lists", { title: "Friends, close" }); // a comma: quoted in the CSV
    await alice.api.post(`/api/v1/lists/${list.id}/accounts`, { account_ids: [u.bob.id, u.carol.id] });
    await alice.api.post(`/api/v1/accounts/${u.dave.id}/block`);
    await alice.api.post(`/api/v1/accounts/${u.eve.id}/mute`, { notifications: true });
    await alice.api.post(`/api/v1/accounts/${u.carol.id}/mute`, { notifications: false }); // followed and muted
    await alice.api.post("/api/v1/domain_blocks", { domain: "spam.example" });
    for (const who of ["bob", "carol"]) {
      const st = await u[who].api.post("/api/v1/statuses", { status: `a status of ${who} worth keeping`, visibility: "public" });
      await alice.api.post(`/api/v1/statuses/${st.id}/bookmark`);
      statusUris.push(st.uri);
    }
    const rel = await alice.api.get("/api/v1/accounts/relationships", { "id[]": [u.bob.id, u.carol.id, u.dave.id, u.eve.id] });
    assert.deepEqual(
      rel.map((r) => [r.following, r.showing_reblogs, r.notifying, r.blocking, r.muting, r.muting_notifications]),
      [
        [true, false, true, false, false, false],
        [true, true, false, false, true, false],
        [false, false, false, true, false, false],
        [false, false, false, false, true, true],
      ],
    );
    s.populated = true;
  });

  test("on A: every CSV kind is exported with alice's token", async () => {
    need("populated");
    for (const kind of KINDS) exported[kind] = await exportCsv(a.url, alice.token, kind);
    const rows = (kind) => normal(exported[kind]);
    assert.deepEqual(rows("follows"), [
      "Account address,Show boosts,Notify on new posts,Languages",
      `${handle("bob")},false,true,`,
      `${handle("carol")},true,false,`,
    ]);
    assert.deepEqual(rows("followers"), [handle("bob")]);
    assert.deepEqual(rows("lists"), [`"Friends, close",${handle("bob")}`, `"Friends, close",${handle("carol")}`]);
    assert.deepEqual(rows("blocks"), [handle("dave")]);
    assert.deepEqual(rows("mutes"), ["Account address,Hide notifications", `${handle("carol")},false`, `${handle("eve")},true`]);
    assert.deepEqual(rows("domain_blocks"), ["spam.example"]);
    assert.deepEqual(rows("bookmarks"), [...statusUris].sort());
    s.exported = true;
  });

  test("on B: a fresh user imports every importable kind and each import finishes", async () => {
    need("exported");
    const results = {};
    for (const [kind, type] of Object.entries(IMPORTS)) {
      const imp = await upload(b.url, zoe.token, type, exported[kind], `${kind}.csv`);
      assert.equal(imp.type, type);
      const done = await poll(
        `the ${type} import on B to finish`,
        async () => {
          const r = await zoe.api.get(`/api/tern/imports/${imp.id}`);
          return r.state === "finished" ? r : null;
        },
        { timeoutMs: WAIT_MS },
      );
      results[type] = [done.total_items, done.processed_items, done.imported_items, done.failed_items];
    }
    assert.deepEqual(results, {
      following: [2, 2, 2, 0],
      blocking: [1, 1, 1, 0],
      muting: [2, 2, 2, 0],
      domain_blocking: [1, 1, 1, 0],
      bookmarks: [2, 2, 2, 0],
      lists: [2, 2, 2, 0],
    });
    s.imported = true;
  });

  test("on B: the follows are A's accounts, accepted by A, with show_reblogs / notify kept", async () => {
    need("imported");
    const ids = {};
    for (const name of ["bob", "carol", "dave", "eve"]) {
      const acc = await zoe.api.get("/api/v1/accounts/lookup", { acct: handle(name) });
      assert.equal(acc.acct, handle(name), "a remote account of A, named with A's host");
      ids[name] = acc.id;
    }
    s.ids = ids;
    // A accepts each Follow (its users are unlocked) and B turns the requests into follows on the Accept.
    const rel = await poll(
      "A to accept the imported follows",
      async () => {
        const r = await zoe.api.get("/api/v1/accounts/relationships", { "id[]": [ids.bob, ids.carol] });
        return r.every((x) => x.following) ? r : null;
      },
      { timeoutMs: WAIT_MS },
    );
    assert.deepEqual(
      rel.map((r) => [r.following, r.requested, r.showing_reblogs, r.notifying]),
      [
        [true, false, false, true],
        [true, false, true, false],
      ],
    );
    const following = await zoe.api.get(`/api/v1/accounts/${zoe.id}/following`);
    assert.deepEqual(following.map((x) => x.acct).sort(), [handle("bob"), handle("carol")]);
    // A sees zoe as a follower of its users: the Follow reached A and was accepted there.
    const followersOfBob = await usersA.bob.api.get(`/api/v1/accounts/${usersA.bob.id}/followers`);
    assert.ok(
      followersOfBob.some((x) => x.acct === `zoe@127.0.0.1:${b.port}`),
      `bob's followers on A: ${followersOfBob.map((x) => x.acct)}`,
    );
    s.followed = true;
  });

  test("on B: the block, the mutes (hide notifications kept) and the domain block", async () => {
    need("imported");
    const ids = need("ids");
    const blocks = await zoe.api.get("/api/v1/blocks");
    assert.deepEqual(
      blocks.map((x) => x.acct),
      [handle("dave")],
    );
    const mutes = await zoe.api.get("/api/v1/mutes");
    assert.deepEqual(mutes.map((x) => x.acct).sort(), [handle("carol"), handle("eve")]);
    const rel = await zoe.api.get("/api/v1/accounts/relationships", { "id[]": [ids.carol, ids.dave, ids.eve] });
    assert.deepEqual(
      rel.map((r) => [r.blocking, r.muting, r.muting_notifications]),
      [
        [false, true, false],
        [true, false, false],
        [false, true, true],
      ],
    );
    assert.deepEqual(await zoe.api.get("/api/v1/domain_blocks"), ["spam.example"]);
  });

  test("on B: the bookmarks are A's statuses (the same URIs)", async () => {
    need("imported");
    const bookmarks = await zoe.api.get("/api/v1/bookmarks");
    assert.deepEqual(bookmarks.map((x) => x.uri).sort(), [...statusUris].sort());
    for (const st of bookmarks) {
      assert.equal(st.bookmarked, true);
      assert.match(st.account.acct, new RegExp(`^(bob|carol)@127\\.0\\.0\\.1:${a.port}$`));
    }
  });

  test("on B: the list with its members", async () => {
    need("imported");
    const lists = await zoe.api.get("/api/v1/lists");
    assert.deepEqual(
      lists.map((l) => l.title),
      ["Friends, close"],
    );
    const members = await zoe.api.get(`/api/v1/lists/${lists[0].id}/accounts`);
    assert.deepEqual(members.map((x) => x.acct).sort(), [handle("bob"), handle("carol")]);
  });

  test("B's exports equal A's", async () => {
    need("followed"); // follows.csv lists accepted follows only
    for (const kind of Object.keys(IMPORTS)) {
      const fromB = await exportCsv(b.url, zoe.token, kind);
      assert.deepEqual(normal(fromB), normal(exported[kind]), `${kind}.csv`);
    }
    // followers.csv is export-only: B's fresh user has nobody following her.
    assert.equal(await exportCsv(b.url, zoe.token, "followers"), "");
  });
});
