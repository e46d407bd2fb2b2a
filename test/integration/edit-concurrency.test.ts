// Concurrent edits of one status serialise (src/services/statuses/edit-status.ts, src/federation/remote/remote-statuses.ts): each
// edit applies on top of the state it read, or reads again and retries, so the history is the original plus one
// entry per applied edit, oldest first, its last entry the status as it now is (Mastodon takes a row lock).
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobMessage } from "../../src/effects/types";
import { runJob } from "../../src/background/effects-runner";
import { createDb } from "../../src/db/client";
import { countingD1, type D1Count } from "../../src/lib/limits/d1-counter";
import worker from "../../src/index";
import { anon, makeUser, ORIGIN, type Res, type TestUser } from "./helpers";
import { captureJobs, makeMedia } from "./statuses-fixtures";
import { create, installFetchMock, note, postInbox, remoteActor, runJobs, sql } from "./federation-inbox-fixtures";
import { queued } from "./queues";

interface HistoryItem {
  content: string;
  created_at: string;
  media_attachments: { id: string }[];
  poll?: { options: { title: string }[] };
}

const paragraph = (text: string) => `<p>${text}</p>`;

async function historyOf(id: string): Promise<HistoryItem[]> {
  const h = await anon.get(`/api/v1/statuses/${id}/history`);
  expect(h.status).toBe(200);
  return h.body;
}

/** The invariants of a history after concurrent edits whose 200 answers are `applied`. */
function expectSerialHistory(history: HistoryItem[], original: string, applied: string[], current: string) {
  const contents = history.map((h) => h.content);
  expect(history).toHaveLength(1 + applied.length);
  expect(contents[0]).toBe(original);
  expect(new Set(contents).size).toBe(contents.length); // no text twice: the original is not re-inserted
  expect(contents.at(-1)).toBe(current);
  for (const text of applied) expect(contents.filter((c) => c === text)).toHaveLength(1);
  const times = history.map((h) => Date.parse(h.created_at));
  for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1]!);
}

/** Sends the edits at once; a lost race may only be refused cleanly (409), never a 5xx. */
async function editAtOnce(u: TestUser, id: string, bodies: Record<string, unknown>[]): Promise<Res[]> {
  const res = await Promise.all(bodies.map((b) => u.api.put(`/api/v1/statuses/${id}`, b)));
  for (const r of res) expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
  return res;
}

