// An incoming activity is processed by the invocation that received it, once its 202 is out, with what follows from
// it (fan-out, notifications) in the same invocation: no queue message, the Workers free plan's scarcest unit. The
// suite runs with EFFECTS_AFTER_RESPONSE=queue; these tests call the Worker the production way. An item whose
// invocation died before processing it is found by the 5-minute sweep and goes to the queue.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { createDb } from "../../src/db/client";
import { Effects } from "../../src/effects/collector";
import { runJob } from "../../src/background/effects-runner";
import { requeueStaleInboxItems, STALE_INBOX_AFTER_MS } from "../../src/background/cron";
import { processInboxItem, storeInboxItem } from "../../src/federation/inbox/inbox-process";
import { countingD1 } from "../../src/lib/limits/d1-counter";
import { signRequest } from "../support/signed-request";
import { makeUser, ORIGIN } from "./helpers";
import { AS_PUBLIC, create, installFetchMock, newId, note, pad, remoteActor, runJobs, sql, type RemoteActor } from "./federation-inbox-fixtures";
import { queued } from "./queues";
import { decryptAes128gcm, makePushClient, pushService } from "./push-fixtures";
import { itStreams, payloadOf, type StreamMessage, ws, type WsClient } from "./streaming-fixtures";
import { fileServer } from "./file-server";
import { photo } from "./media-pipeline-fixtures";
import { refusingBatches } from "./d1-faults";

beforeAll(() => installFetchMock());
afterEach(() => vi.restoreAllMocks());

/**
 * A signed POST to the shared inbox, through the Worker's own fetch with production settings; waits for its waitUntil
 * work. `counter`: D1 round trips of the POST and that work together.
 */
