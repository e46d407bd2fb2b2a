// One writer per state change: a follow, a boost, a favourite and a block made by a local user (REST) and received
// from another server (the inbox) go through the same service function (beginFollow, reblogChange, favouriteChange,
// blockChange), so they leave the same rows: compared here column by column, less what names who did it and when.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { padId } from "../../src/lib/ids";
import { deliver, installFetchMock, newId, remoteActor, type RemoteActor } from "./federation-inbox-fixtures";
import { makeUser, ORIGIN, type TestUser } from "./helpers";
import { runQueuedJobs } from "./queues";

beforeAll(() => installFetchMock());

type Row = Record<string, unknown>;

/** Rows of `table` where `where` holds, without the columns that name the actor, the row and the moment. */
async function rows(table: string, where: string, binds: unknown[], drop: string[]): Promise<Row[]> {
  const { results } = await env.DB.prepare(`SELECT * FROM ${table} WHERE ${where}`)
    .bind(...binds)
    .all<Row>();
  return results.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !drop.includes(k))));
}

const WHO_AND_WHEN = ["id", "account_id", "from_account_id", "uri", "created_at", "updated_at", "activity_id", "group_key"];

/** The remote actor's account id once it is known here. */
async function accountIdOf(a: RemoteActor): Promise<string> {
  const row = await env.DB.prepare("SELECT id FROM accounts WHERE uri = ?").bind(a.uri).first<{ id: string }>();
  expect(row).not.toBeNull();
  return row!.id;
}

let target: TestUser;
let local: TestUser;
let remote: RemoteActor;
let seq = 0;

async function setUp() {
  target = await makeUser();
  local = await makeUser();
  remote = await remoteActor(`writer${++seq}`, "writers.example");
}

const actorUri = (u: TestUser) => `${ORIGIN}/users/${u.username}`;

describe("the API and the inbox leave the same rows", () => {
  it("a follow (Follow received, and POST /follow)", async () => {
    await setUp();
    expect((await local.api.post(`/api/v1/accounts/${target.id}/follow`)).status).toBe(200);
    const r = await deliver(remote, { id: newId(remote), type: "Follow", actor: remote.uri, object: actorUri(target) });
    expect(r.status).toBe(202);
    await runQueuedJobs();
    const remoteId = await accountIdOf(remote);
    const viaApi = await rows("follows", "account_id = ? AND target_account_id = ?", [padId(local.id), padId(target.id)], WHO_AND_WHEN);
    const viaInbox = await rows("follows", "account_id = ? AND target_account_id = ?", [remoteId, padId(target.id)], WHO_AND_WHEN);
    expect(viaApi).toHaveLength(1);
    expect(viaInbox).toEqual(viaApi);
    const notes = (from: string) => rows("notifications", "account_id = ? AND from_account_id = ?", [padId(target.id), from], WHO_AND_WHEN);
    expect(await notes(padId(local.id))).toHaveLength(1);
    expect(await notes(remoteId)).toEqual(await notes(padId(local.id)));
  });

  it("a boost (Announce received, and POST /reblog)", async () => {
    await setUp();
    const posted = await target.api.post("/api/v1/statuses", { status: "boost me" });
    expect((await local.api.post(`/api/v1/statuses/${posted.body.id}/reblog`)).status).toBe(200);
    const r = await deliver(remote, {
      id: newId(remote),
      type: "Announce",
      actor: remote.uri,
      object: posted.body.uri,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      cc: [`${remote.uri}/followers`],
    });
    expect(r.status).toBe(202);
    await runQueuedJobs();
    const remoteId = await accountIdOf(remote);
    const boosts = (by: string) =>
      rows("statuses", "account_id = ? AND reblog_of_id = ?", [by, padId(posted.body.id)], [...WHO_AND_WHEN, "local", "application_id"]);
    expect(await boosts(padId(local.id))).toHaveLength(1);
    expect(await boosts(remoteId)).toEqual(await boosts(padId(local.id)));
    const notes = (from: string) => rows("notifications", "account_id = ? AND from_account_id = ? AND type = 'reblog'", [padId(target.id), from], WHO_AND_WHEN);
    expect(await notes(padId(local.id))).toHaveLength(1);
    expect(await notes(remoteId)).toEqual(await notes(padId(local.id)));
  });

  it("a favourite (Like received, and POST /favourite)", async () => {
    await setUp();
    const posted = await target.api.post("/api/v1/statuses", { status: "like me" });
    expect((await local.api.post(`/api/v1/statuses/${posted.body.id}/favourite`)).status).toBe(200);
    const r = await deliver(remote, { id: newId(remote), type: "Like", actor: remote.uri, object: posted.body.uri });
    expect(r.status).toBe(202);
    await runQueuedJobs();
    const remoteId = await accountIdOf(remote);
    const favs = (by: string) => rows("favourites", "account_id = ? AND status_id = ?", [by, padId(posted.body.id)], WHO_AND_WHEN);
    expect(await favs(padId(local.id))).toHaveLength(1);
    expect(await favs(remoteId)).toEqual(await favs(padId(local.id)));
    const notes = (from: string) =>
      rows("notifications", "account_id = ? AND from_account_id = ? AND type = 'favourite'", [padId(target.id), from], WHO_AND_WHEN);
    expect(await notes(padId(local.id))).toHaveLength(1);
    expect(await notes(remoteId)).toEqual(await notes(padId(local.id)));
  });

  it("a block (Block received, and POST /block), which also ends the follows both ways", async () => {
    await setUp();
    // Each blocker follows the target and is followed by it first.
    expect((await local.api.post(`/api/v1/accounts/${target.id}/follow`)).status).toBe(200);
    expect((await target.api.post(`/api/v1/accounts/${local.id}/follow`)).status).toBe(200);
    await deliver(remote, { id: newId(remote), type: "Follow", actor: remote.uri, object: actorUri(target) });
    await runQueuedJobs();
    const remoteId = await accountIdOf(remote);
    expect((await local.api.post(`/api/v1/accounts/${target.id}/block`)).status).toBe(200);
    const r = await deliver(remote, { id: newId(remote), type: "Block", actor: remote.uri, object: actorUri(target) });
    expect(r.status).toBe(202);
    await runQueuedJobs();
    const blocksBy = (by: string) => rows("blocks", "account_id = ? AND target_account_id = ?", [by, padId(target.id)], WHO_AND_WHEN);
    expect(await blocksBy(padId(local.id))).toHaveLength(1);
    expect(await blocksBy(remoteId)).toEqual(await blocksBy(padId(local.id)));
    const followsBetween = (a: string) =>
      rows("follows", "(account_id = ?1 AND target_account_id = ?2) OR (account_id = ?2 AND target_account_id = ?1)", [a, padId(target.id)], []);
    expect(await followsBetween(padId(local.id))).toEqual([]);
    expect(await followsBetween(remoteId)).toEqual([]);
  });
});
