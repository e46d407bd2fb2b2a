// The root app's router (src/lib/http/prefix-router.ts) builds Hono's trie per path prefix: over every route Tern has, it must
// answer every path as one trie of all routes does (the same handlers, in the same order, with the same parameters).
import { TrieRouter } from "hono/router/trie-router";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app";
import { PrefixRouter } from "../../src/lib/http/prefix-router";

const routes = buildApp().routes.map((r, i) => ({ method: r.method, path: r.path, id: i }));
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** A path a route pattern matches: each parameter and wildcard filled with a sample value (two for an optional one). */
function samples(pattern: string): string[] {
  let out = [""];
  const parts = pattern.split("/").slice(1);
  for (const part of parts) {
    let values: string[];
    if (part === "*") values = ["a", "a/b"];
    else if (part.includes("{@")) values = ["@alice", "@bob@remote.example"];
    else if (part.includes("{")) values = ["follows.csv", "123"];
    else if (part.endsWith("?")) values = ["x", ""];
    else if (part.startsWith(":")) values = ["123", "alice"];
    else if (part.includes("*")) values = [part.replace("*", "x")];
    else values = [part];
    out = out.flatMap((p) => values.map((v) => (v === "" ? p : `${p}/${v}`)));
  }
  return out.map((p) => p || "/");
}

/** Paths near a route's: one more segment, one fixed segment changed, a name in a parameter's place. */
function near(path: string): string[] {
  const segs = path.split("/").slice(1);
  const out = [`${path}/more`, `${path}/x/y/z`, path.replace(/\/[^/]*$/, "") || "/"];
  for (let i = 0; i < segs.length; i++) {
    const changed = [...segs];
    changed[i] = "zzz";
    out.push(`/${changed.join("/")}`);
    changed[i] = "statuses";
    out.push(`/${changed.join("/")}`);
  }
  return out;
}

const EXTRA = [
  "/",
  "/x",
  "/api",
  "/api/v1",
  "/api/v2",
  "/@alice",
  "/@alice/123",
  "/@alice/123/x",
  "/users/alice",
  "/users/alice/inbox",
  "/users/alice/statuses/123",
  "/inbox",
  "/.well-known/webfinger",
  "/.well-known/nodeinfo",
  "/nodeinfo/2.0",
  "/oauth/authorize",
  "/api/v1/accounts/verify_credentials",
  "/api/v1/accounts/123",
  "/api/v1/accounts/123/statuses",
  "/api/v1/timelines/home",
  "/api/v1/timelines/tag/tern",
  "/api/v1/notifications/requests",
  "/api/v1/notifications/123",
  "/api/v1/statuses/123/context",
  "/media/abc/def.png",
  "/admin",
  "/admin/reports/1",
  "/settings/exports/follows.csv",
];

const answer = (r: { match: TrieRouter<number>["match"] }, method: string, path: string) => r.match(method, path)[0].map(([id, params]) => [id, { ...params }]);

describe("PrefixRouter", () => {
  it("answers every path as one trie of all routes does", () => {
    const trie = new TrieRouter<number>();
    const prefix = new PrefixRouter<number>();
    for (const r of routes) {
      trie.add(r.method, r.path, r.id);
      prefix.add(r.method, r.path, r.id);
    }
    const paths = new Set(EXTRA);
    for (const r of routes) for (const p of samples(r.path)) for (const q of [p, ...near(p)]) paths.add(q);
    expect(routes.length).toBeGreaterThan(300);
    expect(paths.size).toBeGreaterThan(1000);
    const reached = new Set<number>();
    for (const path of paths) {
      for (const method of METHODS) {
        const want = answer(trie, method, path);
        expect(answer(prefix, method, path), `${method} ${path}`).toEqual(want);
        for (const [id] of want) reached.add(id as number);
      }
    }
    // The sample paths reach (nearly) every route, so the comparison covered them.
    expect(reached.size / routes.length).toBeGreaterThan(0.95);
  });

  it("keeps the number of tries bounded by the routes, not by the ids and names in paths", () => {
    const prefix = new PrefixRouter<number>();
    for (const r of routes) prefix.add(r.method, r.path, r.id);
    prefix.match("GET", "/api/v1/accounts/1");
    const tries = prefix.trieCount;
    for (let i = 0; i < 500; i++) {
      prefix.match("GET", `/api/v1/accounts/${i}`);
      prefix.match("GET", `/users/user${i}/statuses/${i}`);
      prefix.match("GET", `/@user${i}/${i}`);
      prefix.match("GET", `/random${i}/x`);
    }
    expect(prefix.trieCount - tries).toBeLessThanOrEqual(4);
  });

  it("builds no more tries than the routes' prefixes allow, whatever names are strung together", () => {
    const prefix = new PrefixRouter<number>();
    for (const r of routes) prefix.add(r.method, r.path, r.id);
    // Every fixed name any route has in its first three segments, tried at every one of the three places.
    const names = new Set<string>();
    for (const r of routes) for (const s of r.path.split("/").slice(1, 4)) if (!/[:*{}?]/.test(s)) names.add(s);
    const list = [...names];
    for (const a of list) for (const b of list) for (const c of list.slice(0, 40)) prefix.match("GET", `/${a}/${b}/${c}/x`);
    // Each key is a node of the tree of the routes' leading fixed names, or one followed by "any": at most twice as
    // many as the routes' distinct leading prefixes.
    const prefixes = new Set<string>();
    for (const r of routes) {
      const segs = r.path.split("/").slice(1, 4);
      for (let i = 1; i <= segs.length && !/[:*{}?]/.test(segs[i - 1]!); i++) prefixes.add(segs.slice(0, i).join("/"));
    }
    expect(list.length ** 2 * 40).toBeGreaterThan(50_000);
    expect(prefix.trieCount).toBeLessThanOrEqual(2 * (prefixes.size + 1));
  });

  it("sees a route added after matching began", () => {
    const prefix = new PrefixRouter<string>();
    prefix.add("GET", "/a/b", "first");
    expect(prefix.match("GET", "/a/c")[0]).toEqual([]);
    prefix.add("GET", "/a/c", "later");
    expect(prefix.match("GET", "/a/c")[0].map(([h]) => h)).toEqual(["later"]);
  });
});
