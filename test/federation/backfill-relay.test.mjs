// Conversation backfill and relays against a real, independent ActivityPub implementation: a small fedify federation
// of this file's own (the shared peer in peer.mjs serves no `replies` collections and is no relay) next to Tern under
// `wrangler dev`, both on 127.0.0.1.
//   - "author" and "replier" hold a thread Tern never saw: a root and three replies, each Note with its `replies`
//     collection. Tern resolves one reply by URL; opening its context shows the whole thread.
//   - "relay" (an Application) acts as a Mastodon-style relay: it accepts the instance actor's Follow of as:Public,
//     receives Tern's public Create, announces a post of "poster" to Tern, and receives the Undo when it is removed.
import "./polyfills.mjs";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createFederation, exportJwk, generateCryptoKeyPair, importJwk, MemoryKvStore } from "@fedify/fedify";
import { Accept, Activity, Announce, Application, Collection, Endpoints, Follow, Note, Person, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { startTern } from "../support/server.mjs";
import { arrivalLog, fedifyFetch, listenLoopback, sendResponse, startQueue, testFederationOptions, toFetchRequest } from "./fedify-host.mjs";
import { Temporal } from "./polyfills.mjs";
import { poll, setUpOwner, signUp } from "./tern-api.mjs";

const ACTORS = new Set(["author", "replier", "relay", "poster"]);

/** The fedify side: actors, Notes with `replies` collections, and a relay's inbox behaviour. */
async function startThreadServer() {
  const { server, origin, serve } = await listenLoopback();
  const { received, record: keep, waitFor } = arrivalLog();
  const errors = [];
  const notes = new Map(); // key → { note fields, replies: [uri] }

  const rsa = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  const jwk = { privateKey: await exportJwk(rsa.privateKey), publicKey: await exportJwk(rsa.publicKey) };

  const federation = createFederation({
    ...testFederationOptions(origin),
    kv: new MemoryKvStore(),
    firstKnock: "draft-cavage-http-signatures-12",
    onOutboxError: (error) => errors.push(`outbox: ${error}`),
  });

  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (!ACTORS.has(identifier)) return null;
      const keys = await ctx.getActorKeyPairs(identifier);
      const fields = {
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: identifier,
        url: ctx.getActorUri(identifier),
        inbox: ctx.getInboxUri(identifier),
        endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
        followers: ctx.getFollowersUri(identifier),
        publicKey: keys[0].cryptographicKey,
        assertionMethods: keys.map((k) => k.multikey),
      };
      return identifier === "relay" ? new Application(fields) : new Person(fields);
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) =>
      ACTORS.has(identifier) ? [{ privateKey: await importJwk(jwk.privateKey, "private"), publicKey: await importJwk(jwk.publicKey, "public") }] : [],
    );
  federation.setFollowersDispatcher("/users/{identifier}/followers", () => ({ items: [] }));

  const ctx = () => federation.createContext(new URL(origin), undefined);
  const noteUri = (identifier, key) => ctx().getObjectUri(Note, { identifier, id: key });

  /** The Note as served now: its replies as an embedded collection of URIs (Tern fetches each). */
  const noteOf = (n) =>
    new Note({
      id: noteUri(n.identifier, n.key),
      attribution: ctx().getActorUri(n.identifier),
      content: `<p>${n.content}</p>`,
      published: n.published,
      url: noteUri(n.identifier, n.key),
      to: PUBLIC_COLLECTION,
      ccs: [ctx().getFollowersUri(n.identifier)],
      replyTarget: n.inReplyTo ? new URL(n.inReplyTo) : undefined,
      replies: new Collection({ id: new URL(`${noteUri(n.identifier, n.key).href}/replies`), items: n.replies.map((u) => new URL(u)) }),
    });

  federation.setObjectDispatcher(Note, "/users/{identifier}/notes/{id}", (_ctx, { identifier, id }) => {
    const n = notes.get(id);
    return n && n.identifier === identifier ? noteOf(n) : null;
  });

  const record = (activity) => {
    keep({ type: activity.constructor.name, id: activity.id?.href ?? null, activity });
  };

  federation
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ictx, follow) => {
      record(follow);
      // The relay accepts a Follow of as:Public (activityrelay and Mastodon-compatible relays do).
      if (ictx.recipient !== "relay" || follow.objectId?.href !== PUBLIC_COLLECTION.href) return;
      const follower = await follow.getActor(ictx);
      if (!follower) return;
      await ictx.sendActivity(
        { identifier: "relay" },
        follower,
        new Accept({ id: new URL(`/activities/${randomUUID()}`, origin), actor: ictx.getActorUri("relay"), object: follow }),
        { immediate: true },
      );
    })
    .on(Activity, async (_ctx, activity) => record(activity))
    .onError((_ctx, error) => errors.push(`inbox: ${error?.stack ?? error}`));

  serve(async (req, res) => {
    try {
      const { request } = await toFetchRequest(req, origin);
      await sendResponse(res, await fedifyFetch(federation, request));
    } catch (e) {
      errors.push(`http: ${e?.stack ?? e}`);
      res.writeHead(500).end(String(e));
    }
  });

  const queue = startQueue(federation);

  return {
    origin,
    received,
    errors,
    actorUri: (identifier) => ctx().getActorUri(identifier).href,
    /** A public Note that is delivered to nobody; `replies` filled in as replies are made. */
    note(identifier, content, inReplyTo) {
      const key = randomUUID();
      const n = { key, identifier, content, inReplyTo, replies: [], published: Temporal.Now.instant() };
      notes.set(key, n);
      const uri = noteUri(identifier, key).href;
      if (inReplyTo) [...notes.values()].find((p) => noteUri(p.identifier, p.key).href === inReplyTo)?.replies.push(uri);
      return uri;
    },
    /** The relay announces `objectUri` to Tern's shared inbox. */
    async relayAnnounce(ternActorUri, ternSharedInbox, objectUri) {
      const announce = new Announce({
        id: new URL(`/activities/${randomUUID()}`, origin),
        actor: ctx().getActorUri("relay"),
        object: new URL(objectUri),
        published: Temporal.Now.instant(),
        to: PUBLIC_COLLECTION,
      });
      await ctx().sendActivity({ identifier: "relay" }, { id: new URL(ternActorUri), inboxId: new URL(ternSharedInbox) }, announce, { immediate: true });
    },
    waitFor(pred, what, timeoutMs = 45_000) {
      return waitFor(
        pred,
        timeoutMs,
        () => `the relay did not receive ${what}; received: ${received.map((r) => r.type).join(", ")}; errors: ${errors.join("; ")}`,
      );
    },
    async stop() {
      queue.stop();
      await queue.done;
      await new Promise((r) => server.close(r));
    },
  };
}