describe("concurrent edits of a local status (PUT /api/v1/statuses/:id)", () => {
  let jobs: JobMessage[] = [];
  beforeEach(() => {
    jobs = captureJobs();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("ten edits at once to a never-edited status: the original plus one entry per applied edit, in order", async () => {
    const a = await makeUser();
    const s = await a.api.post("/api/v1/statuses", { status: "the original" });
    const texts = Array.from({ length: 10 }, (_, i) => `edit number ${i}`);
    const res = await editAtOnce(
      a,
      s.body.id,
      texts.map((status) => ({ status })),
    );
    const applied = res.filter((r) => r.status === 200).map((r) => r.body.content as string);
    console.log("10 concurrent edits:", applied.length, "answered 200;", res.filter((r) => r.status !== 200).length, "refused");
    expect(applied.length).toBeGreaterThan(0);
    const history = await historyOf(s.body.id);
    console.log("history entries after 10 concurrent edits:", history.length);
    const now = (await a.api.get(`/api/v1/statuses/${s.body.id}`)).body;
    expectSerialHistory(history, paragraph("the original"), applied, now.content);
    expect(Date.parse(now.edited_at)).toBe(Date.parse(history.at(-1)!.created_at));
    // Every applied edit federated and announced itself once; a lost attempt recorded nothing.
    expect(jobs.filter((j) => j.type === "status_updated")).toHaveLength(applied.length);
    // A later edit on its own still adds exactly one entry.
    const after = await a.api.put(`/api/v1/statuses/${s.body.id}`, { status: "one more" });
    expect(after.status).toBe(200);
    expectSerialHistory(await historyOf(s.body.id), paragraph("the original"), [...applied, paragraph("one more")], paragraph("one more"));
  });

  it("concurrent edits that change a poll: each entry carries its own options, the last one the poll as it is", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const s = await a.api.post("/api/v1/statuses", { status: "which?", poll: { options: ["x", "y"], expires_in: 3600 } });
    expect((await b.api.post(`/api/v1/polls/${s.body.poll.id}/votes`, { choices: [0] })).status).toBe(200);
    const res = await editAtOnce(
      a,
      s.body.id,
      Array.from({ length: 6 }, (_, i) => ({ status: `which now ${i}?`, poll: { options: ["x", `z${i}`], expires_in: 3600 } })),
    );
    const ok = res.filter((r) => r.status === 200);
    const history = await historyOf(s.body.id);
    const now = (await a.api.get(`/api/v1/statuses/${s.body.id}`)).body;
    expectSerialHistory(
      history,
      paragraph("which?"),
      ok.map((r) => r.body.content),
      now.content,
    );
    expect(history[0]!.poll).toEqual({ options: [{ title: "x" }, { title: "y" }] });
    for (const r of ok) {
      const entry = history.find((h) => h.content === r.body.content)!;
      expect(entry.poll).toEqual({ options: r.body.poll.options.map((o: { title: string }) => ({ title: o.title })) });
    }
    expect(history.at(-1)!.poll).toEqual({ options: now.poll.options.map((o: { title: string }) => ({ title: o.title })) });
    expect(now.poll.votes_count).toBe(0);
    const polls = await env.DB.prepare("SELECT count(*) AS n FROM polls WHERE status_id = ?").bind(s.body.id.padStart(20, "0")).first<{ n: number }>();
    expect(polls?.n).toBe(1);
  });

  it("concurrent edits that change the media: each entry shows its own, the status holds only the last one's", async () => {
    const a = await makeUser();
    const first = await makeMedia(a.id);
    const s = await a.api.post("/api/v1/statuses", { status: "a picture", media_ids: [first] });
    const media = await Promise.all(Array.from({ length: 6 }, () => makeMedia(a.id)));
    const res = await editAtOnce(
      a,
      s.body.id,
      media.map((m, i) => ({ status: `another picture ${i}`, media_ids: [m] })),
    );
    const ok = res.filter((r) => r.status === 200);
    const history = await historyOf(s.body.id);
    const now = (await a.api.get(`/api/v1/statuses/${s.body.id}`)).body;
    expectSerialHistory(
      history,
      paragraph("a picture"),
      ok.map((r) => r.body.content),
      now.content,
    );
    expect(history[0]!.media_attachments.map((m) => m.id)).toEqual([first]);
    for (const r of ok) {
      const entry = history.find((h) => h.content === r.body.content)!;
      expect(entry.media_attachments.map((m) => m.id)).toEqual(r.body.media_attachments.map((m: { id: string }) => m.id));
    }
    const current = now.media_attachments.map((m: { id: string }) => m.id);
    expect(history.at(-1)!.media_attachments.map((m) => m.id)).toEqual(current);
    const attached = await env.DB.prepare("SELECT id FROM media_attachments WHERE status_id = ?").bind(s.body.id.padStart(20, "0")).all<{ id: string }>();
    expect(attached.results.map((m) => String(BigInt(m.id)))).toEqual(current);
  });
});

describe("the cost of one edit", () => {
  async function put(u: TestUser, id: string, body: unknown) {
    const ctx = createExecutionContext();
    const req = new Request(`${ORIGIN}/api/v1/statuses/${id}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${u.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const res = await worker.fetch(req, { ...env, DEV_SERVER_TIMING: "true" } as typeof env, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    const out: Record<string, number> = {};
    for (const part of (res.headers.get("server-timing") ?? "").split(",")) {
      const m = /^\s*([\w-]+)\b.*;\s*dur=(\d+)/.exec(part);
      if (m?.[1] && m[2]) out[m[1]] = Number(m[2]);
    }
    return out;
  }

  it("a first edit and a later one: four round trips each (the token, the read, the write, the rendering)", async () => {
    captureJobs();
    const a = await makeUser();
    const s = await a.api.post("/api/v1/statuses", { status: "counting" });
    const first = await put(a, s.body.id, { status: "counting again" });
    const second = await put(a, s.body.id, { status: "counting once more" });
    console.log("first edit:", JSON.stringify(first), "later edit:", JSON.stringify(second));
    expect(first.d1).toBe(4);
    expect(second.d1).toBe(4);
    vi.restoreAllMocks();
  });
});

describe("concurrent Update{Note} of one remote status", () => {
  beforeAll(() => installFetchMock());

  it("Updates processed at once: the original plus one entry per applied Update, the newest one current", async () => {
    const bob = await remoteActor("bob");
    const n = note(bob, { content: "<p>from afar</p>", published: new Date(Date.now() - 60_000).toISOString() });
    await postInbox(bob, create(bob, n));
    await runJobs();
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", n.id);
    const id = String(BigInt(row.id));
    const base = Date.now() - 30_000;
    const updates = Array.from({ length: 6 }, (_, i) => ({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${n.id}#updates/${i}`,
      type: "Update",
      actor: bob.uri,
      object: { ...n, content: `<p>remote edit ${i}</p>`, updated: new Date(base + i * 1000).toISOString() },
    }));
    queued.jobs.length = 0;
    for (const u of updates) expect((await postInbox(bob, u)).status).toBe(202);
    // The inbox items processed at once, as two invocations would.
    const items = queued.jobs.splice(0, queued.jobs.length);
    expect(items.length).toBe(updates.length);
    const db = createDb(env.DB);
    await Promise.all(items.map((job) => runJob(db, env, job)));
    await runJobs();
    const history = await historyOf(id);
    console.log("history entries after 6 concurrent Updates:", history.length);
    const now = (await anon.get(`/api/v1/statuses/${id}`)).body;
    // The newest Update wins whatever order they were processed in; older ones may be dropped as stale.
    expect(now.content).toBe("<p>remote edit 5</p>");
    expect(Date.parse(now.edited_at)).toBe(base + 5000);
    const contents = history.map((h) => h.content);
    expect(contents[0]).toBe("<p>from afar</p>");
    expect(new Set(contents).size).toBe(contents.length);
    expect(contents.at(-1)).toBe(now.content);
    expect(history.length).toBeGreaterThanOrEqual(2);
    // In the order of their `updated`: an Update applied after a newer one would be stale.
    const order = contents.slice(1).map((c) => Number(/remote edit (\d)/.exec(c)?.[1]));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    const times = history.map((h) => Date.parse(h.created_at));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1]!);
    const edits = await sql("SELECT count(*) AS n FROM status_edits WHERE status_id = ?", row.id);
    expect(edits[0].n).toBe(history.length);
  });
});

