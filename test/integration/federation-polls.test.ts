// Poll votes federate both ways (Mastodon's shapes): a remote vote (Create{Note} with `name` = option, `inReplyTo` =
// the Question) counts on a local poll and never becomes a status or a notification; the Question then goes back
// with its counts in one Update{Question}; a local vote on a remote poll is delivered to the poll's author; a remote
// Update{Question} moves the counts shown here.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { notifyEndedPolls } from "../../src/background/cron";
import { runJob } from "../../src/background/effects-runner";
import { Effects } from "../../src/effects/collector";
import type { JobMessage } from "../../src/effects/types";
import { countingD1 } from "../../src/lib/limits/d1-counter";
import { anon, makeUser, ORIGIN, type TestUser } from "./helpers";
import { AS_PUBLIC, create, deliver, installFetchMock, newId, note, pad, postInbox, remoteActor, sql, type RemoteActor } from "./federation-inbox-fixtures";
import { addFollow, remoteAccount, take } from "./federation-outbound-fixtures";
import { queued, runQueuedJobs } from "./queues";

beforeAll(() => installFetchMock());

const localUri = (u: TestUser) => `${ORIGIN}/users/${u.username}`;
let voteSeq = 0;

/** A vote as Mastodon's VoteSerializer writes it. */
function voteCreate(voter: RemoteActor, question: { uri: string; author: string }, name: string, extra: Record<string, unknown> = {}) {
  const id = `${voter.uri}#votes/${Date.now()}${++voteSeq}`;
  return {
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${id}/activity`,
    type: "Create",
    actor: voter.uri,
    to: question.author,
    object: { id, type: "Note", name, attributedTo: voter.uri, inReplyTo: question.uri, to: question.author, ...extra },
  };
}

async function pollStatus(u: TestUser, poll: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await u.api.post("/api/v1/statuses", { status: "which one?", poll: { expires_in: 600, ...poll }, ...extra });
  expect(res.status).toBe(200);
  await runQueuedJobs();
  return { id: res.body.id as string, uri: res.body.uri as string, pollId: res.body.poll.id as string, author: localUri(u) };
}

const pollOf = async (u: TestUser, pollId: string) => (await u.api.get(`/api/v1/polls/${pollId}`)).body;
const pollRow = async (pollId: string) =>
  (await sql("SELECT votes_count, voters_count, votes_per_option, update_queued_at FROM polls WHERE id = ?", pad(pollId)))[0];
const federateJobs = (jobs: JobMessage[], kind: string) => jobs.filter((j) => j.type === "federate" && j.action.kind === kind);
const statusesWithUri = async (uri: string) => (await sql("SELECT count(*) AS n FROM statuses WHERE uri = ?", uri))[0].n;

/** Runs recorded federate jobs the way the JOBS consumer does (the update_poll one waits once, then sends). */
async function runFederateJobs(jobs: JobMessage[]) {
  const db = createDb(env.DB);
  for (const j of jobs) await runJob(db, env, j);
  await runQueuedJobs();
}

async function remoteAccountId(a: RemoteActor): Promise<string> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", a.uri);
  return String(BigInt(row.id));
}

describe("incoming votes on a local poll", () => {
  it("count, create no status or notification, and the Question goes back with its counts", async () => {
    const alice = await makeUser("alice");
    const fan = await remoteAccount("fan", "followers.example");
    await addFollow(fan.id, alice.id);
    const q = await pollStatus(alice, { options: ["yes", "no"] });
    const bob = await remoteActor("bob");

    const vote = voteCreate(bob, q, "no");
    const r = await deliver(bob, vote, `/users/${alice.username}/inbox`);
    expect(r.status).toBe(202);

    const p = await pollOf(alice, q.pollId);
    expect(p.votes_count).toBe(1);
    expect(p.options).toEqual([
      { title: "yes", votes_count: 0 },
      { title: "no", votes_count: 1 },
    ]);
    expect((await pollRow(q.pollId)).voters_count).toBe(1);
    // Not a status, not a reply, not a mention.
    expect(await statusesWithUri(vote.object.id)).toBe(0);
    expect((await alice.api.get(`/api/v1/statuses/${q.id}/context`)).body.descendants).toEqual([]);
    expect((await alice.api.get(`/api/v1/statuses/${q.id}`)).body.replies_count).toBe(0);
    expect((await alice.api.get("/api/v1/notifications")).body).toEqual([]);
    const [stored] = await sql("SELECT uri, choice FROM poll_votes WHERE poll_id = ?", pad(q.pollId));
    expect(stored).toEqual({ uri: vote.object.id, choice: 1 });

    // One Update{Question} is queued; after its wait it carries the counts to the voter's server and the followers.
    const updates = federateJobs(r.jobs, "update_poll");
    expect(updates).toHaveLength(1);
    await runFederateJobs(updates);
    const [update, ...more] = await take("Update");
    expect(more).toEqual([]);
    expect(update.inboxes).toEqual(["https://followers.example/inbox", "https://remote.example/inbox"]);
    expect(update.activity).toMatchObject({ type: "Update", actor: q.author, id: expect.stringMatching(new RegExp(`^${q.uri}#updates/\\d+$`)) });
    expect(update.activity.object).toMatchObject({
      id: q.uri,
      type: "Question",
      votersCount: 1,
      oneOf: [
        { type: "Note", name: "yes", replies: { type: "Collection", totalItems: 0 } },
        { type: "Note", name: "no", replies: { type: "Collection", totalItems: 1 } },
      ],
    });
    expect((await pollRow(q.pollId)).update_queued_at).toBeNull();
  });

  it("one vote per voter on a single-choice poll; each option once per voter on a multiple-choice poll", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const dee = await remoteActor("dee", "other.example");
    const single = await pollStatus(alice, { options: ["a", "b", "c"] });
    await deliver(bob, voteCreate(bob, single, "a"));
    const second = voteCreate(bob, single, "b");
    await deliver(bob, second);
    expect((await pollOf(alice, single.pollId)).options.map((o: any) => o.votes_count)).toEqual([1, 0, 0]);
    expect(await statusesWithUri(second.object.id)).toBe(0);

    const multi = await pollStatus(alice, { options: ["a", "b", "c"], multiple: true });
    await deliver(bob, voteCreate(bob, multi, "a"));
    await deliver(bob, voteCreate(bob, multi, "c"));
    await deliver(bob, voteCreate(bob, multi, "c")); // the same option again: refused
    await deliver(dee, voteCreate(dee, multi, "c"));
    const p = await pollOf(alice, multi.pollId);
    expect(p.options.map((o: any) => o.votes_count)).toEqual([1, 0, 2]);
    expect(p.votes_count).toBe(3);
    expect(p.voters_count).toBe(2);
  });

  it("several votes while an Update waits travel in that one Update; the next vote queues another", async () => {
    const alice = await makeUser("alice");
    const q = await pollStatus(alice, { options: ["a", "b"] });
    const bob = await remoteActor("bob");
    const dee = await remoteActor("dee", "other.example");
    const first = await deliver(bob, voteCreate(bob, q, "a"));
    const secondVote = await deliver(dee, voteCreate(dee, q, "b"));
    expect(federateJobs(first.jobs, "update_poll")).toHaveLength(1);
    expect(federateJobs(secondVote.jobs, "update_poll")).toHaveLength(0);
    await runFederateJobs(federateJobs(first.jobs, "update_poll"));
    const [update] = await take("Update");
    expect(update.activity.object.oneOf.map((o: any) => o.replies.totalItems)).toEqual([1, 1]);
    expect(update.inboxes).toEqual(["https://other.example/inbox", "https://remote.example/inbox"]);

    const eve = await remoteActor("eve", "third.example");
    const third = await deliver(eve, voteCreate(eve, q, "a"));
    expect(federateJobs(third.jobs, "update_poll")).toHaveLength(1);
  });

  it("a poll that hides its totals counts votes but sends no counts", async () => {
    const alice = await makeUser("alice");
    const q = await pollStatus(alice, { options: ["a", "b"], hide_totals: true });
    const bob = await remoteActor("bob");
    const r = await deliver(bob, voteCreate(bob, q, "b"));
    expect(federateJobs(r.jobs, "update_poll")).toEqual([]);
    expect((await pollOf(alice, q.pollId)).options.map((o: any) => o.votes_count)).toEqual([0, 1]);
  });

  it("once the poll ends, the closed Question goes to the voters' servers with its final counts, hidden totals included, once", async () => {
    const alice = await makeUser("alice");
    const fan = await remoteAccount("fan", "followers.example");
    await addFollow(fan.id, alice.id);
    const q = await pollStatus(alice, { options: ["yes", "no"], hide_totals: true });
    const bob = await remoteActor("bob");
    await deliver(bob, voteCreate(bob, q, "yes"));
    await take();
    const ended = Date.now() - 1000;
    await sql("UPDATE polls SET expires_at = ? WHERE id = ?", ended, pad(q.pollId));

    const db = createDb(env.DB);
    const fx = new Effects(ORIGIN);
    expect(await notifyEndedPolls(db, fx, Date.now())).toBe(1);
    const finals = fx.drain().filter((e) => e.type === "federate" && e.action.kind === "update_poll");
    expect(finals).toHaveLength(1);
    await runFederateJobs(finals as JobMessage[]);
    const [update, ...more] = await take("Update");
    expect(more).toEqual([]);
    expect(update.inboxes).toEqual(["https://followers.example/inbox", "https://remote.example/inbox"]);
    expect(update.activity.object).toMatchObject({
      id: q.uri,
      type: "Question",
      closed: new Date(ended).toISOString(),
      votersCount: 1,
      oneOf: [
        { type: "Note", name: "yes", replies: { type: "Collection", totalItems: 1 } },
        { type: "Note", name: "no", replies: { type: "Collection", totalItems: 0 } },
      ],
    });

    // The next run has nothing left to close.
    const again = new Effects(ORIGIN);
    expect(await notifyEndedPolls(db, again, Date.now())).toBe(0);
    expect(again.drain().filter((e) => e.type === "federate")).toEqual([]);
  });

  it("votes on a closed poll, for an option it lacks, by someone else's hand, or from a blocked voter are dropped", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const mallory = await remoteActor("mallory", "remote.example");
    const q = await pollStatus(alice, { options: ["a", "b"] });

    const unknown = voteCreate(bob, q, "z");
    await deliver(bob, unknown);
    const forged = voteCreate(bob, q, "a", { attributedTo: mallory.uri });
    await deliver(bob, forged);
    expect((await pollRow(q.pollId)).votes_count).toBe(0);
    expect(await statusesWithUri(unknown.object.id)).toBe(0);
    expect(await statusesWithUri(forged.object.id)).toBe(0);

    const closed = await pollStatus(alice, { options: ["a", "b"] });
    await env.DB.prepare("UPDATE polls SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1000, pad(closed.pollId))
      .run();
    const late = voteCreate(bob, closed, "a");
    const r = await deliver(bob, late);
    expect(r.status).toBe(202);
    expect((await pollRow(closed.pollId)).votes_count).toBe(0);
    expect(await statusesWithUri(late.object.id)).toBe(0);
    expect(federateJobs(r.jobs, "update_poll")).toEqual([]);

    await alice.api.post(`/api/v1/accounts/${await remoteAccountId(bob)}/block`);
    await runQueuedJobs();
    await deliver(bob, voteCreate(bob, q, "a"));
    expect((await pollRow(q.pollId)).votes_count).toBe(0);

    // A followers-only poll takes no vote from someone who does not follow.
    const priv = await pollStatus(alice, { options: ["a", "b"] }, { visibility: "private" });
    await deliver(mallory, voteCreate(mallory, priv, "a"));
    expect((await pollRow(priv.pollId)).votes_count).toBe(0);
    await addFollow(await remoteAccountId(mallory), alice.id);
    await deliver(mallory, voteCreate(mallory, priv, "a"));
    expect((await pollRow(priv.pollId)).votes_count).toBe(1);
  });

  it("a titled reply with content to a poll stays an ordinary reply", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const q = await pollStatus(alice, { options: ["a", "b"] });
    const reply = note(bob, { name: "Re: which one?", inReplyTo: q.uri, content: "<p>neither!</p>" });
    await deliver(bob, create(bob, reply));
    expect(await statusesWithUri(reply.id as string)).toBe(1);
    expect((await pollRow(q.pollId)).votes_count).toBe(0);
  });

  it("a local voter on a local poll queues the Update for remote followers", async () => {
    const alice = await makeUser("alice");
    const carol = await makeUser("carol");
    const fan = await remoteAccount("fan", "followers.example");
    await addFollow(fan.id, alice.id);
    const q = await pollStatus(alice, { options: ["a", "b"] });
    await take();
    const v = await carol.api.post(`/api/v1/polls/${q.pollId}/votes`, { choices: [1] });
    expect(v.status).toBe(200);
    const [update, ...rest] = await take();
    expect(rest).toEqual([]);
    expect(update.activity.type).toBe("Update");
    expect(update.inboxes).toEqual(["https://followers.example/inbox"]);
    expect(update.activity.object.oneOf.map((o: any) => o.replies.totalItems)).toEqual([0, 1]);
  });

  it("D1 round trips of an incoming vote: the signed POST and its processing", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const warm = await pollStatus(alice, { options: ["a", "b"] });
    await deliver(bob, voteCreate(bob, warm, "a")); // bob's actor and key are known from here on
    const q = await pollStatus(alice, { options: ["a", "b"] });
    queued.jobs.length = 0;

    const res = await postInbox(bob, voteCreate(bob, q, "b"), { path: `/users/${alice.username}/inbox` });
    expect(res.status).toBe(202);
    const post = Number(/d1;[^,]*dur=(\d+)/.exec(res.headers.get("server-timing") ?? "")?.[1]);
    const inbox = queued.jobs.splice(0);
    const counter = { n: 0 };
    const db = createDb(countingD1(env.DB, counter));
    for (const j of inbox) await runJob(db, env, j);
    console.log(`incoming vote: POST /inbox ${post} D1 round trips; processing ${counter.n} D1 round trips`);
    expect((await pollRow(q.pollId)).votes_count).toBe(1);
    expect(post).toBeLessThanOrEqual(4);
    expect(counter.n).toBeLessThanOrEqual(7);
  });
});

