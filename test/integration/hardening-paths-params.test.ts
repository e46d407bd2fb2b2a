// Security (issue, class 12): hostile paths and over-long parameter lists. A path holding control characters (encoded
// or raw) or percent-encoding that is not UTF-8 is a 404 on every route and method, never a 500. An over-long list
// is refused by the parameter parser itself (query, form, multipart, JSON), before any route, schema or query runs.
import { SELF } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hostilePath } from "../../src/app";
import { MAX_PARAMS, parseJsonText } from "../../src/lib/http/params";
import { makeUser, ORIGIN } from "./helpers";

const TEMPLATES = [
  "/{}",
  "/api/v1/accounts/{}",
  "/api/v1/accounts/{}/statuses",
  "/api/v1/statuses/{}",
  "/api/v1/statuses/{}/context",
  "/api/v1/timelines/tag/{}",
  "/api/v1/tags/{}",
  "/api/v2/{}",
  "/users/{}",
  "/users/{}/statuses/1",
  "/users/a/statuses/{}/activity",
  "/users/{}/outbox",
  "/users/{}/followers",
  "/users/{}/collections/featured",
  "/users/{}/inbox",
  "/@{}",
  "/@{}/1",
  "/tags/{}",
  "/media/media_attachments/{}/original.png",
  "/oauth/{}",
  "/auth/{}",
  "/.well-known/{}",
  "/nodeinfo/{}",
];

/** Bytes no path of this server may hold once decoded: C0 controls, DEL, C1 controls, and non-UTF-8 escapes. */
const hostile = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((b) => `%${b.toString(16).padStart(2, "0")}`),
  fc.constantFrom("%7f", "%7F", "%0d%0a", "%0D%0ASet-Cookie:%20x=1", "%c2%85", "%C2%9F", "%ff", "%fe%ff", "%c0%af", "%e0%a4%a", "%", "%zz", "%ed%a0%80"),
);
// The text after a hostile token holds no hex digit, so it cannot complete an escape into something valid.
const segment = fc.tuple(fc.stringMatching(/^[a-z0-9_]{0,6}$/), hostile, fc.stringMatching(/^[g-z_]{0,6}$/)).map(([a, h, b]) => `${a}${h}${b}`);

describe("hostile paths are 404 everywhere", () => {
  it("generated control characters and bad escapes on every route family, method and Accept", async () => {
    const u = await makeUser("pathprobe");
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TEMPLATES),
        segment,
        fc.constantFrom("GET", "POST", "DELETE", "PATCH"),
        fc.constantFrom("text/html", "application/activity+json", "application/json"),
        async (template, seg, method, accept) => {
          const path = template.replace("{}", seg);
          expect(hostilePath(`${ORIGIN}${path}`), path).toBe(true);
          const res = await SELF.fetch(`${ORIGIN}${path}`, {
            method,
            headers: { accept, authorization: `Bearer ${u.token}`, ...(method !== "GET" ? { "content-type": "application/json" } : {}) },
            body: method !== "GET" ? "{}" : undefined,
            redirect: "manual",
          });
          await res.arrayBuffer();
          expect(res.status, `${method} ${path}`).toBe(404);
        },
      ),
      { numRuns: 250 },
    );
  });

  it("the issue's paths, and ordinary encoded paths still work", async () => {
    for (const p of ["/api/v1/accounts/%00", "/%0d%0a", "/users/a%09b", "/users/%00/statuses/1", "/users/a%0d%0a", "/@a%00/1"]) {
      const res = await SELF.fetch(`${ORIGIN}${p}`);
      await res.arrayBuffer();
      expect(res.status, p).toBe(404);
    }
    const api = await SELF.fetch(`${ORIGIN}/api/v1/accounts/%00`);
    expect(await api.json()).toEqual({ error: "Record not found" });
    const tag = await SELF.fetch(`${ORIGIN}/api/v1/timelines/tag/caf%C3%A9`);
    await tag.arrayBuffer();
    expect(tag.status).toBe(200);
    expect(hostilePath(`${ORIGIN}/tags/%E6%97%A5%E6%9C%AC?q=%00`)).toBe(false); // the query is data, not path
  });
});

