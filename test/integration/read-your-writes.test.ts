// Reads near the user (issue 12, point 6): every request's D1 access is one D1 session (src/db/session.ts). Local D1
// (miniflare) has no replicas, but workerd's binding implements the Sessions API itself: `withSession` makes a
// session that sends its constraint or bookmark with every query and keeps the newest bookmark D1 answers (local D1
// answers its storage's real bookmark, 8-8-8-32 hex). So what runs here is the real session code path, the
// bookmarks D1 hands out, the header and cookie that carry them, and the choice of where each request starts (seen
// by wrapping the binding's `withSession`). What a replica would serve cannot be observed locally.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseBookmark, startFor } from "../../src/db/session";
import worker from "../../src/index";
import { makeUser, ORIGIN } from "./helpers";
import { Jar, web } from "./oauth-helpers";
import { signedIn } from "./settings-helpers";

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
const FUTURE = "ffffffff-ffffffff-ffffffff-ffffffffffffffffffffffffffffffff";

/** Calls the Worker with a binding whose `withSession` records where each session started. */
async function traced(path: string, init: RequestInit = {}) {
  const starts: string[] = [];
  const DB = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "withSession") {
        return (s: string) => {
          starts.push(s);
          return target.withSession(s);
        };
      }
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${ORIGIN}${path}`, init), { ...env, DB } as typeof env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { res, text, starts };
}

const bookmarkOf = (h: Headers) => h.get("x-d1-bookmark");
const roundTrips = (h: Headers) => Number(/d1;desc="round trips";dur=(\d+)/.exec(h.get("server-timing") ?? "")?.[1] ?? Number.NaN);

describe("read your writes", () => {
  it("a client that posts reads its post at once: home, the status, verify_credentials (no header, no cookie)", async () => {
    const me = await makeUser();
    const before = await me.api.get("/api/v1/accounts/verify_credentials");
    expect(before.status).toBe(200);
    const count = before.body.statuses_count as number;

    const posted = await me.api.post("/api/v1/statuses", { status: "Read me back" });
    expect(posted.status).toBe(200);
    const written = bookmarkOf(posted.headers);
    expect(written).toMatch(BOOKMARK);

    const home = await me.api.get("/api/v1/timelines/home");
    expect(home.status).toBe(200);
    expect(home.body.map((s: { id: string }) => s.id)).toContain(posted.body.id);
    const status = await me.api.get(`/api/v1/statuses/${posted.body.id}`);
    expect(status.status).toBe(200);
    expect(status.body.content).toContain("Read me back");
    const verify = await me.api.get("/api/v1/accounts/verify_credentials");
    expect(verify.body.statuses_count).toBe(count + 1);
    // Every later answer carries a bookmark at least as new as the write's.
    for (const r of [home, status, verify]) {
      expect(bookmarkOf(r.headers)).toMatch(BOOKMARK);
      expect(bookmarkOf(r.headers)! >= written!).toBe(true);
    }
  });

  it("returns the bookmark in x-d1-bookmark, exposed to browsers, and accepts it back", async () => {
    const me = await makeUser();
    const posted = await me.api.post("/api/v1/statuses", { status: "With a bookmark" });
    const b = bookmarkOf(posted.headers)!;
    expect(b).toMatch(BOOKMARK);

    const auth = { authorization: `Bearer ${me.token}` };
    const back = await traced("/api/v1/timelines/home", { headers: { ...auth, "x-d1-bookmark": b } });
    expect(back.res.status).toBe(200);
    expect(JSON.parse(back.text).map((s: { id: string }) => s.id)).toContain(posted.body.id);
    // A bookmark this isolate can vouch for lets the session start on a replica, at a bookmark D1 gave this isolate.
    expect(back.starts).toHaveLength(1);
    expect(back.starts[0]).toMatch(BOOKMARK);
    expect(back.starts[0]! >= b).toBe(true);
    expect(bookmarkOf(back.res.headers)! >= b).toBe(true);
    // Uppercase is the same bookmark.
    const upper = await traced("/api/v1/timelines/home", { headers: { ...auth, "x-d1-bookmark": b.toUpperCase() } });
    expect(upper.starts[0]).toMatch(BOOKMARK);

    const preflight = await traced("/api/v1/timelines/home", {
      method: "OPTIONS",
      headers: { origin: "https://client.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization,x-d1-bookmark" },
    });
    expect(preflight.res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-d1-bookmark");
    const cors = await traced("/api/v1/timelines/public", { headers: { origin: "https://client.example" } });
    expect(cors.res.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("x-d1-bookmark");
  });

  it("ignores a malformed or hostile bookmark: never a 5xx, never echoed, never handed to D1", async () => {
    const me = await makeUser();
    const auth = { authorization: `Bearer ${me.token}` };
    const hostile = [
      "garbage",
      "",
      " ",
      "first-unconstrained",
      "first-primary",
      "00000000-00000000-00000000-0000000000000000000000000000000g",
      `${FUTURE}0`,
      "'; DROP TABLE statuses; --",
      "0".repeat(5000),
      "%00%0d%0a",
    ];
    for (const h of hostile) {
      for (const path of ["/api/v1/accounts/verify_credentials", "/api/v1/timelines/public", "/api/v2/instance", `/users/${me.username}`]) {
        const accept = path.startsWith("/users/") ? "application/activity+json" : "application/json";
        const r = await traced(path, { headers: { ...(path.includes("verify") ? auth : {}), accept, "x-d1-bookmark": h } });
        expect(r.res.status, `${path} with ${JSON.stringify(h.slice(0, 40))}`).toBe(200);
        for (const s of r.starts) expect(s === "first-primary" || s === "first-unconstrained" || BOOKMARK.test(s)).toBe(true);
        const out = bookmarkOf(r.res.headers);
        if (out !== null) expect(out).toMatch(BOOKMARK);
        expect(out).not.toBe(h);
      }
    }
    // Well-formed but newer than anything D1 gave this isolate (another isolate's write, or forged): the session
    // starts on the primary, which is as new as any real bookmark, and the forged value goes nowhere.
    const future = await traced("/api/v1/accounts/verify_credentials", { headers: { ...auth, "x-d1-bookmark": FUTURE } });
    expect(future.res.status).toBe(200);
    expect(future.starts).toEqual(["first-primary"]);
    expect(bookmarkOf(future.res.headers)).toMatch(BOOKMARK);
    expect(bookmarkOf(future.res.headers)).not.toBe(FUTURE);
    // Well-formed and old (or forged with a made-up tail): not handed on either; the session starts at a bookmark
    // D1 gave this isolate that is at least as new.
    const OLD = "00000000-00000000-00000000-00000000000000000000000000000000";
    const old = await traced("/api/v1/accounts/verify_credentials", { headers: { ...auth, "x-d1-bookmark": OLD } });
    expect(old.res.status).toBe(200);
    expect(old.starts).toHaveLength(1);
    expect(old.starts[0]).toMatch(BOOKMARK);
    expect(old.starts[0]).not.toBe(OLD);
    const anonFuture = await traced("/api/v1/timelines/public", { headers: { "x-d1-bookmark": FUTURE } });
    expect(anonFuture.res.status).toBe(200);
    expect(anonFuture.starts).toEqual(["first-primary"]);
    // The same through the cookie.
    const cookieFuture = await traced("/about", { headers: { cookie: `tern_d1b=${FUTURE}` } });
    expect(cookieFuture.res.status).toBeLessThan(500);
    expect(cookieFuture.starts).toEqual(["first-primary"]);
  });
});

describe("where each request starts", () => {
  it("writes and signed-in reads on the primary; anonymous reads anywhere, not older than this isolate's writes", async () => {
    const me = await makeUser();
    const auth = { authorization: `Bearer ${me.token}` };
    const post = await traced("/api/v1/statuses", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ status: "Where do I start" }),
    });
    expect(post.res.status).toBe(200);
    expect(post.starts).toEqual(["first-primary"]);
    const written = bookmarkOf(post.res.headers)!;

    for (const path of ["/api/v1/timelines/home", "/api/v1/accounts/verify_credentials", "/api/v1/notifications"]) {
      const r = await traced(path, { headers: auth });
      expect(r.res.status).toBe(200);
      expect(r.starts, path).toEqual(["first-primary"]);
    }
    // The streaming socket's token may ride in the query.
    expect(startFor({ method: "GET", credentials: true, clientBookmark: null })).toBe("first-primary");

    // Anonymous reads (federation, public API, public pages) may start on a replica, but at a bookmark no older than
    // this isolate's latest write: the isolate that made a change reads it back (the instance cache relies on it).
    for (const [path, accept] of [
      [`/users/${me.username}`, "application/activity+json"],
      [`/.well-known/webfinger?resource=acct:${me.username}@tern.test`, "application/jrd+json"],
      ["/api/v1/timelines/public", "application/json"],
      [`/@${me.username}`, "text/html"],
    ] as const) {
      const r = await traced(path, { headers: { accept } });
      expect(r.res.status, path).toBe(200);
      expect(r.starts).toHaveLength(1);
      expect(r.starts[0], path).not.toBe("first-primary");
      expect(r.starts[0]).toMatch(BOOKMARK);
      expect(r.starts[0]! >= written).toBe(true);
    }
  });

  it("asks the primary again before answering 404 to an anonymous read that a replica served", async () => {
    const r = await traced("/users/nobody_here", { headers: { accept: "application/activity+json" } });
    expect(r.res.status).toBe(404);
    expect(r.starts).toHaveLength(2);
    expect(r.starts[0]).not.toBe("first-primary");
    expect(r.starts[1]).toBe("first-primary");
    // Server-Timing counts both runs.
    expect(roundTrips(r.res.headers)).toBeGreaterThanOrEqual(2);

    // An API 404 (no read-your-writes promise to a stranger) and a 404 that read nothing are answered at once.
    const apiMiss = await traced("/api/v1/statuses/1");
    expect(apiMiss.res.status).toBe(404);
    expect(apiMiss.starts).toHaveLength(1);
    const noD1 = await traced("/no-such-page");
    expect(noD1.res.status).toBe(404);
    expect(noD1.starts).toHaveLength(1);
    expect(roundTrips(noD1.res.headers)).toBe(0);
  });

  it("a browser with a session carries its bookmark in a cookie; its next page starts from it", async () => {
    const me = await makeUser();
    const jar = await signedIn(me.username);
    // Signing in set the bookmark cookie next to the session cookie.
    expect(jar.cookies.get("tern_d1b")).toMatch(BOOKMARK);
    const page = await web("/settings/profile", { jar });
    expect(page.status).toBe(200);
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith("tern_d1b="))!;
    expect(cookie).toMatch(/^tern_d1b=[0-9a-f-]{59}; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax$/);

    const r = await traced("/settings/profile", { headers: { cookie: jar.header() } });
    expect(r.res.status).toBe(200);
    expect(r.starts[0]).toMatch(BOOKMARK);
    expect(r.starts[0]! >= jar.cookies.get("tern_d1b")!).toBe(true);

    // A signed-in browser without the bookmark cookie reads from the primary.
    const noBookmark = new Jar();
    noBookmark.cookies = new Map([...jar.cookies].filter(([k]) => k !== "tern_d1b"));
    const fresh = await traced("/settings/profile", { headers: { cookie: noBookmark.header() } });
    expect(fresh.res.status).toBe(200);
    expect(fresh.starts).toEqual(["first-primary"]);

    // Signed out, no bookmark cookie is set (public pages stay free of Set-Cookie).
    const anonPage = await web(`/@${me.username}`);
    expect(anonPage.headers.getSetCookie().some((c) => c.startsWith("tern_d1b="))).toBe(false);
  });

  it("parses only D1's bookmark shape", () => {
    expect(parseBookmark("00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683")).toBe("00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683");
    expect(parseBookmark("00000085-0000024C-00004C6D-8E61117BF38D7ADB71B934EBBF891683")).toBe("00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683");
    for (const bad of [
      null,
      undefined,
      "",
      "first-primary",
      "00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf89168",
      " 00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf89168",
    ]) {
      expect(parseBookmark(bad)).toBeNull();
    }
    // Writes start on the primary whatever they bring.
    expect(startFor({ method: "POST", credentials: false, clientBookmark: "00000000-00000000-00000000-00000000000000000000000000000000" })).toBe(
      "first-primary",
    );
  });

  it("still counts round trips and rows through the session (Server-Timing)", async () => {
    const me = await makeUser();
    const r = await traced("/api/v1/accounts/verify_credentials", { headers: { authorization: `Bearer ${me.token}` } });
    expect(roundTrips(r.res.headers)).toBe(1);
    const ctx = createExecutionContext();
    const dev = await worker.fetch(
      new Request(`${ORIGIN}/api/v1/accounts/verify_credentials`, { headers: { authorization: `Bearer ${me.token}` } }),
      { ...env, DEV_SERVER_TIMING: "true" } as typeof env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    await dev.arrayBuffer();
    expect(dev.headers.get("server-timing")).toMatch(/d1r;desc="rows read";dur=[1-9]/);
    expect(bookmarkOf(dev.headers)).toMatch(BOOKMARK);
  });
});
