// Account migration and domain suspension against a real Fedify server (issue 11, "Done when"): an account moves from
// the peer to Tern and back, and a suspending domain block against the peer's domain cuts the follows. The peer of
// peer.mjs has no alsoKnownAs and sends no Move, so this file runs a small Fedify federation of its own, built the
// same way (in-memory KV and queue, node:http on 127.0.0.1, signatures verified), whose actor `traveler` has a
// changeable alsoKnownAs and movedTo. Tern runs under `wrangler dev` with its real Queues; Tern's state is awaited by
// polling its API (tern-api.mjs `poll`), the peer's by its inbox (`waitFor`).
import "./polyfills.mjs";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createFederation, exportJwk, generateCryptoKeyPair, importJwk, MemoryKvStore } from "@fedify/fedify";
import { Accept, Activity, Endpoints, Follow, Like, Move, Person, Undo } from "@fedify/fedify/vocab";
import { startTern } from "../support/server.mjs";
import { arrivalLog, downgradeHttpsFor, fedifyFetch, listenLoopback, sendResponse, startQueue, testFederationOptions, toFetchRequest } from "./fedify-host.mjs";
import { poll, setUpOwner, signUp } from "./tern-api.mjs";

const PASSWORD = "correct horse battery staple";
const NAME = "traveler";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function need(value, prereq) {
  if (!value) throw new Error(`blocked by an earlier step: ${prereq}`);
  return value;
}

/** A Fedify server with one unlocked actor whose alsoKnownAs / movedTo the test sets; records what it receives. */
async function startMigrationPeer({ ternHosts }) {
  const { server, origin, host, serve } = await listenLoopback();
  const state = { aliases: [], movedTo: null };
  const { received, record: keep, waitFor } = arrivalLog();
  const errors = [];
  const rsa = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  const keyJwk = { privateKey: await exportJwk(rsa.privateKey), publicKey: await exportJwk(rsa.publicKey) };

  const federation = createFederation({
    ...testFederationOptions(origin),
    kv: new MemoryKvStore(),
    firstKnock: "draft-cavage-http-signatures-12",
    onOutboxError: (error) => errors.push(String(error)),
  });
  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (identifier !== NAME) return null;
      const keys = await ctx.getActorKeyPairs(identifier);
      return new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: "Travelling Fedify account",
        url: new URL(`/@${identifier}`, origin),
        inbox: ctx.getInboxUri(identifier),
        endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
        followers: ctx.getFollowersUri(identifier),
        manuallyApprovesFollowers: false,
        publicKey: keys[0].cryptographicKey,
        assertionMethods: keys.map((k) => k.multikey),
        aliases: state.aliases.map((a) => new URL(a)),
        successor: state.movedTo ? new URL(state.movedTo) : null,
      });
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) =>
      identifier === NAME ? [{ privateKey: await importJwk(keyJwk.privateKey, "private"), publicKey: await importJwk(keyJwk.publicKey, "public") }] : [],
    );
  federation.setFollowersDispatcher("/users/{identifier}/followers", async () => ({ items: [] }));

  const record = async (_ctx, activity) => {
    keep({ type: activity.constructor.name, id: activity.id?.href ?? null, actor: activity.actorId?.href ?? null, activity });
  };
  federation
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      await record(ctx, follow);
      if (follow.objectId?.href !== ctx.getActorUri(NAME).href) return;
      const follower = await follow.getActor(ctx);
      if (!follower?.id) return;
      await ctx.sendActivity(
        { identifier: NAME },
        follower,
        new Accept({ id: new URL(`/activities/${randomUUID()}`, origin), actor: ctx.getActorUri(NAME), object: follow }),
        { immediate: true },
      );
    })
    .on(Activity, record)
    .onError((_ctx, error) => errors.push(String(error?.stack ?? error)));

  serve(async (req, res) => {
    try {
      const { request } = await toFetchRequest(req, origin);
      await sendResponse(res, await fedifyFetch(federation, request));
    } catch (e) {
      errors.push(String(e?.stack ?? e));
      res.writeHead(500).end(String(e));
    }
  });

  const queue = startQueue(federation);
  const restoreFetch = downgradeHttpsFor(new Set(ternHosts));
  const ctx = () => federation.createContext(new URL(origin), undefined);
  const actorUri = ctx().getActorUri(NAME);
  const newId = () => new URL(`/activities/${randomUUID()}`, origin);
  const send = async (recipients, activity) => {
    await ctx().sendActivity({ identifier: NAME }, recipients, activity, { immediate: true });
    return activity;
  };

  return {
    origin,
    host,
    handle: `${NAME}@${host}`,
    actorUri,
    state,
    received,
    errors,
    send,
    newId,
    async lookup(handleOrUri) {
      const c = ctx();
      return c.lookupObject(handleOrUri, { documentLoader: await c.getDocumentLoader({ identifier: NAME }) });
    },
    waitFor(pred, { timeoutMs = 45_000, what = "activity" } = {}) {
      return waitFor(pred, timeoutMs, () => {
        const seen = received.map((r) => `${r.type} ${r.id}`).join("\n    ") || "(nothing)";
        return `peer did not receive ${what} within ${timeoutMs} ms.\n  received:\n    ${seen}\n  errors:\n    ${errors.join("\n    ") || "(none)"}`;
      });
    },
    async stop() {
      restoreFetch();
      queue.stop();
      await Promise.race([queue.done, sleep(1000)]);
      await new Promise((r) => server.close(() => r()));
      server.closeAllConnections?.();
    },
  };
}