describe("the cost of one Update{Note} received", () => {
  beforeAll(() => installFetchMock());

  it("a first Update and a later one: four round trips each to process", async () => {
    const bob = await remoteActor("bob");
    const n = note(bob, { content: "<p>v0</p>", published: new Date(Date.now() - 60_000).toISOString() });
    await postInbox(bob, create(bob, n));
    await runJobs();
    const processed = async (i: number) => {
      queued.jobs.length = 0;
      const update = {
        id: `${n.id}#updates/${i}`,
        type: "Update",
        actor: bob.uri,
        object: { ...n, content: `<p>v${i}</p>`, updated: new Date(Date.now() - 10_000 + i).toISOString() },
      };
      expect((await postInbox(bob, update)).status).toBe(202);
      const counter: D1Count = { n: 0 };
      const db = createDb(countingD1(env.DB, counter, { rows: true }));
      for (const j of queued.jobs.splice(0).filter((j) => j.type === "inbox")) await runJob(db, env, j);
      await runJobs();
      return { d1: counter.n, d1q: counter.q, d1r: counter.r, d1w: counter.w };
    };
    const first = await processed(1);
    const second = await processed(2);
    console.log("first Update processed:", JSON.stringify(first), "later Update:", JSON.stringify(second));
    expect(first.d1).toBe(4);
    expect(second.d1).toBe(4);
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", n.id);
    expect((await historyOf(String(BigInt(row.id)))).map((h) => h.content)).toEqual(["<p>v0</p>", "<p>v1</p>", "<p>v2</p>"]);
  });
});
