// Server-Timing: D1 round trips on every response; statements, rows read and rows written (D1's billing units, from
// the result metadata) when DEV_SERVER_TIMING=true, which npm run dev and the benchmark set (src/lib/limits/d1-counter.ts).
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { accounts } from "../../src/db/schema";
import worker from "../../src/index";
import { countingD1, type D1Count } from "../../src/lib/limits/d1-counter";
import { anon, makeUser, ORIGIN } from "./helpers";

async function call(path: string, init: RequestInit = {}, vars: Record<string, string> = { DEV_SERVER_TIMING: "true" }) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${ORIGIN}${path}`, init), { ...env, ...vars } as typeof env, ctx);
  await waitOnExecutionContext(ctx);
  await res.arrayBuffer();
  return res;
}

function metrics(h: Headers): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (h.get("server-timing") ?? "").split(",")) {
    const m = /^\s*([\w-]+)\b.*;\s*dur=(\d+)/.exec(part);
    if (m?.[1] && m[2]) out[m[1]] = Number(m[2]);
  }
  return out;
}

describe("Server-Timing", () => {
  it("carries round trips only, unless DEV_SERVER_TIMING is on", async () => {
    const res = await anon.get("/api/v1/timelines/public");
    expect(res.headers.get("server-timing")).toMatch(/^d1;desc="round trips";dur=\d+$/);
    const off = await call("/api/v1/timelines/public", {}, {});
    expect(Object.keys(metrics(off.headers))).toEqual(["d1"]);
  });

  it("in development, counts statements, rows read and rows written per request", async () => {
    const u = await makeUser();
    const auth = { authorization: `Bearer ${u.token}` };
    const verify = await call("/api/v1/accounts/verify_credentials", { headers: auth });
    expect(verify.status).toBe(200);
    const v = metrics(verify.headers);
    expect(v.d1).toBeGreaterThanOrEqual(1);
    expect(v.d1q).toBeGreaterThanOrEqual(v.d1 ?? 0);
    expect(v.d1r).toBeGreaterThan(0); // the token and its account, read through drizzle's raw()
    expect(v.d1w).toBe(0);

    const post = await call("/api/v1/statuses", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ status: "Counting rows" }),
    });
    expect(post.status).toBe(200);
    const p = metrics(post.headers);
    expect(p.d1w).toBeGreaterThan(0);
    expect(p.d1w).toBeLessThanOrEqual(30); // the goal for a post (its fan-out runs later, on the queue)

    const noop = await call("/no-such-page");
    expect(metrics(noop.headers)).toEqual({ d1: 0, d1q: 0, d1r: 0, d1w: 0 });
  });
});

describe("countingD1 with rows", () => {
  it("keeps every statement method's answer and sums its metadata", async () => {
    await makeUser();
    const counter: D1Count = { n: 0 };
    const d1 = countingD1(env.DB, counter, { rows: true });
    expect(await d1.prepare("SELECT 1 AS a, 2 AS a").raw()).toEqual([[1, 2]]);
    expect(await d1.prepare("SELECT 1 AS a, ? AS b").bind(5).raw({ columnNames: true })).toEqual([
      ["a", "b"],
      [1, 5],
    ]);
    expect(await d1.prepare("SELECT ? AS x").bind(3).first("x")).toBe(3);
    expect(await d1.prepare("SELECT 1 AS x WHERE 0").first()).toBeNull();
    expect(counter.r).toBe(0);
    const r0 = counter.r ?? 0;
    const rows = await d1.prepare("SELECT username FROM accounts").raw();
    expect(rows).toHaveLength(1);
    expect((counter.r ?? 0) - r0).toBeGreaterThanOrEqual(1);
    // Drizzle's select (raw), get (first through all) and a batch.
    const db = createDb(d1);
    const before = { ...counter };
    expect(await db.select({ u: accounts.username }).from(accounts)).toHaveLength(1);
    await db.batch([db.select().from(accounts), db.select().from(accounts)]);
    expect(counter.n - before.n).toBe(2);
    expect((counter.q ?? 0) - (before.q ?? 0)).toBe(3);
    expect((counter.r ?? 0) - (before.r ?? 0)).toBeGreaterThanOrEqual(3);
    const w0 = counter.w ?? 0;
    await d1.prepare("UPDATE accounts SET note = 'x'").run();
    expect((counter.w ?? 0) - w0).toBeGreaterThanOrEqual(1);
    expect(counter.rawUncounted).toBeUndefined();
  });
});