describe("a local voter on a remote poll", () => {
  async function remoteQuestion(bob: RemoteActor, extra: Record<string, unknown> = {}) {
    const question = note(bob, {
      type: "Question",
      content: "<p>pick some</p>",
      anyOf: ["red", "green", "blue"].map((name) => ({ type: "Note", name, replies: { type: "Collection", totalItems: 0 } })),
      endTime: new Date(Date.now() + 3_600_000).toISOString(),
      votersCount: 0,
      ...extra,
    });
    await deliver(bob, create(bob, question));
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", question.id);
    const id = String(BigInt(row.id));
    const s = await anon.get(`/api/v1/statuses/${id}`);
    return { question, id, pollId: s.body.poll.id as string };
  }

  it("is stored here and delivered as one Create{Note} per choice to the poll's author", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const { question, pollId } = await remoteQuestion(bob);
    await take();
    const v = await alice.api.post(`/api/v1/polls/${pollId}/votes`, { choices: [0, 2] });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ voted: true, own_votes: [0, 2], votes_count: 2, voters_count: 1 });

    const creates = await take("Create");
    expect(creates).toHaveLength(2);
    const votes = await sql("SELECT id, choice FROM poll_votes WHERE poll_id = ? ORDER BY id", pad(pollId));
    creates.forEach((c, i) => {
      const voteId = String(BigInt(votes[i].id));
      expect(c.inboxes).toEqual([bob.inbox]);
      expect(c.accountId).toBe(alice.id);
      expect(c.activity).toEqual({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${localUri(alice)}#votes/${voteId}/activity`,
        type: "Create",
        actor: localUri(alice),
        to: bob.uri,
        object: {
          id: `${localUri(alice)}#votes/${voteId}`,
          type: "Note",
          name: ["red", "green", "blue"][votes[i].choice],
          attributedTo: localUri(alice),
          inReplyTo: question.id,
          to: bob.uri,
        },
      });
    });
    // Voting again is refused and sends nothing.
    expect((await alice.api.post(`/api/v1/polls/${pollId}/votes`, { choices: [1] })).status).toBe(422);
    expect(await take()).toEqual([]);
  });

  it("a remote Update{Question} sets the counts shown here, also when it is no new edit", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const { question, id, pollId } = await remoteQuestion(bob);
    await alice.api.post(`/api/v1/polls/${pollId}/votes`, { choices: [1] });
    const withCounts = (counts: number[], voters: number, extra: Record<string, unknown> = {}) => ({
      ...question,
      anyOf: ["red", "green", "blue"].map((name, i) => ({ type: "Note", name, replies: { type: "Collection", totalItems: counts[i] } })),
      votersCount: voters,
      ...extra,
    });
    const update = (obj: Record<string, unknown>) => ({ id: newId(bob), type: "Update", actor: bob.uri, to: [AS_PUBLIC], object: obj });

    await deliver(bob, update(withCounts([2, 5, 0], 6)));
    let p = await pollOf(alice, pollId);
    expect(p.options.map((o: any) => o.votes_count)).toEqual([2, 5, 0]);
    expect(p).toMatchObject({ votes_count: 7, voters_count: 6, own_votes: [1], voted: true });

    // An edit, then the counts sent after later votes carry the same `updated`: they still apply.
    const edited = new Date().toISOString();
    await deliver(bob, update(withCounts([2, 5, 0], 6, { content: "<p>pick some (edited)</p>", updated: edited })));
    expect((await alice.api.get(`/api/v1/statuses/${id}/history`)).body).toHaveLength(2);
    await deliver(bob, update(withCounts([3, 6, 1], 8, { content: "<p>pick some (edited)</p>", updated: edited })));
    p = await pollOf(alice, pollId);
    expect(p.options.map((o: any) => o.votes_count)).toEqual([3, 6, 1]);
    expect(p.voters_count).toBe(8);
    expect((await alice.api.get(`/api/v1/statuses/${id}/history`)).body).toHaveLength(2);
  });
});
