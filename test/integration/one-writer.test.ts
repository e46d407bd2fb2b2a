// One writer per state change: a follow, a boost, a favourite and a block made by a local user (REST) and received
// from another server (the inbox) go through the same service function (beginFollow, reblogChange, favouriteChange,
// blockChange), so they leave the same rows: compared here column by column, less what names who did it and when.
// Pins are written by services/interactions/pins.ts whether pinned here, added to a remote featured collection or read
// from one; quotes by services/statuses/quote-rows.ts whether posted here or arriving on a Note, and so are their state
// changes (granted, revoked, rejected) whichever side the quoted author is on.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { padId } from "../../src/lib/text/ids";
import { AS_PUBLIC, create, deliver, installFetchMock, newId, note, remoteActor, serveJson, type RemoteActor } from "./federation-inbox-fixtures";
import { anon, makeUser, ORIGIN, type TestUser } from "./helpers";
import { runQueuedJobs } from "./queues";

beforeAll(() => installFetchMock());

type Row = Record<string, unknown>;

/** Rows of `table` where `where` holds, without the columns that name the actor, the row and the moment. */
async function rows(table: string, where: string, binds: unknown[], drop: string[]): Promise<Row[]> {
  const { results } = await env.DB.prepare(`SELECT * FROM ${table} WHERE ${where}`)
    .bind(...binds)
    .all<Row>();
  return without(results, drop);
}

/** Drops `drop`'s columns from each row. */
function without(rs: Row[], drop: string[]): Row[] {
  return rs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !drop.includes(k))));
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

/** `accountId`'s pins, each told by whether it pins `statusId` and whether its id is its time (pins list newest first by id). */
async function pinsOf(accountId: string, statusId: string): Promise<Row[]> {
  const { results } = await env.DB.prepare(
    "SELECT p.*, p.status_id = ?2 AS pins_it, (CAST(p.id AS INTEGER) >> 16) = p.created_at AS id_is_time FROM status_pins p WHERE p.account_id = ?1",
  )
    .bind(accountId, statusId)
    .all<Row>();
  return without(results, [...WHO_AND_WHEN, "status_id"]);
}

/** The quote row of the status at `quotingUri`, with whether it quotes the status at `quotedUri` and that status's author. */
async function quoteOf(quotingUri: string, quotedUri: string, drop: string[]): Promise<Row[]> {
  const { results } = await env.DB.prepare(
    `SELECT q.*, q.quoted_status_id = s.id AS quotes_it, q.quoted_account_id = s.account_id AS quotes_its_author
     FROM quotes q, statuses s WHERE q.status_id = (SELECT id FROM statuses WHERE uri = ?1) AND s.uri = ?2`,
  )
    .bind(quotingUri, quotedUri)
    .all<Row>();
  return without(results, [...WHO_AND_WHEN, "status_id", ...drop]);
}

/** Quoted ids: each road quotes a status of its own. */
const QUOTED = ["quoted_status_id", "quoted_account_id"];
/** The QuoteRequest's id and the QuoteAuthorization's: a remote server's uris where one took part, null where none did. */
const EXCHANGE = ["activity_uri", "approval_uri"];

const canQuotePublic = { interactionPolicy: { canQuote: { automaticApproval: [AS_PUBLIC] } } };
const idOf = (padded: string) => String(BigInt(padded));

async function statusIdOf(uri: string): Promise<string> {
  const row = await env.DB.prepare("SELECT id FROM statuses WHERE uri = ?").bind(uri).first<{ id: string }>();
  expect(row).not.toBeNull();
  return row!.id;
}

/** A Note by `a` delivered to us; its uri. */
async function remotePost(a: RemoteActor, extra: Record<string, unknown> = {}): Promise<string> {
  const n = note(a, extra);
  expect((await deliver(a, create(a, n))).status).toBe(202);
  return n.id as string;
}

/** `u` quotes the status `quotedId` (its API id) through the API: the quoting status's uri. */
async function quoteThroughApi(u: TestUser, quotedId: string): Promise<string> {
  const res = await u.api.post("/api/v1/statuses", { status: "quoting", quoted_status_id: quotedId });
  expect(res.status).toBe(200);
  return res.body.uri;
}