/** D1 round trips a response reports (Server-Timing d1;dur=N): the bearer token lookup is the only one allowed. */
const roundTrips = (res: Response) => Number(/d1;[^,]*dur=(\d+)/.exec(res.headers.get("server-timing") ?? "")?.[1] ?? "NaN");

describe("over-long lists are refused by the parser", () => {
  it("200,000 media_ids as JSON, and as many keys in an object: 400 before any other work", async () => {
    const u = await makeUser("longlists");
    const bodies = [
      JSON.stringify({ status: "x", media_ids: Array.from({ length: 200_000 }, () => "1") }),
      JSON.stringify({ status: "x", media_ids: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [String(i), 1])) }),
      JSON.stringify({ status: "x", poll: { options: Array.from({ length: MAX_PARAMS + 1 }, () => 0) } }),
    ];
    for (const body of bodies) {
      const res = await SELF.fetch(`${ORIGIN}/api/v1/statuses`, {
        method: "POST",
        headers: { authorization: `Bearer ${u.token}`, "content-type": "application/json" },
        body,
      });
      expect(res.status).toBe(400);
      expect(roundTrips(res)).toBeLessThanOrEqual(1);
      expect(await res.json()).toEqual({ error: "Too many parameters" });
    }
    const ok = await u.api.post("/api/v1/statuses", { status: "x", media_ids: Array.from({ length: 500 }, () => "1") });
    expect(ok.status).toBe(422); // a long but bounded list reaches the route, which refuses it as before
  });

  it("form, query and multipart lists over the cap: the same 400", async () => {
    const u = await makeUser("longforms");
    const auth = { authorization: `Bearer ${u.token}` };
    const pairs = Array.from({ length: 60_000 }, () => "media_ids[]=1").join("&");
    const form = await SELF.fetch(`${ORIGIN}/api/v1/statuses`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/x-www-form-urlencoded" },
      body: `status=x&${pairs}`,
    });
    expect(form.status).toBe(400);
    expect(roundTrips(form)).toBeLessThanOrEqual(1);
    await form.arrayBuffer();

    const q = Array.from({ length: MAX_PARAMS + 1 }, (_, i) => `id[]=${i + 1}`).join("&");
    const query = await SELF.fetch(`${ORIGIN}/api/v1/accounts/relationships?${q}`, { headers: auth });
    expect(query.status).toBe(400);
    await query.arrayBuffer();

    for (const route of ["/api/v1/statuses", "/api/v2/media"]) {
      const mp = new FormData();
      mp.append("status", "x");
      for (let i = 0; i < 5000; i++) mp.append("media_ids[]", "1");
      const res = await SELF.fetch(`${ORIGIN}${route}`, { method: "POST", headers: auth, body: mp });
      expect(res.status, route).toBe(400);
      expect(await res.json()).toEqual({ error: "Too many parameters" });
    }
  });

  it("parseJsonText: the cap counts array items and object members anywhere, never commas inside strings", () => {
    const leaf = fc.oneof(
      fc.string({ maxLength: 6 }).map((s) => `${s},,`),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        leaf,
        fc.array(tie("node"), { maxLength: 6 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie("node"), { maxKeys: 6 }),
      ),
    })).node;
    const entries = (v: unknown): number =>
      Array.isArray(v)
        ? v.length + v.reduce<number>((n, x) => n + entries(x), 0)
        : v && typeof v === "object"
          ? Object.keys(v).length + Object.values(v).reduce<number>((n, x) => n + entries(x), 0)
          : 0;
    const seps = (v: unknown): number =>
      Array.isArray(v)
        ? Math.max(0, v.length - 1) + v.reduce<number>((n, x) => n + seps(x), 0)
        : v && typeof v === "object"
          ? Math.max(0, Object.keys(v).length - 1) + Object.values(v).reduce<number>((n, x) => n + seps(x), 0)
          : 0;
    fc.assert(
      fc.property(tree, fc.integer({ min: 1, max: 40 }), (value, cap) => {
        const text = JSON.stringify(value);
        const n = seps(value);
        if (n >= cap) expect(() => parseJsonText(text, 32, cap)).toThrow(/Too many parameters/);
        else expect(parseJsonText(text, 32, cap)).toEqual(JSON.parse(text));
        expect(entries(value)).toBeGreaterThanOrEqual(n);
      }),
      { numRuns: 300 },
    );
  });
});