async function postInboxHere(
  signer: RemoteActor,
  activity: unknown,
  counter?: { n: number },
  vars: Record<string, string> = {},
  db: D1Database = env.DB,
): Promise<Response> {
  const body = JSON.stringify(activity);
  const req = new Request(`${ORIGIN}/inbox`, { method: "POST", headers: { "content-type": "application/activity+json" }, body });
  const signed = await signRequest(req, signer.keyId, signer.keys.privateKeyPem, body);
  const ctx = createExecutionContext();
  const DB = counter ? countingD1(db, counter) : db;
  const res = await worker.fetch(
    new Request(signed.url, { method: "POST", headers: signed.headers, body }),
    { ...env, DB, EFFECTS_AFTER_RESPONSE: "", ...vars },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

/** The next `update` on `c` (any other event in between is passed over). */
async function nextUpdate(c: WsClient): Promise<StreamMessage> {
  for (;;) {
    const m = await c.next();
    if (m.event === "update") return m;
  }
}

/** A remote actor this server knows: its first signed POST (a Like of nothing) stored it. */
async function knownRemote(name: string): Promise<RemoteActor> {
  const a = await remoteActor(name, "here.example");
  expect((await postInboxHere(a, { id: newId(a), type: "Like", actor: a.uri, object: `${ORIGIN}/nothing` })).status).toBe(202);
  return a;
}

async function followRemote(localId: string, a: RemoteActor, bell = true): Promise<void> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", a.uri);
  await sql(
    "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, ?, ?)",
    pad(String(Date.now())),
    pad(localId),
    row.id,
    bell ? 1 : 0,
    Date.now(),
  );
}

/**
 * A Create from a remote actor that `localName` follows (bell on), stored in inbox_items as a POST would store it but
 * not processed: what an invocation that died after its 202 leaves behind.
 */
async function storedCreate(localName: string, remoteName: string, content: string) {
  const local = await makeUser(localName);
  const remote = await knownRemote(remoteName);
  await followRemote(local.id, remote);
  const [signer] = await sql("SELECT id FROM accounts WHERE uri = ?", remote.uri);
  const n = note(remote, { content });
  const itemId = await storeInboxItem(createDb(env.DB), String(BigInt(signer.id)), JSON.stringify(create(remote, n)));
  return { local, n, itemId };
}

describe("incoming activities after the response", () => {
  it("a note from a followed account reaches the home feed and the bell, with no queue message", async () => {
    const ann = await makeUser("ann");
    // Bob becomes known (first contact) and followed, with the bell on.
    const bob = await knownRemote("bob");
    await followRemote(ann.id, bob);
    queued.jobs.length = 0;

    const n = note(bob, { content: "<p>straight from the inbox</p>" });
    const counter = { n: 0 };
    expect((await postInboxHere(bob, create(bob, n), counter)).status).toBe(202);
    expect(queued.jobs).toEqual([]);
    // The key's owner; the item with its seen check and the note's lookups (early-reads.ts); the note written with its
    // fan-out to the followers' feeds and the item's seen and delete; the bell's notification; its push targets and
    // recipient.
    expect(counter.n).toBe(5);
    const home = await ann.api.get("/api/v1/timelines/home");
    expect(home.body.map((s: { uri: string }) => s.uri)).toEqual([n.id]);
    const bell = await ann.api.get("/api/v1/notifications?types[]=status");
    expect(bell.body.map((x: { type: string; status: { uri: string } }) => [x.type, x.status.uri])).toEqual([["status", n.id]]);
    expect(await sql("SELECT id FROM inbox_items")).toEqual([]);
  });

  itStreams("a note to a connected follower is rendered from reads made with its writes: 3 round trips, 4 with a photo to cache", async () => {
    const cy = await makeUser("cy");
    const dan = await knownRemote("dan");
    await followRemote(cy.id, dan, false);
    // A warn filter: the follower's facts (read with the note's writes) say the hub must mark it.
    expect(
      (await cy.api.post("/api/v2/filters", { title: "spoilers", context: ["home"], filter_action: "warn", keywords_attributes: [{ keyword: "ending" }] }))
        .status,
    ).toBe(200);
    const c = await ws({ token: cy.token }, { stream: "user" });
    // The first note of this isolate asks the router who listens; from then on the isolate knows cy is online.
    expect((await postInboxHere(dan, create(dan, note(dan, { content: "<p>hello</p>" })))).status).toBe(202);
    expect(payloadOf(await nextUpdate(c)).content).toBe("<p>hello</p>");

    const n = note(dan, { content: "<p>the ending</p>" });
    const counter = { n: 0 };
    expect((await postInboxHere(dan, create(dan, n), counter)).status).toBe(202);
    const streamed = payloadOf(await nextUpdate(c));
    // The key's owner; the item with its seen check and the note's lookups; its writes and feeds, ending with the reads
    // of its publish (the rendering, the follower's facts). No round trip of its own for the lookups or the publish.
    expect(counter.n).toBe(3);
    expect(streamed.uri).toBe(n.id);
    expect(streamed.filtered.map((f: { filter: { title: string }; keyword_matches: string[] }) => [f.filter.title, f.keyword_matches])).toEqual([
      ["spoilers", ["ending"]],
    ]);
    // What the stream carried is what the home timeline shows the follower.
    const [home] = (await cy.api.get("/api/v1/timelines/home?limit=1")).body;
    expect(streamed).toEqual(home);

    // With a photo: its rows for the cache are read at the end of the same batch; the cache writes its copy (one more).
    const big = await photo(640, 480);
    fileServer(() => new Response(big, { headers: { "content-type": "image/png", "content-length": String(big.length) } }));
    const withPhoto = note(dan, {
      content: "<p>look</p>",
      attachment: [{ type: "Document", mediaType: "image/png", url: "https://files.example/look.png", blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj" }],
    });
    const counter2 = { n: 0 };
    expect((await postInboxHere(dan, create(dan, withPhoto), counter2, { REMOTE_MEDIA_CACHE: "true" })).status).toBe(202);
    expect(payloadOf(await nextUpdate(c)).uri).toBe(withPhoto.id);
    expect(counter2.n).toBe(4);
    const [shown] = (await cy.api.get("/api/v1/timelines/home?limit=1")).body;
    expect(shown.media_attachments[0].url.startsWith(`${ORIGIN}/media/`)).toBe(true);
    expect(shown.media_attachments[0].remote_url).toBe("https://files.example/look.png");

    // An edit: the feeds holding it, its renderings and the facts are read with the edit's writes (was two round trips
    // more: the feeds, then the renderings).
    const edited = { ...n, content: "<p>the ending, edited</p>", updated: new Date(Date.now() + 1000).toISOString() };
    const counter3 = { n: 0 };
    const update = { "@context": "https://www.w3.org/ns/activitystreams", id: `${n.id}#updates/1`, type: "Update", actor: dan.uri, object: edited };
    expect((await postInboxHere(dan, update, counter3)).status).toBe(202);
    let m: StreamMessage;
    do m = await c.next();
    while (m.event !== "status.update");
    // The key's owner; the item with its seen check; the status; the edit's reads; its writes ending with the publish's reads.
    expect(counter3.n).toBe(5);
    const streamedEdit = payloadOf(m);
    expect(streamedEdit.content).toBe("<p>the ending, edited</p>");
    expect(streamedEdit).toEqual((await cy.api.get(`/api/v1/statuses/${streamedEdit.id}`)).body);

    // A boost by someone cy follows: its first fan-out chunk and the publish's reads are in the boost's own batch (was
    // a round trip more: the fan-out after it). What streams is the follower's home timeline entry.
    // The boosted note is one cy has not seen (a boost of a note already in the feed is not added again).
    const fay = await knownRemote("fay");
    const faysNote = note(fay, { content: "<p>worth a boost</p>", to: [AS_PUBLIC] });
    expect((await postInboxHere(fay, create(fay, faysNote))).status).toBe(202);
    const eve = await knownRemote("eve");
    await followRemote(cy.id, eve, false);
    const boost = { id: newId(eve, "announces"), type: "Announce", actor: eve.uri, object: faysNote.id, to: [AS_PUBLIC], published: new Date().toISOString() };
    const counter4 = { n: 0 };
    expect((await postInboxHere(eve, boost, counter4)).status).toBe(202);
    const streamedBoost = payloadOf(await nextUpdate(c));
    // The key's owner; the item with its seen check and the boost's reads; its writes and first chunk, ending with the
    // publish's reads.
    expect(counter4.n).toBe(3);
    expect(streamedBoost.reblog.uri).toBe(faysNote.id);
    expect(streamedBoost.account.acct).toBe(`eve@${new URL(eve.uri).host}`);
    const [homeBoost] = (await cy.api.get("/api/v1/timelines/home?limit=1")).body;
    expect(streamedBoost).toEqual(homeBoost);
    // Delivered again: nothing more (one boost, one entry).
    expect((await postInboxHere(eve, boost)).status).toBe(202);
    expect(
      (await cy.api.get("/api/v1/timelines/home?limit=5")).body.filter((x: { reblog: { uri: string } | null }) => x.reblog?.uri === faysNote.id),
    ).toHaveLength(1);
  });

  it("a Like costs 3 round trips from the POST to the bell: the processing reads nothing the POST verified", async () => {
    const fay = await makeUser("fay");
    const gus = await knownRemote("gus");
    const posted = await fay.api.post("/api/v1/statuses", { status: "like me", visibility: "public" });
    const like = { id: newId(gus), type: "Like", actor: gus.uri, object: posted.body.uri };
    const counter = { n: 0 };
    expect((await postInboxHere(gus, like, counter)).status).toBe(202);
    // The key's owner with its domain check; the item stored with its seen check and the Like's reads (made early:
    // src/federation/inbox/early-reads.ts); its writes (the favourite, the notification, the item seen and deleted)
    // ending with the notification's push targets and its recipient's view of it, which the notify effect then uses
    // (src/effects/notify-reads.ts).
    expect(counter.n).toBe(3);
    const status = await fay.api.get(`/api/v1/statuses/${posted.body.id}`);
    expect(status.body.favourites_count).toBe(1);
    const bell = await fay.api.get("/api/v1/notifications");
    expect(bell.body.map((x: { type: string; account: { acct: string } }) => [x.type, x.account.acct])).toEqual([["favourite", "gus@here.example"]]);
    expect(await sql("SELECT id FROM inbox_items")).toEqual([]);
  });

  it("a Like whose store batch fails (with its early reads) is refused with a 5xx and kept nowhere; the sender's retry is taken once", async () => {
    const ada = await makeUser("ada");
    const ned = await knownRemote("ned");
    const posted = await ada.api.post("/api/v1/statuses", { status: "like me once", visibility: "public" });
    const like = { id: newId(ned), type: "Like", actor: ned.uri, object: posted.body.uri };
    // D1 fails once, on the batch that stores the item and makes the Like's reads.
    let failed = 0;
    const flaky = refusingBatches(env.DB, (texts) => texts.some((q) => /^INSERT INTO inbox_items/.test(q)) && !failed++);
    const refused = await postInboxHere(ned, like, undefined, {}, flaky);
    expect(failed).toBe(1);
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(await sql("SELECT id FROM inbox_items")).toEqual([]);
    expect((await ada.api.get(`/api/v1/statuses/${posted.body.id}`)).body.favourites_count).toBe(0);
    // The sender delivers it again: taken, once.
    expect((await postInboxHere(ned, like, undefined, {}, flaky)).status).toBe(202);
    expect((await ada.api.get(`/api/v1/statuses/${posted.body.id}`)).body.favourites_count).toBe(1);
    const bell = await ada.api.get("/api/v1/notifications");
    expect(bell.body.map((x: { type: string }) => x.type)).toEqual(["favourite"]);
    expect(await sql("SELECT id FROM inbox_items")).toEqual([]);
  });

  it("a Like's notification read with its writes still reaches the recipient's push subscription", async () => {
    const lea = await makeUser("lea");
    const client = await makePushClient();
    const sub = await lea.api.post("/api/v1/push/subscription", {
      subscription: { endpoint: "https://push.example/sub/lea", keys: { p256dh: client.p256dh, auth: client.auth }, standard: true },
      data: { alerts: { favourite: true }, policy: "all" },
    });
    expect(sub.status).toBe(200);
    const seen = pushService("/sub/lea", 201);
    const max = await knownRemote("max");
    const posted = await lea.api.post("/api/v1/statuses", { status: "push me", visibility: "public" });
    expect((await postInboxHere(max, { id: newId(max), type: "Like", actor: max.uri, object: posted.body.uri })).status).toBe(202);
    expect(seen).toHaveLength(1);
    const payload = JSON.parse(await decryptAes128gcm(client, seen[0]!.body));
    expect(payload.notification_type).toBe("favourite");
    expect(payload.body).toContain("push me");
  });

  it("a Create delivered twice is taken once: the second is known as seen when it is stored", async () => {
    const hal = await makeUser("hal");
    const ivy = await knownRemote("ivy");
    await followRemote(hal.id, ivy);
    const n = note(ivy, { content: "<p>twice</p>" });
    const activity = create(ivy, n);
    expect((await postInboxHere(ivy, activity)).status).toBe(202);
    const counter = { n: 0 };
    expect((await postInboxHere(ivy, activity, counter)).status).toBe(202);
    // The key's owner; the item with its seen check; the item finished (nothing read or written for the note).
    expect(counter.n).toBe(3);
    const home = await hal.api.get("/api/v1/timelines/home");
    expect(home.body.map((s: { uri: string }) => s.uri)).toEqual([n.id]);
    expect(await sql("SELECT count(*) AS n FROM statuses WHERE uri = ?", n.id)).toEqual([{ n: 1 }]);
    expect(await sql("SELECT id FROM inbox_items")).toEqual([]);
  });

  it("a Create whose bell notifications fail after the status and its feeds committed: the fan-out runs again as an effect", async () => {
    const { local: jo, n, itemId } = await storedCreate("jo", "kim", "<p>ring</p>");
    // D1 fails once, on the batch that raises the bell's notifications.
    let failed = 0;
    const flaky = refusingBatches(env.DB, (texts) => texts.some((q) => /^INSERT OR IGNORE INTO notifications/.test(q)) && !failed++);
    const fx = new Effects(ORIGIN);
    await processInboxItem(createDb(flaky), env, itemId, ORIGIN, fx);
    expect(failed).toBe(1);
    const fanouts = fx.drain().filter((e) => e.type === "fanout" || e.type === "fanned_out");
    expect(fanouts.map((e) => e.type)).toEqual(["fanout"]);
    const uris = async () => (await jo.api.get("/api/v1/timelines/home")).body.map((s: { uri: string }) => s.uri);
    expect(await uris()).toEqual([n.id]);
    expect((await jo.api.get("/api/v1/notifications?types[]=status")).body).toEqual([]);
    // Run again (as the queue would): the bell rings once, the feed keeps one entry.
    for (const e of fanouts) await runJob(createDb(env.DB), env, e);
    const bell = await jo.api.get("/api/v1/notifications?types[]=status");
    expect(bell.body.map((x: { status: { uri: string } }) => x.status.uri)).toEqual([n.id]);
    expect(await uris()).toEqual([n.id]);
    expect(await sql("SELECT id FROM inbox_items")).toEqual([]);
  });

  it("an item its invocation never processed goes to the queue from the sweep, once it is 10 minutes old", async () => {
    const { local: cy, n, itemId } = await storedCreate("cy", "dee", "<p>left behind</p>");
    const db = createDb(env.DB);
    const fx = () => new Effects(ORIGIN);

    // Not yet stale: the invocation that stored it may still be at work.
    const early = fx();
    expect(await requeueStaleInboxItems(db, early, Date.now())).toBe(0);
    const due = fx();
    expect(await requeueStaleInboxItems(db, due, Date.now() + STALE_INBOX_AFTER_MS + 1000)).toBe(1);
    expect(due.drain()).toEqual([{ type: "inbox", itemId, origin: ORIGIN }]);
    await runJob(db, env, { type: "inbox", itemId, origin: ORIGIN });
    await runJobs();
    const home = await cy.api.get("/api/v1/timelines/home");
    expect(home.body.map((s: { uri: string }) => s.uri)).toEqual([n.id]);
  });
});
