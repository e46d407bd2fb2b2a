// Security (issue, class 5): familiar_followers applies the same visibility rules as the follower and following
// lists. An account the viewer follows is named as a follower of the target only if the viewer's following list AND
// the target's follower list (as this viewer sees them) would both show it: hidden collections, blocks either way,
// mutes and suspensions count. Mastodon's FamiliarFollowersPresenter: none for a target hiding its followers, and
// never an account hiding whom it follows.
import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeUser, type TestUser } from "./helpers";

const pad = (id: string) => id.padStart(20, "0");

async function familiar(viewer: TestUser, targets: TestUser[]): Promise<Map<string, string[]>> {
  const q = targets.map((t) => `id[]=${t.id}`).join("&");
  const res = await viewer.api.get(`/api/v1/accounts/familiar_followers?${q}`);
  expect(res.status).toBe(200);
  return new Map((res.body as { id: string; accounts: { id: string }[] }[]).map((r) => [r.id, r.accounts.map((a) => a.id).sort()]));
}

const ids = (body: { id: string }[]) => body.map((a) => a.id).sort();

describe("familiar_followers and hidden collections, blocks and mutes", () => {
  it("the issue's case: followers who hide their collections, or who block the viewer, are not named", async () => {
    const viewer = await makeUser("ffviewer");
    const target = await makeUser("fftarget");
    const hider = await makeUser("ffhider");
    const blocker = await makeUser("ffblocker");
    const plain = await makeUser("ffplain");
    for (const f of [hider, blocker, plain]) {
      expect((await viewer.api.post(`/api/v1/accounts/${f.id}/follow`)).status).toBe(200);
      expect((await f.api.post(`/api/v1/accounts/${target.id}/follow`)).status).toBe(200);
    }
    expect((await familiar(viewer, [target])).get(target.id)).toEqual([hider.id, blocker.id, plain.id].sort());

    await hider.api.patch("/api/v1/accounts/update_credentials", { hide_collections: true });
    await blocker.api.patch("/api/v1/accounts/update_credentials", { hide_collections: true });
    expect((await viewer.api.get(`/api/v1/accounts/${hider.id}/following`)).body).toEqual([]);
    expect((await familiar(viewer, [target])).get(target.id)).toEqual([plain.id]);

    await blocker.api.patch("/api/v1/accounts/update_credentials", { hide_collections: false });
    expect((await familiar(viewer, [target])).get(target.id)).toEqual([blocker.id, plain.id].sort());
    expect((await blocker.api.post(`/api/v1/accounts/${viewer.id}/block`)).status).toBe(200);
    expect((await familiar(viewer, [target])).get(target.id)).toEqual([plain.id]);

    // A target hiding its followers from others, or blocking the viewer, names nobody.
    await target.api.patch("/api/v1/accounts/update_credentials", { hide_collections: true });
    expect((await viewer.api.get(`/api/v1/accounts/${target.id}/followers`)).body).toEqual([]);
    expect((await familiar(viewer, [target])).get(target.id)).toEqual([]);
    await target.api.patch("/api/v1/accounts/update_credentials", { hide_collections: false });
    expect((await familiar(viewer, [target])).get(target.id)).toEqual([plain.id]);
    await target.api.post(`/api/v1/accounts/${viewer.id}/block`);
    expect((await familiar(viewer, [target])).get(target.id)).toEqual([]);
  });
});

describe("familiar_followers = what both the viewer's following list and the target's follower list show, on generated graphs", () => {
  const N = 6; // user 0 is the viewer
  let users: TestUser[] = [];

  const pairs: [number, number][] = [];
  for (let a = 0; a < N; a++) for (let b = 0; b < N; b++) if (a !== b) pairs.push([a, b]);

  const graph = fc.record({
    follows: fc.array(fc.boolean(), { minLength: pairs.length, maxLength: pairs.length }),
    blocks: fc.array(
      fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      { minLength: pairs.length, maxLength: pairs.length },
    ),
    mutes: fc.array(
      fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      { minLength: N, maxLength: N },
    ),
    hidden: fc.array(
      fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
      { minLength: N, maxLength: N },
    ),
    suspended: fc.array(
      fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
      { minLength: N, maxLength: N },
    ),
  });

  type Graph = typeof graph extends fc.Arbitrary<infer G> ? G : never;
  async function apply(g: Graph) {
    const stmts = [env.DB.prepare("DELETE FROM follows"), env.DB.prepare("DELETE FROM blocks"), env.DB.prepare("DELETE FROM mutes")];
    let seq = 900_000_000;
    pairs.forEach(([a, b], i) => {
      if (g.follows[i]) {
        stmts.push(
          env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)").bind(
            pad(String(++seq)),
            pad(users[a].id),
            pad(users[b].id),
            Date.now(),
          ),
        );
      }
      if (g.blocks[i]) {
        stmts.push(
          env.DB.prepare("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)").bind(
            pad(String(++seq)),
            pad(users[a].id),
            pad(users[b].id),
            Date.now(),
          ),
        );
      }
    });
    for (let b = 1; b < N; b++) {
      if (g.mutes[b])
        stmts.push(
          env.DB.prepare("INSERT INTO mutes (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)").bind(
            pad(String(++seq)),
            pad(users[0].id),
            pad(users[b].id),
            Date.now(),
          ),
        );
    }
    for (let u = 0; u < N; u++) {
      stmts.push(
        env.DB.prepare("UPDATE accounts SET hide_collections = ?, suspended_at = ? WHERE id = ?").bind(
          g.hidden[u] ? 1 : 0,
          u > 0 && g.suspended[u] ? Date.now() : null,
          pad(users[u].id),
        ),
      );
    }
    await env.DB.batch(stmts);
  }

  it("names exactly the accounts both REST lists show this viewer, except those hiding their collections", async () => {
    users = [];
    for (let i = 0; i < N; i++) users.push(await makeUser(`ffgen${i}`));
    await fc.assert(
      fc.asyncProperty(graph, async (g) => {
        await apply(g);
        const viewer = users[0];
        const targets = users.slice(1);
        const got = await familiar(viewer, targets);
        const hiders = new Set(users.filter((_, i) => g.hidden[i]).map((u) => u.id));
        const following = new Set(ids((await viewer.api.get(`/api/v1/accounts/${viewer.id}/following?limit=80`)).body));
        for (const t of targets) {
          const followers = ids((await viewer.api.get(`/api/v1/accounts/${t.id}/followers?limit=80`)).body);
          // ... minus accounts that hide their own collections (Mastodon rejects `hide_following?` ones: naming them
          // would tell whom they follow, which their own following list refuses to say).
          const expected = followers.filter((id) => following.has(id) && !hiders.has(id)).sort();
          expect(got.get(t.id) ?? [], `target ${t.username}`).toEqual(expected);
        }
      }),
      { numRuns: 25, endOnFailure: true },
    );
  }, 180_000); // many requests per run: generous on a busy machine
});