describe("account migration and domain suspension: Tern ⇄ fedify", () => {
  let tern;
  let peer;
  let users;
  const s = {};

  before(async () => {
    tern = await startTern({ vars: { ALLOW_LOOPBACK_FETCH: "true" } });
    peer = await startMigrationPeer({ ternHosts: [`127.0.0.1:${tern.port}`] });
    users = await signUp(tern.url, ["mig_a", "mig_b", "mig_c"]);
  });

  after(async () => {
    if (process.env.TERN_FED_LOG) console.log("peer errors:", peer?.errors);
    await peer?.stop();
    await tern?.stop();
  });

  const actorOf = (u) => `${tern.url}/users/${u.username}`;
  const rel = async (u, id) => (await u.api.get("/api/v1/accounts/relationships", { "id[]": id }))[0];

  /** The peer's account id on Tern, found by `u`'s search (WebFinger through Tern's resolver). */
  async function peerAccountId(u) {
    const found = await u.api.get("/api/v2/search", { q: `@${peer.handle}`, resolve: "true", type: "accounts" });
    const account = found.accounts.find((a) => a.acct === peer.handle);
    assert.ok(account, `search resolved @${peer.handle}`);
    return account.id;
  }

  test("1. the peer moves to Tern: A lists the peer as alias, the peer sends Move, B now follows A", async () => {
    const { mig_a: a, mig_b: b } = users;
    s.peerId = await peerAccountId(b);
    await b.api.post(`/api/v1/accounts/${s.peerId}/follow`);
    await poll("B to follow the peer (Accept received)", async () => (await rel(b, s.peerId))?.following);

    const alias = await a.api.post("/api/tern/aliases", { acct: peer.handle });
    assert.equal(alias.uri, peer.actorUri.href, "the alias resolved to the peer's actor");
    const doc = await (await fetch(actorOf(a), { headers: { accept: "application/activity+json" } })).json();
    assert.deepEqual(doc.alsoKnownAs, [peer.actorUri.href], "A's actor lists the peer in alsoKnownAs");
    const fedifyA = await peer.lookup(actorOf(a));
    assert.deepEqual(
      fedifyA.aliasIds.map((u) => u.href),
      [peer.actorUri.href],
      "fedify reads A's alsoKnownAs",
    );

    peer.state.movedTo = actorOf(a);
    const bActor = await peer.lookup(`acct:${b.username}@127.0.0.1:${tern.port}`);
    await peer.send(bActor, new Move({ id: peer.newId(), actor: peer.actorUri, object: peer.actorUri, target: new URL(actorOf(a)) }));

    await poll("B to follow A instead of the peer", async () => {
      const [toA, toPeer] = [await rel(b, a.id), await rel(b, s.peerId)];
      return toA?.following && !toPeer?.following;
    });
    const followers = await a.api.get(`/api/v1/accounts/${a.id}/followers`);
    assert.deepEqual(
      followers.map((x) => x.id),
      [b.id],
      "A has B as follower",
    );
    const shown = await b.api.get(`/api/v1/accounts/${s.peerId}`);
    assert.equal(shown.moved?.id, a.id, "the peer's account shows it moved to A");
    const notes = await b.api.get("/api/v1/notifications", { "types[]": "move" });
    assert.equal(notes[0]?.target?.id, a.id, "B got a move notification");
    await peer.waitFor((r) => r.activity instanceof Undo && r.actor === actorOf(b), { what: "B's Undo{Follow} of the peer" });
    s.movedIn = true;
  });

  test("2. A moves back to the peer: the peer receives Move signed by A, A's followers follow the peer, A is moved", async () => {
    need(s.movedIn, "the move to Tern");
    const { mig_a: a, mig_b: b } = users;
    // The peer follows A, so the Move reaches it; then it lists A as alias.
    const aActor = await peer.lookup(actorOf(a));
    const follow = await peer.send(aActor, new Follow({ id: peer.newId(), actor: peer.actorUri, object: aActor.id }));
    await peer.waitFor((r) => r.activity instanceof Accept && r.activity.objectId?.href === follow.id.href, { what: "Accept of the peer's Follow" });
    peer.state.movedTo = null;
    peer.state.aliases = [actorOf(a)];

    const moved = await a.api.post("/api/tern/migration", { acct: peer.handle, current_password: PASSWORD });
    assert.equal(moved.moved_to?.acct, peer.handle);
    const move = await peer.waitFor((r) => r.activity instanceof Move, { what: "Move from A" });
    assert.equal(move.actor, actorOf(a), "the Move is A's, signed by A (fedify verified it)");
    assert.equal(move.activity.objectId?.href, actorOf(a));
    assert.equal(move.activity.targetId?.href, peer.actorUri.href);

    await peer.waitFor((r) => r.activity instanceof Follow && r.actor === actorOf(b), { what: "B's Follow of the peer" });
    await poll("B to follow the peer instead of A", async () => {
      const [toPeer, toA] = [await rel(b, s.peerId), await rel(b, a.id)];
      return toPeer?.following && !toA?.following;
    });
    const shown = await b.api.get(`/api/v1/accounts/${a.id}`);
    assert.equal(shown.moved?.acct, peer.handle, "A's `moved` is the peer's account");
    const post = await a.api.post("/api/v1/statuses", { status: "after the move" }, { allow: [422] });
    assert.equal(post.status, 422, "a moved account cannot post");
  });

  test("3. a suspending domain block against the peer's domain cuts the follows on both sides", async () => {
    const { mig_c: c } = users;
    const peerId = await peerAccountId(c);
    await c.api.post(`/api/v1/accounts/${peerId}/follow`);
    const cActor = await peer.lookup(actorOf(c));
    const follow = await peer.send(cActor, new Follow({ id: peer.newId(), actor: peer.actorUri, object: cActor.id }));
    await peer.waitFor((r) => r.activity instanceof Accept && r.activity.objectId?.href === follow.id.href, { what: "Accept of the peer's Follow of C" });
    await poll("C and the peer to follow each other", async () => {
      const r = await rel(c, peerId);
      return r?.following && r.followed_by;
    });

    const counts = async () => {
      const me = await c.api.get("/api/v1/accounts/verify_credentials");
      return [me.following_count, me.followers_count];
    };
    assert.deepEqual(await counts(), [1, 1], "one follow row each way before the block");
    const admin = await setUpOwner(tern.url, { username: "mig_owner" });
    const block = await admin.post("/api/v1/admin/domain_blocks", { domain: "127.0.0.1", severity: "suspend" });
    assert.equal(block.severity, "suspend");
    await poll("the block to cut both follows", async () => {
      const r = await rel(c, peerId);
      return !r || (!r.following && !r.followed_by);
    });
    // The follow rows themselves are gone (the counters are kept by triggers on them), whatever the API shows of a
    // suspended account.
    await poll("C's follow counters to drop to zero", async () => (await counts()).every((n) => n === 0));
    const r = await rel(c, peerId);
    if (r) {
      assert.equal(r.following, false, "C no longer follows the peer");
      assert.equal(r.followed_by, false, "the peer no longer follows C");
    }
    // The peer's deliveries are refused now (its domain is suspended).
    await assert.rejects(
      peer.send(cActor, new Like({ id: peer.newId(), actor: peer.actorUri, object: new URL(actorOf(c)) })),
      (e) => /\((401|403) /.test(String(e?.message)),
      "Tern refuses the peer's deliveries with 401/403",
    );
  });
});
