// Federation with a real, independent ActivityPub server: a fedify peer (test/federation/peer.mjs) and Tern under
// `wrangler dev`, both on 127.0.0.1. Each side fetches the other's documents and verifies the other's HTTP
// signatures; deliveries go through Tern's real Queues. Steps share state and run in order; a step whose
// prerequisite failed fails with "blocked by ...".
import "./polyfills.mjs";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Accept, Block, Create, Delete, Follow, Person, Undo, Update } from "@fedify/fedify/vocab";
import WebSocket from "ws";
import { startTern } from "../support/server.mjs";
import { startPeer } from "./peer.mjs";
import { Temporal } from "./polyfills.mjs";
import { poll, signUp } from "./tern-api.mjs";

const PUBLIC = new Set(["https://www.w3.org/ns/activitystreams#Public", "as:Public", "Public"]);
const list = (v) => (v == null ? [] : Array.isArray(v) ? v : [v]).map((x) => (typeof x === "string" ? x : (x?.id ?? x?.href)));
const objectId = (raw) => (typeof raw?.object === "string" ? raw.object : raw?.object?.id);

function need(value, prereq) {
  if (!value) throw new Error(`blocked by an earlier step: ${prereq}`);
  return value;
}

describe("federation: Tern ⇄ fedify peer over loopback", () => {
  let tern;
  let peer;
  let alice; // unlocked Tern user
  let bob; // locked Tern user
  const s = {}; // shared state between steps

  before(async () => {
    // Poll counts go out 1 s after votes instead of Mastodon's 3 minutes.
    tern = await startTern({ vars: { ALLOW_LOOPBACK_FETCH: "true", POLL_UPDATE_DELAY_SECONDS: "1" } });
    peer = await startPeer({ ternHosts: [`127.0.0.1:${tern.port}`] });
    const users = await signUp(tern.url, ["alice", "bob"]);
    alice = users.alice;
    bob = users.bob;
    await bob.api.patch("/api/v1/accounts/update_credentials", { locked: true });
  });

  after(async () => {
    if (process.env.TERN_FED_LOG) {
      console.log("peer POSTs:", peer?.posts);
      console.log("peer errors:", peer?.errors);
    }
    await s.peer2?.stop(); // before the first peer: their fetch shims are stacked
    await peer?.stop();
    await tern?.stop();
  });

  const ternHost = () => `127.0.0.1:${tern.port}`;

  test("signatures are checked on both sides: unsigned activities get 401", async () => {
    const forged = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${peer.origin}/forged/1`,
      type: "Like",
      actor: peer.actorUri.href,
      object: `${tern.url}/users/alice`,
    };
    const headers = { "content-type": "application/activity+json" };
    const toTern = await fetch(`${tern.url}/users/alice/inbox`, { method: "POST", headers, body: JSON.stringify(forged) });
    assert.equal(toTern.status, 401, "Tern refuses an unsigned POST");
    const toPeer = await fetch(`${peer.origin}/inbox`, {
      method: "POST",
      headers,
      body: JSON.stringify({ ...forged, id: `${tern.url}/forged/1`, actor: `${tern.url}/users/alice`, object: peer.actorUri.href }),
    });
    assert.equal(toPeer.status, 401, "fedify's signature verification is on");
  });

  test("1. the peer resolves a Tern user by WebFinger and fetches the actor", async () => {
    const actor = await peer.lookup(`acct:alice@${ternHost()}`);
    assert.ok(actor, `fedify resolved acct:alice@${ternHost()}`);
    assert.ok(actor instanceof Person, `actor is a Person (got ${actor?.constructor?.name})`);
    assert.equal(actor.id?.href, `${tern.url}/users/alice`);
    assert.equal(actor.preferredUsername, "alice");
    assert.equal(actor.inboxId?.href, `${tern.url}/users/alice/inbox`);
    const key = await actor.getPublicKey();
    assert.ok(key?.publicKey, "actor has a usable publicKey");
    assert.equal(key.ownerId?.href, actor.id.href, "publicKey.owner is the actor");
    s.alice = actor;

    const locked = await peer.lookup(`acct:bob@${ternHost()}`);
    assert.equal(locked?.id?.href, `${tern.url}/users/bob`);
    assert.equal(locked.manuallyApprovesFollowers, true, "bob is locked");
    s.bob = locked;
  });

  test("2a. the peer follows an unlocked Tern user and receives Accept", async () => {
    const target = need(s.alice, "WebFinger lookup of alice");
    const follow = await peer.follow(target);
    const accept = await peer.waitFor(
      (r) => r.activity instanceof Accept && (r.activity.objectId?.href === follow.id.href || objectId(r.raw) === follow.id.href),
      { what: `Accept of ${follow.id.href}` },
    );
    assert.equal(accept.actor, target.id.href, "Accept comes from alice");
    const peerAccount = await poll("alice's followers to list the peer", async () => {
      const followers = await alice.api.get(`/api/v1/accounts/${alice.id}/followers`);
      return followers.find((a) => a.acct === peer.handle);
    });
    s.peerAccountId = peerAccount.id;
    s.aliceFollowed = true;
  });

  test("2b. the peer follows a locked Tern user: pending until authorized, then Accept", async () => {
    const target = need(s.bob, "WebFinger lookup of bob");
    const follow = await peer.follow(target);
    const isAccept = (r) => r.activity instanceof Accept && (r.activity.objectId?.href === follow.id.href || objectId(r.raw) === follow.id.href);
    const request = await poll("bob's follow requests to list the peer", async () => {
      const reqs = await bob.api.get("/api/v1/follow_requests");
      return reqs.find((a) => a.acct === peer.handle);
    });
    assert.equal(peer.received.some(isAccept), false, "no Accept before bob authorizes");
    const rel = await bob.api.post(`/api/v1/follow_requests/${request.id}/authorize`);
    assert.equal(rel.followed_by, true, "authorize returns followed_by: true");
    const accept = await peer.waitFor(isAccept, { what: `Accept of ${follow.id.href} after authorize` });
    assert.equal(accept.actor, target.id.href);
  });

  test("3. public, followers-only and direct statuses reach the peer, addressed correctly", async () => {
    need(s.aliceFollowed, "peer follows alice");
    const followersUri = `${tern.url}/users/alice/followers`;
    const createFor = (status) =>
      peer.waitFor((r) => r.activity instanceof Create && objectId(r.raw) === status.uri, { what: `Create for ${status.visibility} ${status.uri}` });

    const pub = await alice.api.post("/api/v1/statuses", { status: "Hello fediverse (public)", visibility: "public" });
    const priv = await alice.api.post("/api/v1/statuses", { status: "Only for followers", visibility: "private" });
    const direct = await alice.api.post("/api/v1/statuses", { status: `@${peer.handle} just for you`, visibility: "direct" });
    assert.ok(
      direct.mentions?.some((m) => m.acct === peer.handle),
      `the direct status mentions the peer (mentions: ${JSON.stringify(direct.mentions)})`,
    );
    s.publicStatus = pub;

    const failures = [];
    const check = async (label, status, verify) => {
      try {
        const got = await createFor(status);
        verify(got.raw, list(got.raw.to), list(got.raw.cc));
      } catch (e) {
        failures.push(`${label}: ${e.message}`);
      }
    };
    await check("public", pub, (raw, to, cc) => {
      assert.ok(
        to.some((x) => PUBLIC.has(x)),
        `public: to has Public (to=${JSON.stringify(to)})`,
      );
      assert.ok(cc.includes(followersUri), `public: cc has the followers collection (cc=${JSON.stringify(cc)})`);
      assert.match(String(raw.object?.content), /Hello fediverse/);
    });
    await check("followers-only", priv, (_raw, to, cc) => {
      assert.ok(to.includes(followersUri), `private: to has the followers collection (to=${JSON.stringify(to)})`);
      assert.ok(![...to, ...cc].some((x) => PUBLIC.has(x)), "private: Public nowhere");
    });
    await check("direct", direct, (_raw, to, cc) => {
      assert.deepEqual(to, [peer.actorUri.href], `direct: to is the peer only (to=${JSON.stringify(to)})`);
      assert.ok(![...to, ...cc].some((x) => PUBLIC.has(x) || x === followersUri), `direct: no Public/followers (cc=${JSON.stringify(cc)})`);
    });
    assert.deepEqual(failures, []);
  });

  test("4. the peer replies with a mention: the Tern user gets a mention notification", async () => {
    const target = need(s.alice, "WebFinger lookup of alice");
    const parent = need(s.publicStatus, "alice's public status");
    const reply = await peer.post(target, { content: "Nice post!", mention: target, inReplyTo: parent.uri });
    const n = await poll("a mention notification from the peer", async () => {
      const all = await alice.api.get("/api/v1/notifications", { "types[]": "mention" });
      return all.find((x) => x.type === "mention" && x.account?.acct === peer.handle && x.status?.uri === reply.id);
    });
    assert.equal(n.status.in_reply_to_id, parent.id, "the reply is threaded under alice's status");
    assert.match(n.status.content, /Nice post!/);
  });

  test("4a. custom emojis: the peer's Emoji tags show in Tern's `emojis` on its account and its status", async () => {
    const target = need(s.alice, "WebFinger lookup of alice");
    const expected = (shortcode) => ({ shortcode, url: peer.emojiUrl(shortcode), static_url: peer.emojiUrl(shortcode), visible_in_picker: true });
    const posted = await peer.post(target, { content: "Custom emoji :fedify_party: time", mention: target, emojis: ["fedify_party"] });
    const n = await poll("a mention notification for the post with an emoji", async () => {
      const all = await alice.api.get("/api/v1/notifications", { "types[]": "mention" });
      return all.find((x) => x.status?.uri === posted.id);
    });
    assert.deepEqual(n.status.emojis, [expected("fedify_party")], "the status lists the emoji its content uses");
    assert.match(n.status.content, /:fedify_party:/);
    // The actor document (fetched when the peer first reached Tern) has one in its display name.
    assert.equal(n.account.display_name, "Fedify Peer :fedify_blob:");
    assert.deepEqual(n.account.emojis, [expected("fedify_blob")], "the account lists the emoji of its display name");
    const status = await alice.api.get(`/api/v1/statuses/${n.status.id}`);
    assert.deepEqual(status.emojis, [expected("fedify_party")]);
  });

  test("4b. remote media: the peer's photo is fetched once into Tern's R2 and served from Tern's domain, measured, with a blurhash", async () => {
    const target = need(s.alice, "WebFinger lookup of alice");
    const { default: sharp } = await import("sharp");
    const png = await sharp({ create: { width: 96, height: 64, channels: 3, background: { r: 40, g: 120, b: 200 } } })
      .png()
      .toBuffer();
    const file = peer.serveFile("/system/media/photo.png", png, "image/png");
    const posted = await peer.post(target, { content: "a photo", mention: target, attachments: [{ url: file.url, mediaType: "image/png", name: "blue" }] });
    const m = await poll("the attachment cached and served from Tern", async () => {
      const all = await alice.api.get("/api/v1/notifications", { "types[]": "mention" });
      const att = all.find((x) => x.status?.uri === posted.id)?.status.media_attachments[0];
      return att?.url?.startsWith(tern.url) ? att : undefined;
    });
    assert.equal(m.remote_url, file.url, "the original URL is kept");
    assert.equal(m.description, "blue");
    assert.deepEqual([m.meta.original.width, m.meta.original.height], [96, 64], "measured from the file");
    assert.equal(typeof m.blurhash, "string", "a blurhash is made when the sender gave none");
    const served = await fetch(m.url);
    assert.equal(served.status, 200);
    assert.match(served.headers.get("cache-control") ?? "", /max-age=31536000/);
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), png, "Tern serves the same bytes");
    assert.equal(file.gets(), 1, "fetched from the peer once");
  });

  test("5. the peer likes and boosts, then undoes both: counts and notifications follow", async () => {
    const target = need(s.alice, "WebFinger lookup of alice");
    const status = need(s.publicStatus, "alice's public status");
    const counts = () => alice.api.get(`/api/v1/statuses/${status.id}`);
    const notification = (type) =>
      poll(`a ${type} notification from the peer`, async () => {
        const all = await alice.api.get("/api/v1/notifications", { "types[]": type });
        return all.find((x) => x.type === type && x.account?.acct === peer.handle && x.status?.id === status.id);
      });

    const like = await peer.like(target, status.uri);
    await poll("favourites_count 1", async () => (await counts()).favourites_count === 1);
    await notification("favourite");

    const boost = await peer.announce(target, status.uri);
    await poll("reblogs_count 1", async () => (await counts()).reblogs_count === 1);
    await notification("reblog");

    await peer.undo(target, like);
    await poll("favourites_count back to 0", async () => (await counts()).favourites_count === 0);
    await peer.undo(target, boost);
    await poll("reblogs_count back to 0", async () => (await counts()).reblogs_count === 0);
  });

  test("6. the Tern user finds the peer by search and follows it: Follow, Accept, following", async () => {
    const found = await alice.api.get("/api/v2/search", { q: `@${peer.handle}`, resolve: "true", type: "accounts" });
    const account = found.accounts.find((a) => a.acct === peer.handle);
    assert.ok(account, `search resolved @${peer.handle} (got ${JSON.stringify(found.accounts.map((a) => a.acct))})`);
    s.peerAccountId = account.id;
    await alice.api.post(`/api/v1/accounts/${account.id}/follow`);
    const follow = await peer.waitFor((r) => r.activity instanceof Follow && r.actor === `${tern.url}/users/alice`, {
      what: "Follow from alice",
    });
    assert.equal(follow.activity.objectId?.href, peer.actorUri.href);
    await poll("relationship following: true", async () => {
      const [rel] = await alice.api.get("/api/v1/accounts/relationships", { "id[]": account.id });
      return rel?.following === true && rel.requested === false;
    });
    s.aliceFollowsPeer = true;
  });

  test("7. a peer post lands in the home timeline; Update adds history; Delete removes it", async () => {
    need(s.aliceFollowsPeer, "alice follows the peer");
    const posted = await peer.post("followers", { content: "A post from the fedify peer" });
    const inHome = await poll("the peer's post in alice's home timeline", async () => {
      const home = await alice.api.get("/api/v1/timelines/home");
      return home.find((st) => st.uri === posted.id);
    });
    assert.equal(inHome.account.acct, peer.handle);

    await peer.edit("followers", posted, "A post from the fedify peer (edited)");
    let seen = [];
    const history = await poll("2 history entries", async () => {
      seen = await alice.api.get(`/api/v1/statuses/${inHome.id}/history`);
      return seen.length === 2 ? seen : null;
    }).catch((e) => {
      throw new Error(`${e.message}; history had ${seen.length} entries: ${JSON.stringify(seen.map((h) => h.content))}`);
    });
    assert.match(history[1].content ?? "", /edited/);

    await peer.remove("followers", posted);
    await poll("GET /api/v1/statuses/:id to be 404", async () => {
      const r = await alice.api.get(`/api/v1/statuses/${inHome.id}`, undefined, { allow: [200, 404] });
      return r.status === 404;
    });
  });

  test("7a. polls: the Tern user votes on the peer's Question; the peer counts it and its counts come back", async () => {
    need(s.aliceFollowsPeer, "alice follows the peer");
    const aliceUri = `${tern.url}/users/alice`;
    const q = await peer.postQuestion("followers", { content: "Tabs or spaces?", options: ["tabs", "spaces"], tallies: [3, 4], otherVoters: 7 });
    const status = await poll("the peer's Question in alice's home timeline", async () => {
      const home = await alice.api.get("/api/v1/timelines/home");
      return home.find((st) => st.uri === q.id);
    });
    assert.deepEqual(
      status.poll?.options.map((o) => [o.title, o.votes_count]),
      [
        ["tabs", 3],
        ["spaces", 4],
      ],
    );

    const voted = await alice.api.post(`/api/v1/polls/${status.poll.id}/votes`, { choices: [1] });
    assert.deepEqual(voted.own_votes, [1]);
    const vote = await peer.waitFor((r) => r.activity instanceof Create && r.actor === aliceUri && r.raw?.object?.inReplyTo === q.id, {
      what: "alice's vote (Create{Note} in reply to the Question)",
    });
    assert.equal(vote.raw.object.type, "Note");
    assert.equal(vote.raw.object.name, "spaces");
    assert.equal(vote.raw.object.attributedTo, aliceUri);
    assert.deepEqual(list(vote.raw.to), [peer.actorUri.href], "a vote is addressed to the poll's author only");
    assert.deepEqual(q.tallies, [3, 5], "the peer counted the vote");
    assert.ok(q.voters.has(aliceUri));

    // Votes from elsewhere: the peer's Update{Question} sets the counts Tern shows.
    await peer.countElsewhere(s.alice, q, "tabs", 2);
    const counted = await poll("the peer's counts on Tern", async () => {
      const p = await alice.api.get(`/api/v1/polls/${status.poll.id}`);
      return p.options[0].votes_count === 5 ? p : null;
    });
    assert.deepEqual(
      counted.options.map((o) => o.votes_count),
      [5, 5],
    );
    assert.equal(counted.votes_count, 10);
    assert.deepEqual(counted.own_votes, [1]);
  });

  test("7b. polls: the peer votes on a Tern poll; it counts, stays no status, and the counts go back in an Update", async () => {
    need(s.aliceFollowed, "the peer follows alice");
    const st = await alice.api.post("/api/v1/statuses", { status: "Coffee or tea?", poll: { options: ["coffee", "tea"], expires_in: 3600 } });
    const created = await peer.waitFor((r) => r.activity instanceof Create && objectId(r.raw) === st.uri, { what: "the Question's Create" });
    assert.equal(created.raw.object.type, "Question");

    await peer.vote(need(s.alice, "WebFinger lookup of alice"), st.uri, "tea");
    const counted = await poll("the peer's vote counted", async () => {
      const p = await alice.api.get(`/api/v1/polls/${st.poll.id}`);
      return p.votes_count === 1 ? p : null;
    });
    assert.deepEqual(
      counted.options.map((o) => [o.title, o.votes_count]),
      [
        ["coffee", 0],
        ["tea", 1],
      ],
    );
    const context = await alice.api.get(`/api/v1/statuses/${st.id}/context`);
    assert.deepEqual(context.descendants, [], "a vote is not a reply");
    assert.equal((await alice.api.get(`/api/v1/statuses/${st.id}`)).replies_count, 0);
    const notes = await alice.api.get("/api/v1/notifications");
    assert.ok(!notes.some((n) => n.status?.id === st.id || n.status?.in_reply_to_id === st.id), "no notification for a vote");

    const update = await peer.waitFor((r) => r.activity instanceof Update && objectId(r.raw) === st.uri, { what: "Update{Question} with the counts" });
    assert.equal(update.actor, `${tern.url}/users/alice`);
    assert.equal(update.raw.object.type, "Question");
    assert.deepEqual(
      update.raw.object.oneOf.map((o) => [o.name, o.replies.totalItems]),
      [
        ["coffee", 0],
        ["tea", 1],
      ],
    );
    assert.equal(update.raw.object.votersCount, 1);
  });

  test("7c. streaming: a public Note from the peer arrives as `update` on the follower's open `user` WebSocket", async () => {
    need(s.aliceFollowsPeer, "alice follows the peer");
    const url = `${tern.url.replace(/^http/, "ws")}/api/v1/streaming?stream=user`;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${alice.token}` } });
    const received = [];
    let notify = () => {};
    let ended = null;
    socket.on("message", (data) => {
      received.push(String(data));
      notify();
    });
    socket.on("close", (code) => {
      ended = `closed (${code})`;
      notify();
    });
    socket.on("error", (e) => {
      ended = `error: ${e.message}`;
      notify();
    });
    /** The first message matching `pred`, once it is there; fails when the socket ends or after `ms`. */
    const next = (pred, what, ms = 60_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`${what}: nothing within ${ms} ms; got ${JSON.stringify(received).slice(0, 600)}`)), ms);
        const check = () => {
          for (const text of received) {
            let msg;
            try {
              msg = JSON.parse(text);
            } catch {
              continue;
            }
            if (pred(msg)) return done(null, msg);
          }
          if (ended) done(new Error(`${what}: the socket ${ended} after ${received.length} messages`));
        };
        const done = (err, value) => {
          clearTimeout(timer);
          notify = () => {};
          if (err) reject(err);
          else resolve(value);
        };
        notify = check;
        check();
      });
    try {
      // Tern subscribes the query's stream before it answers 101: once open, nothing published later is missed.
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("unexpected-response", (_req, res) => reject(new Error(`streaming handshake answered HTTP ${res.statusCode}`)));
        socket.once("error", reject);
      });
      const posted = await peer.post("followers", { content: "Streaming from the fedify peer" });
      const msg = await next((m) => m.event === "update" && JSON.parse(m.payload ?? "{}").uri === posted.id, `update for ${posted.id}`);
      assert.deepEqual(msg.stream, ["user"]);
      const status = JSON.parse(msg.payload);
      assert.equal(status.account.acct, peer.handle);
      assert.equal(status.visibility, "public");
      assert.match(status.content, /Streaming from the fedify peer/);
      const fetched = await alice.api.get(`/api/v1/statuses/${status.id}`);
      assert.equal(fetched.uri, posted.id, "the streamed id is the status REST serves");
    } finally {
      socket.close();
    }
  });

  test("8. the Tern user blocks the peer: Block is delivered and follows are removed", async () => {
    const peerId = need(s.peerAccountId, "the peer's account on Tern");
    await alice.api.post(`/api/v1/accounts/${peerId}/block`);
    const block = await peer.waitFor((r) => r.activity instanceof Block && r.actor === `${tern.url}/users/alice`, {
      what: "Block from alice",
    });
    assert.equal(block.activity.objectId?.href, peer.actorUri.href);
    const [rel] = await alice.api.get("/api/v1/accounts/relationships", { "id[]": peerId });
    assert.equal(rel.blocking, true);
    assert.equal(rel.following, false, "alice no longer follows the peer");
    assert.equal(rel.followed_by, false, "the peer no longer follows alice");
    const followers = await alice.api.get(`/api/v1/accounts/${alice.id}/followers`);
    assert.ok(!followers.some((a) => a.acct === peer.handle), "the peer is gone from alice's followers");
  });

  test("9. GoToSocial's check (point 0): the peer finds the owner of Tern's signing key by WebFinger before it answers; bob resolves dave", async () => {
    // The check is on for every signed GET of the peer's actors and objects; an unsigned one is refused.
    const unsigned = await fetch(peer.uriOf("dave"), { headers: { accept: "application/activity+json" } });
    assert.equal(unsigned.status, 401, "the peer refuses an unsigned GET of its actor");
    const from = peer.keyOwnerChecks.length;
    const handle = peer.handleOf("dave");
    const found = await bob.api.get("/api/v2/search", { q: `@${handle}`, resolve: "true", type: "accounts" });
    const dave = found.accounts.find((a) => a.acct === handle);
    assert.ok(dave, `search resolved @${handle} (got ${JSON.stringify(found.accounts.map((a) => a.acct))})`);
    s.daveId = dave.id;
    const checks = peer.keyOwnerChecks.slice(from).filter((c) => c.path === "/users/dave");
    assert.ok(checks.length > 0, "Tern's fetch of dave was signed and went through the check");
    const instanceKey = `${tern.url}/actor#main-key`;
    const byInstance = checks.find((c) => c.keyId === instanceKey);
    assert.ok(byInstance, `Tern signed with its instance actor (keys seen: ${JSON.stringify(checks.map((c) => c.keyId))})`);
    assert.equal(byInstance.acct, `acct:${ternHost()}@${ternHost()}`, "looked up as acct:<domain>@<domain>");
    assert.deepEqual(
      peer.keyOwnerChecks.filter((c) => !c.ok && c.why !== "not signed"),
      [],
      "every signed GET from Tern passed the key-owner check",
    );
  });

  test("10. a first-contact mention (point 2): bob mentions carol, whom Tern has never seen; carol's server gets the Create with the Mention", async () => {
    const handle = peer.handleOf("carol");
    const carolUri = peer.uriOf("carol").href;
    const st = await bob.api.post("/api/v1/statuses", { status: `@${handle} hello, first contact`, visibility: "public" });
    assert.ok(
      st.mentions?.some((m) => m.acct === handle && m.url),
      `the status mentions carol (mentions: ${JSON.stringify(st.mentions)})`,
    );
    const got = await peer.waitFor((r) => r.activity instanceof Create && objectId(r.raw) === st.uri, { what: `Create of ${st.uri}` });
    const tags = [got.raw.object?.tag ?? []].flat();
    assert.ok(
      tags.some((t) => t.type === "Mention" && t.href === carolUri),
      `the Note has a Mention tag for carol (tags: ${JSON.stringify(tags)})`,
    );
    assert.ok([...list(got.raw.to), ...list(got.raw.cc)].includes(carolUri), "carol is addressed");
  });

  test("11. follow → unfollow → follow where the peer reuses its Accept id (point 3): the re-follow completes and posts reach home", async () => {
    const bobUri = `${tern.url}/users/bob`;
    const found = await bob.api.get("/api/v2/search", { q: `@${peer.handle}`, resolve: "true", type: "accounts" });
    const account = found.accounts.find((a) => a.acct === peer.handle);
    assert.ok(account, "bob resolved the peer");
    const following = (want) =>
      poll(`bob's relationship following: ${want}`, async () => {
        const [rel] = await bob.api.get("/api/v1/accounts/relationships", { "id[]": account.id });
        return rel?.following === want && rel.requested === false;
      });
    const followsFromBob = () => peer.received.filter((r) => r.activity instanceof Follow && r.actor === bobUri);

    await bob.api.post(`/api/v1/accounts/${account.id}/follow`);
    await peer.waitFor((r) => r.activity instanceof Follow && r.actor === bobUri, { what: "bob's first Follow" });
    await following(true);
    const acceptId = peer.acceptIds.get(`${bobUri} peer`)?.href;
    assert.ok(acceptId, "the peer accepted with an id it keeps for bob");

    await bob.api.post(`/api/v1/accounts/${account.id}/unfollow`);
    await peer.waitFor((r) => r.activity instanceof Undo && r.actor === bobUri, { what: "bob's Undo{Follow}" });
    await following(false);

    const first = followsFromBob()[0].id;
    await bob.api.post(`/api/v1/accounts/${account.id}/follow`);
    await peer.waitFor((r) => r.activity instanceof Follow && r.actor === bobUri && r.id !== first, { what: "bob's second Follow" });
    assert.equal(peer.acceptIds.get(`${bobUri} peer`)?.href, acceptId, "the second Accept reuses the first one's id");
    await following(true);
    s.bobFollowsPeer = true;

    const posted = await peer.post("followers", { content: "After the re-follow" });
    await poll("the peer's post in bob's home timeline", async () => {
      const home = await bob.api.get("/api/v1/timelines/home");
      return home.find((st) => st.uri === posted.id);
    });
  });

  test("12. mentions between two remote accounts (point 5): the peer mentions dave; the status' `mentions` lists dave", async () => {
    const target = need(s.bob, "WebFinger lookup of bob");
    need(s.daveId, "bob resolved dave");
    const dave = { id: peer.uriOf("dave"), preferredUsername: "dave", url: null };
    const posted = await peer.post(target, { content: "you two should meet", mention: target, alsoMentions: [dave] });
    const n = await poll("bob's mention notification for the peer's post", async () => {
      const all = await bob.api.get("/api/v1/notifications", { "types[]": "mention" });
      return all.find((x) => x.status?.uri === posted.id);
    });
    const accts = n.status.mentions.map((m) => m.acct).sort();
    assert.deepEqual(accts, ["bob", peer.handleOf("dave")].sort(), `mentions: ${JSON.stringify(n.status.mentions)}`);
    assert.equal(n.status.mentions.find((m) => m.acct === peer.handleOf("dave")).id, s.daveId);
  });

  test("13. a late old status (point 6): a Create of a post published long ago is stored but not put in home", async () => {
    need(s.bobFollowsPeer, "bob follows the peer");
    const longAgo = Temporal.Now.instant().subtract({ hours: 24 * 30 });
    const old = await peer.post("followers", { content: "Written a month ago", published: longAgo });
    const stored = await poll("the old post stored on Tern (found without resolving)", async () => {
      const r = await bob.api.get("/api/v2/search", { q: old.id, resolve: "false", type: "statuses" });
      return r.statuses.find((st) => st.uri === old.id);
    });
    assert.match(stored.content, /Written a month ago/);
    // A fresh post sent after it reaches home: by then the old one would have been fanned out too.
    const fresh = await peer.post("followers", { content: "Written just now" });
    const home = await poll("the fresh post in bob's home timeline", async () => {
      const h = await bob.api.get("/api/v1/timelines/home", { limit: 40 });
      return h.some((st) => st.uri === fresh.id) ? h : null;
    });
    assert.ok(!home.some((st) => st.uri === old.id), "the old post is not in home");
  });

  test("14. a Delete reaches a booster's server (point 7): dave, who does not follow alice, boosts her post; she deletes it", async () => {
    const target = need(s.alice, "WebFinger lookup of alice");
    const [rel] = await alice.api.get("/api/v1/accounts/relationships", { "id[]": need(s.daveId, "bob resolved dave") });
    assert.equal(rel.followed_by, false, "dave does not follow alice");
    const followers = await alice.api.get(`/api/v1/accounts/${alice.id}/followers`);
    assert.ok(!followers.some((a) => a.acct.endsWith(`@${peer.host}`)), "no one on the peer's server follows alice");
    const st = await alice.api.post("/api/v1/statuses", { status: "Boost me, then watch me go", visibility: "public" });
    await peer.announce(target, st.uri, { as: "dave" });
    await poll("reblogs_count 1", async () => (await alice.api.get(`/api/v1/statuses/${st.id}`)).reblogs_count === 1);
    assert.ok(!peer.received.some((r) => r.activity instanceof Create && objectId(r.raw) === st.uri), "the post itself never went to the peer's server");
    await alice.api.delete(`/api/v1/statuses/${st.id}`);
    const del = await peer.waitFor((r) => r.activity instanceof Delete && objectId(r.raw) === st.uri, { what: `Delete of ${st.uri}` });
    assert.equal(del.actor, `${tern.url}/users/alice`);
  });

  test("15. RFC 9421 both ways (point 8): a peer signing RFC 9421 first is accepted at once, and Tern signs back with RFC 9421", async () => {
    const peer2 = await startPeer({ ternHosts: [ternHost()], firstKnock: "rfc9421" });
    s.peer2 = peer2;
    const target = await peer2.lookup(`acct:alice@${ternHost()}`);
    assert.equal(target?.id?.href, `${tern.url}/users/alice`);
    const follow = await peer2.follow(target);
    const accept = await peer2.waitFor(
      (r) => r.activity instanceof Accept && (r.activity.objectId?.href === follow.id.href || objectId(r.raw) === follow.id.href),
      { what: `Accept of ${follow.id.href}` },
    );

    // Inbound: the peer's POSTs to Tern were signed with RFC 9421 and accepted at the first knock (no fallback).
    const posts = peer2.sent.filter((r) => r.method === "POST");
    assert.ok(posts.length > 0, "the peer posted to Tern");
    assert.deepEqual(
      posts.map((r) => [r.rfc9421, r.status]),
      posts.map(() => [true, 202]),
      `every POST signed RFC 9421 and accepted (${JSON.stringify(posts)})`,
    );
    assert.equal(await peer2.rememberedSpec(tern.url), "rfc9421", "fedify remembers that Tern takes RFC 9421");

    // Outbound: Tern's deliveries to this peer are signed with RFC 9421 and verified by fedify.
    const acceptPost = peer2.posts.find((p) => p.id === accept.id);
    assert.ok(acceptPost?.rfc9421, `the Accept came signed with RFC 9421 (${JSON.stringify(acceptPost)})`);
    assert.match(acceptPost.signatureInput, /"@method".*"@target-uri".*"content-digest".*;keyid="[^"]+\/users\/alice#main-key"/);
    const st = await alice.api.post("/api/v1/statuses", { status: "Signed both ways", visibility: "public" });
    const created = await peer2.waitFor((r) => r.activity instanceof Create && objectId(r.raw) === st.uri, { what: `Create of ${st.uri}` });
    const createPost = peer2.posts.find((p) => p.id === created.id);
    assert.equal(createPost?.rfc9421, true, "the Create came signed with RFC 9421");
    assert.deepEqual(
      peer2.posts.filter((p) => p.status >= 300),
      [],
      "no delivery from Tern was refused",
    );
    assert.deepEqual(peer2.unverified, [], "fedify verified everything Tern sent");
    assert.deepEqual(peer2.errors, []);
  });

  test("every delivery from Tern passed fedify's signature check", () => {
    const fromTern = peer.posts.filter((p) => p.id?.startsWith(`${tern.url}/`) && !p.id.includes("/forged/"));
    assert.ok(fromTern.length > 0, "Tern delivered to the peer");
    const refused = fromTern.filter((p) => p.status >= 300);
    assert.deepEqual(refused, [], "no delivery refused by the peer");
    const unverified = peer.unverified.filter((u) => !u.id?.includes("/forged/"));
    assert.deepEqual(unverified, [], "no activity from Tern failed verification");
    assert.deepEqual(peer.errors, [], "no errors in the peer's inbox listeners or outbox");
  });
});
