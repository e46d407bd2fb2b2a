// Account migration (src/services/accounts/account-migration.ts, src/federation/inbox/handlers/move.ts): aliases (alsoKnownAs),
// moving out (Move federated, local followers moved, `moved` rendered, no more posting) and moving in (a Move accepted
// only when the target lists the origin in alsoKnownAs; local followers follow the target; `move` notifications).
import { env, SELF } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { runJob } from "../../src/background/effects-runner";
import type { JobMessage } from "../../src/effects/types";
import { ORIGIN, makeUser, type TestUser } from "./helpers";
import { deliver, installFetchMock, newId, remoteActor, type RemoteActor, serveJson, sql, pad } from "./federation-inbox-fixtures";
import { addFollow, take } from "./federation-outbound-fixtures";
import { queued, unpack } from "./queues";

beforeAll(() => installFetchMock());

const PASSWORD = "correct horse battery staple";
const localUri = (u: TestUser) => `${ORIGIN}/users/${u.username}`;
const num = (id: string) => String(BigInt(id));

/** Serves WebFinger for a remote actor (what resolving its handle asks first). */
function serveWebfinger(a: RemoteActor) {
  const resource = encodeURIComponent(`acct:${a.name}@${a.host}`);
  serveJson(
    a.host,
    `/.well-known/webfinger?resource=${resource}`,
    { subject: `acct:${a.name}@${a.host}`, links: [{ rel: "self", type: "application/activity+json", href: a.uri }] },
    "application/jrd+json",
  );
}

/** Serves a remote actor's document as it is at each fetch (`a.doc` may change between fetches). */
function serveLive(a: RemoteActor) {
  fetchMock
    .get(`https://${a.host}`)
    .intercept({ path: new URL(a.uri).pathname })
    .reply(200, () => JSON.stringify(a.doc), { headers: { "content-type": "application/activity+json" } })
    .persist();
}

async function accountIdOf(uri: string): Promise<string> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", uri);
  return num(row!.id);
}

