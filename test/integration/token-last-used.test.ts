// A token's last use (the "Last used" of Apps and sessions): written at most once an hour per token, after the response,
// by a conditional UPDATE, and never at the cost of a D1 round trip of the request (Server-Timing counts the same
// whether a write was due or not).
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import worker from "../../src/index";
import { LAST_USED_EVERY_MS, markTokenUsed } from "../../src/oauth/viewer";
import { makeUser, ORIGIN } from "./helpers";
import { signedIn } from "./settings-helpers";
import { web } from "./oauth-helpers";

/** A request through the Worker, waiting for what it left to run after the response. */
async function call(path: string, token: string) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${ORIGIN}${path}`, { headers: { authorization: `Bearer ${token}` } }), env, ctx);
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return res;
}

const roundTrips = (res: Response) => Number(/d1;desc="round trips";dur=(\d+)/.exec(res.headers.get("server-timing") ?? "")?.[1]);

async function lastUsed(userId: string): Promise<number | null> {
  return env.DB.prepare("SELECT last_used_at AS t FROM oauth_access_tokens WHERE user_id = ? AND revoked_at IS NULL")
    .bind(userId.padStart(20, "0"))
    .first<number | null>("t");
}

describe("a token's last use", () => {
  it("is written on its first use, then not again within the hour, with no round trip added to the request", async () => {
    const u = await makeUser("lastused");
    expect(await lastUsed(u.userId)).toBeNull();
    const before = Date.now();
    const first = await call("/api/v1/accounts/verify_credentials", u.token);
    expect(first.status).toBe(200);
    const t1 = await lastUsed(u.userId);
    expect(t1).toBeGreaterThanOrEqual(before);

    const second = await call("/api/v1/accounts/verify_credentials", u.token);
    expect(await lastUsed(u.userId)).toBe(t1);
    // The due write cost the first request nothing: both counted the same round trips.
    expect(roundTrips(first)).toBe(roundTrips(second));

    // Over an hour later it is written again.
    await env.DB.prepare("UPDATE oauth_access_tokens SET last_used_at = ? WHERE user_id = ?")
      .bind(Date.now() - LAST_USED_EVERY_MS - 1000, u.userId.padStart(20, "0"))
      .run();
    const third = await call("/api/v1/timelines/home", u.token);
    expect(third.status).toBe(200);
    expect(await lastUsed(u.userId)).toBeGreaterThanOrEqual(before);
  });

  it("the write is conditional: of two racing requests, one writes", async () => {
    const u = await makeUser("lastrace");
    const db = createDb(env.DB);
    const tokenId = (await env.DB.prepare("SELECT id FROM oauth_access_tokens WHERE user_id = ?").bind(u.userId.padStart(20, "0")).first<string>("id"))!;
    const now = Date.now();
    const [a, b] = await Promise.all([markTokenUsed(db, tokenId, now).run(), markTokenUsed(db, tokenId, now + 5).run()]);
    expect(a.meta.changes + b.meta.changes).toBe(1);
    expect((await markTokenUsed(db, tokenId, now + 60_000).run()).meta.changes).toBe(0);
  });

  it("shows on the Apps and sessions page instead of 'never'", async () => {
    const u = await makeUser("lastpage");
    const jar = await signedIn(u.username);
    expect((await web("/oauth/authorized_applications", { jar })).text_).toContain("<td>never</td>");
    await call("/api/v1/accounts/verify_credentials", u.token);
    const page = (await web("/oauth/authorized_applications", { jar })).text_;
    expect(page).not.toContain("<td>never</td>");
    expect(page).toMatch(/<td>\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC<\/td>/);
  });
});
