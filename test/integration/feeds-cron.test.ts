import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runScheduled, INACTIVE_AFTER_MS } from "../../src/background/cron";
import { eventually, makeUser } from "./helpers";
import { exec, homeRows, insertStatus, nextId, pad } from "./feeds-fixtures";

describe("cron", { timeout: 30000 }, () => {
  it("drops the feeds of users inactive for 14 days, and only theirs", async () => {
    const [idle, active] = await Promise.all([makeUser(), makeUser()]);
    const now = Date.now();
    for (const u of [idle, active]) {
      const s = await insertStatus(u);
      await exec("INSERT INTO home_feed (account_id, status_id, author_id) VALUES (?1, ?2, ?1)", pad(u.id), pad(s));
    }
    await exec("UPDATE users SET last_active_at = ?1 WHERE account_id = ?2", now - INACTIVE_AFTER_MS - 1000, pad(idle.id));
    await exec("UPDATE users SET last_active_at = ?1 WHERE account_id = ?2", now - 1000, pad(active.id));
    await runScheduled(env, now);
    expect(await homeRows(idle.id)).toEqual([]);
    expect(await homeRows(active.id)).toHaveLength(1);
    const st = await env.DB.prepare("SELECT dropped_at FROM feed_states WHERE account_id = ?1").bind(pad(idle.id)).first<{ dropped_at: number }>();
    expect(st?.dropped_at).toBe(now);
    const other = await env.DB.prepare("SELECT dropped_at FROM feed_states WHERE account_id = ?1").bind(pad(active.id)).first();
    expect(other).toBeNull();
    // The next home read starts the rebuild.
    expect((await idle.api.get("/api/v1/timelines/home")).status).toBe(206);
    await eventually(async () => {
      const r = await idle.api.get("/api/v1/timelines/home");
      expect(r.status).toBe(200);
      expect(r.body).toHaveLength(1);
    });
  });

  it("expires temporary mutes", async () => {
    const [me, a, b] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const now = Date.now();
    await exec(
      "INSERT INTO mutes (id, account_id, target_account_id, hide_notifications, expires_at, created_at) VALUES (?1, ?2, ?3, 1, ?4, 0), (?5, ?2, ?6, 1, NULL, 0)",
      pad(nextId()),
      pad(me.id),
      pad(a.id),
      now - 1,
      pad(nextId()),
      pad(b.id),
    );
    await runScheduled(env, now);
    const rows = await env.DB.prepare("SELECT target_account_id AS t FROM mutes WHERE account_id = ?1").bind(pad(me.id)).all<{ t: string }>();
    expect(rows.results.map((r) => r.t)).toEqual([pad(b.id)]);
  });

  it("notifies local voters and the author when a poll ends, once", async () => {
    const [author, voter, late] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const now = Date.now();
    const s = await insertStatus(author);
    const pollId = nextId();
    await exec(
      "INSERT INTO polls (id, status_id, account_id, options, votes_per_option, expires_at, created_at, updated_at) VALUES (?1, ?2, ?3, '[\"a\",\"b\"]', '[1,0]', ?4, 0, 0)",
      pad(pollId),
      pad(s),
      pad(author.id),
      now - 60_000,
    );
    await exec("UPDATE statuses SET poll_id = ?1 WHERE id = ?2", pad(pollId), pad(s));
    for (const choice of [0, 1]) {
      await exec(
        "INSERT INTO poll_votes (id, poll_id, account_id, choice, created_at) VALUES (?1, ?2, ?3, ?4, 0)",
        pad(nextId()),
        pad(pollId),
        pad(voter.id),
        choice,
      );
    }
    const later = await insertStatus(author);
    await exec(
      "INSERT INTO polls (id, status_id, account_id, options, votes_per_option, expires_at, created_at, updated_at) VALUES (?1, ?2, ?3, '[\"a\"]', '[1]', ?4, 0, 0)",
      pad(nextId()),
      pad(later),
      pad(author.id),
      now + 3_600_000,
    );
    await runScheduled(env, now);
    await runScheduled(env, now + 1000);
    const forVoter = (await voter.api.get("/api/v1/notifications")).body;
    expect(forVoter).toHaveLength(1);
    expect(forVoter[0]).toMatchObject({ type: "poll", account: { id: author.id }, status: { id: s } });
    const forAuthor = (await author.api.get("/api/v1/notifications?types[]=poll")).body;
    expect(forAuthor.map((n: any) => n.status.id)).toEqual([s]);
    expect((await late.api.get("/api/v1/notifications")).body).toEqual([]);
  });
});