async function actorDoc(u: TestUser) {
  const res = await SELF.fetch(localUri(u), { headers: { accept: "application/activity+json" } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

/** Runs the federate jobs among `jobs` whose action is `kind`, then whatever they queued (federate ones recorded only). */
async function runFederate(jobs: JobMessage[], kind: string) {
  const db = createDb(env.DB);
  for (const j of jobs.flatMap(unpack)) if (j.type === "federate" && j.action.kind === kind) await runJob(db, env, j);
}

async function following(u: TestUser, targetId: string) {
  const rel = await u.api.get(`/api/v1/accounts/relationships?id[]=${targetId}`);
  return rel.body[0] as { following: boolean; requested: boolean };
}

describe("aliases", () => {
  it("adds a remote alias by WebFinger, shows it as alsoKnownAs, lists and removes it", async () => {
    const a = await makeUser("ali");
    const old = await remoteActor("oldali", "old.example");
    serveWebfinger(old);
    const added = await a.api.post("/api/tern/aliases", { acct: "@oldali@old.example" });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ acct: "oldali@old.example", uri: old.uri });
    expect((await actorDoc(a)).alsoKnownAs).toEqual([old.uri]);
    const again = await a.api.post("/api/tern/aliases", { acct: "oldali@old.example" });
    expect(again.status).toBe(422);
    const list = await a.api.get("/api/tern/aliases");
    expect(list.body.map((x: any) => x.uri)).toEqual([old.uri]);
    // An update of the actor goes to followers' servers (none here: nothing is sent).
    expect((await a.api.delete(`/api/tern/aliases/${added.body.id}`)).status).toBe(200);
    expect((await a.api.get("/api/tern/aliases")).body).toEqual([]);
    expect((await actorDoc(a)).alsoKnownAs).toBeUndefined();
    expect((await a.api.delete(`/api/tern/aliases/${added.body.id}`)).status).toBe(404);
  });

  it("refuses an unknown handle and the account itself; takes a local account", async () => {
    const a = await makeUser("alo");
    const b = await makeUser("blo");
    expect((await a.api.post("/api/tern/aliases", { acct: "nobody@nowhere.example" })).status).toBe(422);
    expect((await a.api.post("/api/tern/aliases", { acct: "alo" })).status).toBe(422);
    const local = await a.api.post("/api/tern/aliases", { acct: "blo" });
    expect(local.status).toBe(200);
    expect(local.body.uri).toBe(localUri(b));
    expect((await a.api.get("/api/tern/aliases")).status).toBe(200);
  });
});

describe("moving out", () => {
  it("needs the password and the target's alsoKnownAs; then federates Move, moves local followers, renders moved", async () => {
    const a = await makeUser("mover");
    const local = await makeUser("fan");
    const follower = await remoteActor("rfan", "followers.example");
    // The new account lists `mover` only after the first try: its document is read from `target.doc` at each fetch.
    const target = await remoteActor("newme", "new.example", { serve: false });
    serveLive(target);
    serveWebfinger(target);

    expect((await local.api.post(`/api/v1/accounts/${a.id}/follow`)).status).toBe(200);
    const list = await local.api.post("/api/v1/lists", { title: "friends" });
    expect((await local.api.post(`/api/v1/lists/${list.body.id}/accounts`, { account_ids: [a.id] })).status).toBe(200);
    await deliver(follower, { id: newId(follower), type: "Follow", actor: follower.uri, object: localUri(a) });
    const followerId = await accountIdOf(follower.uri);
    expect((await sql("SELECT 1 FROM follows WHERE account_id = ? AND target_account_id = ?", pad(followerId), pad(a.id))).length).toBe(1);
    await take();

    const wrong = await a.api.post("/api/tern/migration", { acct: "newme@new.example", current_password: "nope" });
    expect(wrong.status).toBe(422);
    const noAlias = await a.api.post("/api/tern/migration", { acct: "newme@new.example", current_password: PASSWORD });
    expect(noAlias.status).toBe(422);
    expect(noAlias.body.error).toMatch(/alias/);

    // The target now lists mover (fetched fresh: its stored copy is seconds old).
    target.doc.alsoKnownAs = [localUri(a)];
    const moved = await a.api.post("/api/tern/migration", { acct: "newme@new.example", current_password: PASSWORD });
    expect(moved.status).toBe(200);
    expect(moved.body.moved_to).toMatchObject({ acct: "newme@new.example" });
    const targetId = moved.body.moved_to.id as string;

    const sent = await take();
    const move = sent.find((s) => s.activity.type === "Move");
    expect(move?.activity).toMatchObject({ type: "Move", actor: localUri(a), object: localUri(a), target: target.uri });
    expect(move?.inboxes).toEqual(["https://followers.example/inbox"]);
    const update = sent.find((s) => s.activity.type === "Update");
    expect(update?.activity.object).toMatchObject({ id: localUri(a), movedTo: target.uri });
    // The local follower asked to follow the new account (a Follow to its server) and left the old one.
    const follow = sent.find((s) => s.activity.type === "Follow");
    expect(follow?.activity).toMatchObject({ actor: localUri(local), object: target.uri });
    expect(follow?.inboxes).toEqual([target.inbox]);
    expect(await following(local, a.id)).toMatchObject({ following: false });
    expect(await following(local, targetId)).toMatchObject({ requested: true });
    // Lists keep their member moved.
    const members = await local.api.get(`/api/v1/lists/${list.body.id}/accounts`);
    expect(members.body.map((x: any) => x.id)).toEqual([targetId]);
    // The follower was told (a `move` notification, with the new account as target).
    const notes = await local.api.get("/api/v1/notifications");
    const note = notes.body.find((n: any) => n.type === "move");
    expect(note).toMatchObject({ account: { id: a.id }, target: { id: targetId } });

    const shown = await local.api.get(`/api/v1/accounts/${a.id}`);
    expect(shown.body.moved).toMatchObject({ id: targetId, acct: "newme@new.example" });
    expect(shown.body.moved.moved).toBeUndefined();
    expect((await actorDoc(a)).movedTo).toBe(target.uri);
    const post = await a.api.post("/api/v1/statuses", { status: "still here?" });
    expect(post.status).toBe(422);
    // A second move within 30 days is refused.
    expect((await a.api.post("/api/tern/migration", { acct: "fan", current_password: PASSWORD })).status).toBe(422);
    expect((await a.api.get("/api/tern/migration")).body).toMatchObject({ moved_to: { id: targetId } });
  });
});

describe("moving in", () => {
  it("refuses a Move whose target does not list the origin, accepts it once it does", async () => {
    const a = await makeUser("newhome");
    const b = await makeUser("watcher");
    const old = await remoteActor("wanderer", "old2.example");
    serveWebfinger(old);
    // Make the old account known, then b follows it (rows as an accepted Follow leaves them).
    await deliver(old, { id: newId(old), type: "Like", actor: old.uri, object: `${localUri(b)}/statuses/1` });
    const oldId = await accountIdOf(old.uri);
    await addFollow(b.id, oldId, `${ORIGIN}/follows/1`);
    const list = await b.api.post("/api/v1/lists", { title: "far" });
    expect((await b.api.post(`/api/v1/lists/${list.body.id}/accounts`, { account_ids: [oldId] })).status).toBe(200);

    const moveTo = (target: string) => ({ id: newId(old), type: "Move", actor: old.uri, object: old.uri, target });
    let r = await deliver(old, moveTo(localUri(a)));
    expect(r.status).toBe(202);
    await runFederate(r.jobs, "move_followers");
    expect((await sql("SELECT moved_to_account_id FROM accounts WHERE id = ?", pad(oldId)))[0]!.moved_to_account_id).toBeNull();
    expect(await following(b, oldId)).toMatchObject({ following: true });

    // A Move of someone else (object ≠ actor) is refused too.
    const other = await remoteActor("other", "old2.example");
    r = await deliver(other, { id: newId(other), type: "Move", actor: other.uri, object: old.uri, target: localUri(a) });
    expect((await sql("SELECT moved_to_account_id FROM accounts WHERE id = ?", pad(oldId)))[0]!.moved_to_account_id).toBeNull();

    expect((await a.api.post("/api/tern/aliases", { acct: "wanderer@old2.example" })).status).toBe(200);
    r = await deliver(old, moveTo(localUri(a)));
    await runFederate(r.jobs, "move_followers");
    queued.jobs.length = 0;
    expect(num((await sql("SELECT moved_to_account_id FROM accounts WHERE id = ?", pad(oldId)))[0]!.moved_to_account_id)).toBe(a.id);
    expect(await following(b, oldId)).toMatchObject({ following: false });
    expect(await following(b, a.id)).toMatchObject({ following: true });
    const followers = await a.api.get(`/api/v1/accounts/${a.id}/followers`);
    expect(followers.body.map((x: any) => x.id)).toEqual([b.id]);
    const members = await b.api.get(`/api/v1/lists/${list.body.id}/accounts`);
    expect(members.body.map((x: any) => x.id)).toEqual([a.id]);
    const notes = await b.api.get("/api/v1/notifications?types[]=move");
    expect(notes.body).toHaveLength(1);
    expect(notes.body[0]).toMatchObject({ type: "move", account: { id: oldId }, target: { id: a.id } });
    const shown = await b.api.get(`/api/v1/accounts/${oldId}`);
    expect(shown.body.moved).toMatchObject({ id: a.id, acct: "newhome" });
  });

  it("moves local followers to a remote target that lists the origin: a Follow is sent", async () => {
    const b = await makeUser("watcher2");
    const old = await remoteActor("leaver", "old3.example");
    const target = await remoteActor("arrival", "new3.example", { docPatch: { alsoKnownAs: [old.uri] } });
    await deliver(old, { id: newId(old), type: "Like", actor: old.uri, object: `${localUri(b)}/statuses/1` });
    const oldId = await accountIdOf(old.uri);
    await addFollow(b.id, oldId, `${ORIGIN}/follows/2`);
    const r = await deliver(old, { id: newId(old), type: "Move", actor: old.uri, object: old.uri, target: target.uri });
    await runFederate(r.jobs, "move_followers");
    const targetId = await accountIdOf(target.uri);
    expect(await following(b, targetId)).toMatchObject({ requested: true });
    expect(await following(b, oldId)).toMatchObject({ following: false });
    const sent = await take();
    expect(sent.find((s) => s.activity.type === "Follow")?.activity).toMatchObject({ actor: localUri(b), object: target.uri });
    expect(sent.find((s) => s.activity.type === "Undo")?.activity).toMatchObject({ actor: localUri(b), object: { type: "Follow", object: old.uri } });
  });
});