describe("backfill and relays: Tern ⇄ fedify", () => {
  let tern;
  let remote;
  let alice;

  before(async () => {
    tern = await startTern({ vars: { ALLOW_LOOPBACK_FETCH: "true" } });
    remote = await startThreadServer();
    ({ alice } = await signUp(tern.url, ["alice"]));
  });

  after(async () => {
    await remote?.stop();
    await tern?.stop();
  });

  test("opening the context of one reply of a thread Tern never saw shows the whole thread", async () => {
    const root = remote.note("author", "the root");
    const r1 = remote.note("replier", "first reply", root);
    const r2 = remote.note("author", "second reply", r1);
    const r3 = remote.note("replier", "third reply", r2);

    const found = await alice.api.get("/api/v2/search", { q: r2, resolve: "true", type: "statuses" });
    const status = found.statuses.find((s) => s.uri === r2);
    assert.ok(status, `search resolved ${r2}`);

    const ctx = await alice.api.get(`/api/v1/statuses/${status.id}/context`);
    assert.deepEqual(
      ctx.ancestors.map((s) => s.uri),
      [root, r1],
      "ancestors",
    );
    assert.deepEqual(
      ctx.descendants.map((s) => s.uri),
      [r3],
      "descendants (fetched from r2's replies collection)",
    );
    assert.equal(ctx.descendants[0].account.acct, `replier@${new URL(remote.origin).host}`);
    // Found late: not in home.
    const home = await alice.api.get("/api/v1/timelines/home");
    assert.ok(!home.some((s) => [root, r1, r2, r3].includes(s.uri)), "backfilled statuses are not in home");
  });

  test("a relay: Follow of as:Public accepted, Tern's public Create relayed, the relay's Announce taken, Undo on removal", async () => {
    const admin = await setUpOwner(tern.url, { username: "relayowner" });
    const relayInbox = `${remote.origin}/users/relay/inbox`;
    const added = await admin.post("/api/v1/admin/relays", { inbox_url: relayInbox });
    assert.equal(added.state, "pending");

    const follow = await remote.waitFor((r) => r.type === "Follow", "the instance actor's Follow");
    assert.equal(follow.activity.objectId?.href, PUBLIC_COLLECTION.href, "Follow of as:Public");
    assert.equal(follow.activity.actorId?.href, `${tern.url}/actor`, "from the instance actor");
    await poll("the relay accepted", async () => (await admin.get(`/api/v1/admin/relays/${added.id}`)).state === "accepted");

    const posted = await alice.api.post("/api/v1/statuses", { status: "hello, relay", visibility: "public" });
    const create = await remote.waitFor((r) => r.type === "Create" && r.activity.objectId?.href === posted.uri, "Tern's public Create");
    assert.equal(create.activity.actorId?.href, `${tern.url}/users/alice`, "the Create is alice's");
    assert.ok(
      create.activity.toIds.some((u) => u.href === PUBLIC_COLLECTION.href),
      `the relayed Create is public (to=${JSON.stringify(create.activity.toIds.map((u) => u.href))})`,
    );

    const relayed = remote.note("poster", "a post from elsewhere, relayed");
    await remote.relayAnnounce(`${tern.url}/actor`, `${tern.url}/inbox`, relayed);
    const onTimeline = await poll("the relayed post on the federated timeline", async () => {
      const tl = await alice.api.get("/api/v1/timelines/public", { remote: "true" });
      return tl.find((s) => s.uri === relayed || s.reblog?.uri === relayed);
    });
    assert.equal(onTimeline.uri, relayed, "the original status, not a boost by the relay");
    assert.equal(onTimeline.reblog, null);
    const home = await alice.api.get("/api/v1/timelines/home");
    assert.ok(!home.some((s) => s.uri === relayed), "not in home");

    await admin.delete(`/api/v1/admin/relays/${added.id}`);
    const undo = await remote.waitFor((r) => r.type === "Undo", "Undo{Follow}");
    assert.equal(undo.activity.actorId?.href, `${tern.url}/actor`);
    assert.deepEqual(await admin.get("/api/v1/admin/relays"), []);
    assert.deepEqual(remote.errors, []);
  });
});
