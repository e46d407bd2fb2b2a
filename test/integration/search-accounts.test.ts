// Account search (issue 12 point 2): username prefixes from an index range, display-name word prefixes from the FTS5
// index of migrations/0030_account_search.sql (kept by triggers on `accounts`), never a scan of `accounts`.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { accountSearchQuery, type SearchOptions } from "../../src/queries/statuses/search";
import { cfg, db, makeUser } from "./helpers";

const pad = (id: string) => id.padStart(20, "0");
const names = (res: { body: { accounts: { username: string }[] } }) => res.body.accounts.map((a) => a.username);

async function setName(id: string, name: string) {
  await env.DB.prepare("UPDATE accounts SET display_name = ? WHERE id = ?").bind(name, pad(id)).run();
}

/** A remote account as federation stores one (the triggers index its name whatever wrote it). */
async function remote(username: string, domain: string, displayName: string, followers = 0) {
  const id = snowflake();
  await env.DB.prepare(
    "INSERT INTO accounts (id, username, domain, display_name, uri, followers_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(pad(id), username, domain, displayName, `https://${domain}/users/${username}`, followers, Date.now(), Date.now())
    .run();
  return id;
}

async function plan(q: string, o: Partial<SearchOptions>) {
  const query = accountSearchQuery(db(), cfg(), q, { viewerId: null, limit: 20, offset: 0, following: false, accountId: null, ...o });
  expect(query).not.toBeNull();
  const { sql, params } = query!.toSQL();
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

describe("account search by prefix", () => {
  it("finds username prefixes, display-name prefixes and later words, without diacritics, exact username first", async () => {
    const me = await makeUser();
    const fox = await makeUser("fox");
    const foxtrot = await makeUser("foxtrot");
    const other = await makeUser("renard");
    await setName(other.id, "Zoë Ärger-Foxglove");
    await setName(foxtrot.id, "Foxtrot Uniform");
    // More followers than the exact match: the exact username still comes first.
    await env.DB.prepare("UPDATE accounts SET followers_count = 500 WHERE id = ?").bind(pad(foxtrot.id)).run();
    await remote("foxy", "remote.example", "Remote Fox", 1000);

    const res = await me.api.get("/api/v2/search?q=fox&type=accounts");
    expect(res.status).toBe(200);
    // Exact username, then local before remote, then followers.
    expect(names(res)).toEqual(["fox", "foxtrot", "renard", "foxy"]);
    expect(res.body.accounts[0].id).toBe(fox.id);

    expect(names(await me.api.get("/api/v2/search?q=zoe&type=accounts"))).toEqual(["renard"]);
    expect(names(await me.api.get("/api/v2/search?q=ARG&type=accounts"))).toEqual(["renard"]);
    expect(names(await me.api.get("/api/v2/search?q=foxgl&type=accounts"))).toEqual(["renard"]);
    expect(names(await me.api.get("/api/v2/search?q=uniform&type=accounts"))).toEqual(["foxtrot"]);
    expect(names(await me.api.get("/api/v2/search?q=foxtrot%20uni&type=accounts"))).toEqual(["foxtrot"]);
    expect(names(await me.api.get("/api/v2/search?q=%40foxt&type=accounts"))).toEqual(["foxtrot"]);
    expect(names(await me.api.get("/api/v2/search?q=rem&type=accounts"))).toEqual(["foxy"]);
    // A word's middle is not a prefix.
    expect(names(await me.api.get("/api/v2/search?q=niform&type=accounts"))).toEqual([]);

    // A changed name is found by its new words only; a removed account by none.
    await setName(other.id, "Vulpes");
    expect(names(await me.api.get("/api/v2/search?q=zoe&type=accounts"))).toEqual([]);
    expect(names(await me.api.get("/api/v2/search?q=vulp&type=accounts"))).toEqual(["renard"]);
    await env.DB.prepare("DELETE FROM accounts WHERE id = ?").bind(pad(other.id)).run();
    expect(names(await me.api.get("/api/v2/search?q=vulp&type=accounts"))).toEqual([]);
    const idx = await env.DB.prepare("SELECT count(*) AS n FROM account_search WHERE id = CAST(? AS INTEGER)").bind(pad(other.id)).first<{ n: number }>();
    expect(idx?.n).toBe(0);
  });

  it("following=true searches the accounts the viewer follows, by username and by display name", async () => {
    const me = await makeUser();
    const a = await makeUser("kestrel_one");
    const b = await makeUser("plain_b");
    await makeUser("kestrel_two");
    await setName(b.id, "Kestrel Bee");
    for (const t of [a, b])
      await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)")
        .bind(pad(snowflake()), pad(me.id), pad(t.id), 0)
        .run();
    expect(names(await me.api.get("/api/v2/search?q=kestrel&type=accounts&following=true")).sort()).toEqual(["kestrel_one", "plain_b"]);
    // Followed accounts rank before the others.
    expect(names(await me.api.get("/api/v2/search?q=kestrel&type=accounts")).slice(2)).toEqual(["kestrel_two"]);
  });

  it("searches display names with FTS5 syntax in them, and queries made of it, safely (A16, A17)", async () => {
    const me = await makeUser();
    const weird = ['Quo"te *Star', "NEAR(a b) x", "col:umn -minus ^caret", "AND OR NOT", '"', "*", "NEAR("];
    const users = [];
    for (const [i, n] of weird.entries()) {
      const u = await makeUser(`weird${i}`);
      await setName(u.id, n);
      users.push(u);
    }
    const queries = [
      '"',
      '""',
      "*",
      'quo"te',
      'Quo"te *St',
      "NEAR(",
      "NEAR(a",
      "col:umn",
      "col:",
      "-minus",
      "^caret",
      "^",
      "AND",
      "OR NOT",
      "a OR b",
      "x*",
      "(",
      ")",
      "{display_name}: x",
      "\\",
      "quo\u0000te",
      "\u0000",
    ];
    for (const q of queries) {
      const res = await me.api.get(`/api/v2/search?q=${encodeURIComponent(q)}&type=accounts`);
      expect(res.status, q).toBe(200);
      const v1 = await me.api.get(`/api/v2/search?q=${encodeURIComponent(q)}`);
      expect(v1.status, q).toBe(200);
    }
    expect(names(await me.api.get(`/api/v2/search?q=${encodeURIComponent('Quo"te')}&type=accounts`))).toEqual(["weird0"]);
    expect(names(await me.api.get("/api/v2/search?q=near&type=accounts"))).toEqual(["weird1", "weird6"]);
    expect(names(await me.api.get("/api/v2/search?q=umn&type=accounts"))).toEqual(["weird2"]);
    expect(names(await me.api.get("/api/v2/search?q=minus&type=accounts"))).toEqual(["weird2"]);
    // FTS5's keywords are words like any other inside a quoted string.
    expect(names(await me.api.get("/api/v2/search?q=not&type=accounts"))).toEqual(["weird3"]);
  });

  it("reads candidates from index ranges: no scan of accounts, in one statement", async () => {
    const me = await makeUser();
    const text = (await plan("fox", { viewerId: me.id })).join("\n");
    expect(text).toMatch(/SEARCH ua USING (COVERING )?INDEX accounts_username_domain \(<expr>>\? AND <expr><\?\)/);
    expect(text).toMatch(/SCAN accounts_fts VIRTUAL TABLE INDEX/);
    expect(text).toMatch(/SEARCH accounts USING INDEX sqlite_autoindex_accounts_1 \(id=\?\)/);
    expect(text).not.toMatch(/SCAN (accounts|ua)\b/);
    const following = (await plan("fox", { viewerId: me.id, following: true })).join("\n");
    expect(following).toMatch(/SEARCH fo USING (COVERING )?INDEX follows_pair \(account_id=\?\)/);
    expect(following).not.toMatch(/SCAN (accounts|fa|fo)\b/);
    // Text without a word for FTS5: the username range alone.
    const punct = (await plan("_", { viewerId: me.id })).join("\n");
    expect(punct).not.toMatch(/accounts_fts/);
    expect(punct).not.toMatch(/SCAN (accounts|ua)\b/);
  });
});
