import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobMessage } from "../../src/effects/types";
import { anon, makeUser } from "./helpers";
import { pad, captureJobs } from "./statuses-fixtures";

let _jobs: JobMessage[] = [];
beforeEach(() => {
  _jobs = captureJobs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function pollPost(u: Awaited<ReturnType<typeof makeUser>>, poll: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await u.api.post("/api/v1/statuses", { status: "poll", poll, ...extra });
  expect(res.status).toBe(200);
  return res.body as { id: string; poll: { id: string } };
}

describe("polls", () => {
  it("GET shows the poll of a visible status; 404 otherwise", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const s = await pollPost(a, { options: ["a", "b"], expires_in: 600 });
    const res = await anon.get(`/api/v1/polls/${s.poll.id}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(s.poll.id);
    expect(res.body.expired).toBe(false);
    expect(res.body.voted).toBeUndefined();
    const mine = await b.api.get(`/api/v1/polls/${s.poll.id}`);
    expect(mine.body.voted).toBe(false);
    expect(mine.body.own_votes).toEqual([]);
    const priv = await pollPost(a, { options: ["a", "b"], expires_in: 600 }, { visibility: "private" });
    expect((await b.api.get(`/api/v1/polls/${priv.poll.id}`)).status).toBe(404);
    expect((await b.api.post(`/api/v1/polls/${priv.poll.id}/votes`, { choices: [0] })).status).toBe(404);
    expect((await anon.get("/api/v1/polls/abc")).status).toBe(404);
  });

  it("votes once; counts update; own poll, repeat, out of range and multiple rules are 422", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const c = await makeUser();
    const s = await pollPost(a, { options: ["a", "b", "c"], expires_in: 600 });
    expect((await anon.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [0] })).status).toBe(401);
    const ro = await makeUser(undefined, { scopes: "read" });
    expect((await ro.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [0] })).status).toBe(403);
    expect((await a.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [0] })).status).toBe(422);
    expect((await b.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [0, 1] })).status).toBe(422);
    expect((await b.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [7] })).status).toBe(422);
    expect((await b.api.post(`/api/v1/polls/${s.poll.id}/votes`, {})).status).toBe(422);
    const v = await b.api.post(`/api/v1/polls/${s.poll.id}/votes`, new URLSearchParams([["choices[]", "1"]]), "form");
    expect(v.status).toBe(200);
    expect(v.body.voted).toBe(true);
    expect(v.body.own_votes).toEqual([1]);
    expect(v.body.votes_count).toBe(1);
    expect(v.body.options.map((o: any) => o.votes_count)).toEqual([0, 1, 0]);
    expect((await b.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [2] })).status).toBe(422);
    await c.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [1] });
    const st = await anon.get(`/api/v1/statuses/${s.id}`);
    expect(st.body.poll.votes_count).toBe(2);
    expect(st.body.poll.options[1].votes_count).toBe(2);
  });

  it("multiple-choice polls count voters and votes; parallel votes by one user count once", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const s = await pollPost(a, { options: ["a", "b", "c"], expires_in: 600, multiple: true });
    const [x, y] = await Promise.all([
      b.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [0, 2] }),
      b.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [1] }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 422]);
    const p = await b.api.get(`/api/v1/polls/${s.poll.id}`);
    expect(p.body.voters_count).toBe(1);
    expect(p.body.votes_count).toBe(p.body.own_votes.length);
  });

  it("an expired poll refuses votes", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const s = await pollPost(a, { options: ["a", "b"], expires_in: 300 });
    await env.DB.prepare("UPDATE polls SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1000, pad(s.poll.id))
      .run();
    const res = await b.api.post(`/api/v1/polls/${s.poll.id}/votes`, { choices: [0] });
    expect(res.status).toBe(422);
    expect((await anon.get(`/api/v1/polls/${s.poll.id}`)).body.expired).toBe(true);
  });
});