const quoteColumn = async (uri: string, column: string) =>
  (await env.DB.prepare(`SELECT ${column} AS v FROM quotes WHERE status_id = (SELECT id FROM statuses WHERE uri = ?)`).bind(uri).first<{ v: unknown }>())?.v;

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

  it("a block (Block received, and POST /block), which also ends the follows both ways, and its undoing", async () => {
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

    // And the unblock (Undo{Block} received by the block's id, and POST /unblock) through the one unblockStatement.
    const [{ uri: blockUri }] = (await rows("blocks", "account_id = ?", [remoteId], [])) as { uri: string }[];
    expect((await local.api.post(`/api/v1/accounts/${target.id}/unblock`)).status).toBe(200);
    const undo = await deliver(remote, { id: newId(remote), type: "Undo", actor: remote.uri, object: blockUri });
    expect(undo.status).toBe(202);
    await runQueuedJobs();
    expect(await blocksBy(padId(local.id))).toEqual([]);
    expect(await blocksBy(remoteId)).toEqual([]);
  });

  it("a pin (POST /pin, an Add to the featured collection received, the collection read by fetch_featured), and an unpin", async () => {
    await setUp();
    const own = await local.api.post("/api/v1/statuses", { status: "pin me" });
    expect((await local.api.post(`/api/v1/statuses/${own.body.id}/pin`)).status).toBe(200);
    const added = await remotePost(remote);
    const r = await deliver(remote, { id: newId(remote), type: "Add", actor: remote.uri, object: added, target: remote.featured });
    expect(r.status).toBe(202);
    // Another remote account's pins, read from its collection when its pinned statuses are asked for.
    const reader = await remoteActor(`featured${seq}`, "writers.example");
    const listed = await remotePost(reader);
    serveJson("writers.example", `/users/${reader.name}/collections/featured`, { id: reader.featured, type: "OrderedCollection", orderedItems: [listed] });
    const readerId = await accountIdOf(reader);
    expect((await anon.get(`/api/v1/accounts/${idOf(readerId)}/statuses?pinned=true`)).status).toBe(200);
    await runQueuedJobs();
    const remoteId = await accountIdOf(remote);
    const viaApi = await pinsOf(padId(local.id), padId(own.body.id));
    expect(viaApi).toEqual([{ pins_it: 1, id_is_time: 1 }]);
    expect(await pinsOf(remoteId, await statusIdOf(added))).toEqual(viaApi);
    expect(await pinsOf(readerId, await statusIdOf(listed))).toEqual(viaApi);

    expect((await local.api.post(`/api/v1/statuses/${own.body.id}/unpin`)).status).toBe(200);
    expect((await deliver(remote, { id: newId(remote), type: "Remove", actor: remote.uri, object: added, target: remote.featured })).status).toBe(202);
    expect(await pinsOf(padId(local.id), padId(own.body.id))).toEqual([]);
    expect(await pinsOf(remoteId, await statusIdOf(added))).toEqual([]);
  });

  it("a quote (POST /statuses quoting, and a Note quoting received): of one's own status at once, of another's once its author grants it", async () => {
    await setUp();
    // Self-quotes: accepted as they are written.
    const mine = await local.api.post("/api/v1/statuses", { status: "mine" });
    const selfViaApi = await quoteThroughApi(local, mine.body.id);
    const theirs = await remotePost(remote);
    const selfViaInbox = await remotePost(remote, { quote: theirs });
    const self = await quoteOf(selfViaApi, mine.body.uri, QUOTED);
    expect(self).toEqual([{ state: "accepted", approval_uri: null, activity_uri: null, legacy: 0, quotes_it: 1, quotes_its_author: 1 }]);
    expect(await quoteOf(selfViaInbox, theirs, QUOTED)).toEqual(self);

    // Quotes of the target's status: granted at once here (automatic approval), by the QuoteRequest from afar.
    const quoted = await target.api.post("/api/v1/statuses", { status: "quote me" });
    const viaApi = await quoteThroughApi(local, quoted.body.id);
    const viaInbox = await remotePost(remote, { quote: quoted.body.uri });
    expect(await quoteColumn(viaInbox, "state")).toBe("pending");
    const requestId = `${remote.uri}/quote_requests/${seq}`;
    const r = await deliver(remote, { id: requestId, type: "QuoteRequest", actor: remote.uri, object: quoted.body.uri, instrument: viaInbox });
    expect(r.status).toBe(202);
    await runQueuedJobs();
    // The QuoteRequest's id is kept to answer it; a quote posted here had none.
    expect(await quoteColumn(viaApi, "activity_uri")).toBeNull();
    expect(await quoteColumn(viaInbox, "activity_uri")).toBe(requestId);
    const granted = await quoteOf(viaApi, quoted.body.uri, ["activity_uri"]);
    expect(granted).toEqual([
      {
        quoted_status_id: padId(quoted.body.id),
        quoted_account_id: padId(target.id),
        state: "accepted",
        approval_uri: null,
        legacy: 0,
        quotes_it: 1,
        quotes_its_author: 1,
      },
    ]);
    expect(await quoteOf(viaInbox, quoted.body.uri, ["activity_uri"])).toEqual(granted);
    // The quoted author may see the quote (a silent mention), and hears of it.
    const mentionOf = async (uri: string) =>
      rows("mentions", "status_id = ? AND account_id = ?", [await statusIdOf(uri), padId(target.id)], ["id", "status_id"]);
    expect(await mentionOf(viaApi)).toEqual([{ account_id: padId(target.id), silent: 1 }]);
    expect(await mentionOf(viaInbox)).toEqual(await mentionOf(viaApi));
    const notes = (from: string) =>
      rows("notifications", "account_id = ? AND from_account_id = ? AND type = 'quote'", [padId(target.id), from], [...WHO_AND_WHEN, "status_id"]);
    expect(await notes(padId(local.id))).toHaveLength(1);
    expect(await notes(await accountIdOf(remote))).toEqual(await notes(padId(local.id)));
  });

  it("a quote withdrawn by its quoted author (POST /revoke, and a Delete of the QuoteAuthorization received)", async () => {
    await setUp();
    // Here: the target revokes the local user's quote of its status.
    const quoted = await target.api.post("/api/v1/statuses", { status: "quote me" });
    const viaApi = await quoteThroughApi(local, quoted.body.id);
    expect((await target.api.post(`/api/v1/statuses/${quoted.body.id}/quotes/${idOf(await statusIdOf(viaApi))}/revoke`)).status).toBe(200);
    // From afar: the remote author accepts the local user's quote of its Note, then deletes the authorization.
    const theirs = await remotePost(remote, canQuotePublic);
    const viaInbox = await quoteThroughApi(local, idOf(await statusIdOf(theirs)));
    expect(await quoteColumn(viaInbox, "state")).toBe("pending");
    const stamp = `${remote.uri}/quote_authorizations/${seq}`;
    const request = await quoteColumn(viaInbox, "activity_uri");
    await deliver(remote, { id: newId(remote), type: "Accept", actor: remote.uri, object: request, result: stamp });
    expect(await quoteOf(viaInbox, theirs, [])).toEqual([
      {
        quoted_status_id: await statusIdOf(theirs),
        quoted_account_id: await accountIdOf(remote),
        state: "accepted",
        approval_uri: stamp,
        activity_uri: request,
        legacy: 0,
        quotes_it: 1,
        quotes_its_author: 1,
      },
    ]);
    const r = await deliver(remote, { id: `${stamp}#delete`, type: "Delete", actor: remote.uri, to: [AS_PUBLIC], object: stamp });
    expect(r.status).toBe(202);
    const revoked = await quoteOf(viaApi, quoted.body.uri, [...QUOTED, ...EXCHANGE]);
    expect(revoked).toEqual([{ state: "revoked", legacy: 0, quotes_it: 1, quotes_its_author: 1 }]);
    expect(await quoteOf(viaInbox, theirs, [...QUOTED, ...EXCHANGE])).toEqual(revoked);
    const quotesCount = async (uri: string) =>
      (await env.DB.prepare("SELECT quotes_count AS n FROM statuses WHERE uri = ?").bind(uri).first<{ n: number }>())?.n;
    expect(await quotesCount(quoted.body.uri)).toBe(0);
    expect(await quotesCount(theirs)).toBe(0);
  });

  it("a pending quote refused by its quoted author (POST /revoke, and a Reject of the QuoteRequest received)", async () => {
    await setUp();
    // Here: a remote Note quotes the target's status, which the target refuses before any QuoteRequest.
    const quoted = await target.api.post("/api/v1/statuses", { status: "quote me" });
    const viaApi = await remotePost(remote, { quote: quoted.body.uri });
    expect((await target.api.post(`/api/v1/statuses/${quoted.body.id}/quotes/${idOf(await statusIdOf(viaApi))}/revoke`)).status).toBe(200);
    // From afar: the remote author rejects the local user's QuoteRequest.
    const theirs = await remotePost(remote, canQuotePublic);
    const viaInbox = await quoteThroughApi(local, idOf(await statusIdOf(theirs)));
    const r = await deliver(remote, { id: newId(remote), type: "Reject", actor: remote.uri, object: await quoteColumn(viaInbox, "activity_uri") });
    expect(r.status).toBe(202);
    const rejected = await quoteOf(viaApi, quoted.body.uri, [...QUOTED, ...EXCHANGE]);
    expect(rejected).toEqual([{ state: "rejected", legacy: 0, quotes_it: 1, quotes_its_author: 1 }]);
    expect(await quoteOf(viaInbox, theirs, [...QUOTED, ...EXCHANGE])).toEqual(rejected);
  });
});
