// A real, independent ActivityPub server for the federation suite: fedify (createFederation with an in-memory KV
// and queue) behind a small node:http adapter on 127.0.0.1. Actors "peer" (the main one), "carol" and "dave", each
// with an RSA key. Everything that reaches its inboxes is recorded: `received` holds the activities fedify verified
// and handed to a listener, `unverified` the ones it refused (bad or missing signature), `posts` every POST with the
// status it got and whether it was signed with RFC 9421; `sent` every request the peer itself signed to Tern (which
// spec, which answer). Like GoToSocial, the peer answers a signed GET of its actors and objects only after it has
// found the signing key's owner by WebFinger (`acct:<preferredUsername>@<host>`, whose `self` link must be the owner):
// `keyOwnerChecks` records each check. Like Hollo, it reuses one Accept id per follower and followee. Polls work
// as Mastodon's do: a vote (Create{Note} with `name` = option, `inReplyTo` = the Question) on one of the peer's
// Questions is counted, and the Question goes back to the voter in an Update with its new counts.
// The actor has a custom emoji in its display name, and `post` can tag the Note with Emoji tags (Mastodon's shape).
// Fedify's own checks stay on: HTTP signatures are verified, and only private-address fetching is relaxed so the
// two servers can talk over loopback.
import "./polyfills.mjs";
import { randomUUID } from "node:crypto";
import { createFederation, exportJwk, generateCryptoKeyPair, importJwk, MemoryKvStore } from "@fedify/fedify";
import {
  Accept,
  Activity,
  Announce,
  Collection,
  Create,
  Delete,
  Document,
  Emoji,
  Endpoints,
  Follow,
  Image,
  Like,
  Mention,
  Note,
  Person,
  PUBLIC_COLLECTION,
  Question,
  Tombstone,
  Undo,
  Update,
} from "@fedify/fedify/vocab";
import { arrivalLog, downgradeHttpsFor, fedifyFetch, listenLoopback, sendResponse, startQueue, testFederationOptions, toFetchRequest } from "./fedify-host.mjs";
import { Temporal } from "./polyfills.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PEER = "peer";
/** The peer's actors: "peer" is the one most steps use; the others are for steps that need an account no one touched. */
const ACTORS = ["peer", "carol", "dave"];
const PEER_EMOJI = "fedify_blob";

async function enableLogs() {
  const { configure, getConsoleSink } = await import("@logtape/logtape");
  await configure({
    reset: true,
    sinks: { console: getConsoleSink() },
    loggers: [
      { category: "fedify", lowestLevel: "debug", sinks: ["console"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["console"] },
    ],
  });
}

/**
 * @param {{ ternHosts?: string[], log?: boolean, firstKnock?: "draft-cavage-http-signatures-12" | "rfc9421" }} [opts]
 */
export async function startPeer({ ternHosts = [], log = !!process.env.TERN_FED_LOG, firstKnock = "draft-cavage-http-signatures-12" } = {}) {
  if (log) await enableLogs();
  // Requests are handled once everything below is set up.
  const { server, port, origin, host, serve } = await listenLoopback();

  // received: { type, id, actor, activity (fedify object), raw (JSON as sent), at }; waitFor() runs on each arrival
  const { received, record: keep, waitFor } = arrivalLog();
  const unverified = []; // { type, id, reason }
  const posts = []; // { path, type, id, status, rfc9421 (signed with Signature-Input), signatureInput }
  const sent = []; // requests the peer signed to Tern: { method, url, rfc9421, status }
  const keyOwnerChecks = []; // { path, keyId, owner, acct, ok, why }: the GoToSocial-style check of signed GETs
  const acceptIds = new Map(); // "follower followee" → the one Accept id the peer uses for that pair (as Hollo does)
  const errors = []; // inbox listener / outbox errors
  const rawById = new Map();
  const notes = new Map(); // note id (path segment) → Note, served by the object dispatcher
  const followers = new Map(); // follower actor URI → fedify Actor (for "followers" deliveries)
  const questions = new Map(); // question id (href) → its state: options, tallies, voters (see postQuestion)
  const files = new Map(); // path → { type, bytes, gets }: media the peer serves (serveFile), as a Mastodon's /system/...

  /** The peer's custom emoji `shortcode` as an Emoji tag (Mastodon's shape); its image is never fetched by Tern. */
  const peerEmoji = (shortcode) =>
    new Emoji({
      id: new URL(`/emojis/${shortcode}`, origin),
      name: `:${shortcode}:`,
      icon: new Image({ url: new URL(`/emojis/${shortcode}.png`, origin), mediaType: "image/png" }),
    });

  const keyJwks = new Map();
  for (const name of ACTORS) {
    const rsa = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
    keyJwks.set(name, { privateKey: await exportJwk(rsa.privateKey), publicKey: await exportJwk(rsa.publicKey) });
  }

  const kv = new MemoryKvStore();
  const federation = createFederation({
    ...testFederationOptions(origin),
    kv,
    // Tern verifies both. The main peer signs draft-cavage first, as Mastodon does (Tern then signs to it that way
    // too); the RFC 9421 step starts a second peer with firstKnock "rfc9421" (Fedify's default).
    firstKnock,
    onOutboxError: (error, activity) => errors.push({ where: "outbox", type: activity?.constructor?.name, error: String(error) }),
  });

  /**
   * GoToSocial's check before it answers a signed GET: the signing key's owner, looked up by WebFinger as
   * `acct:<preferredUsername>@<host of the owner's id>`, must come back as that same owner. Unsigned GETs are refused.
   */
  async function keyOwnerFoundByWebFinger(ctx) {
    const check = { path: ctx.url.pathname, keyId: null, owner: null, acct: null, ok: false, why: null };
    keyOwnerChecks.push(check);
    const refuse = (why) => {
      check.why = why;
      return false;
    };
    try {
      const key = await ctx.getSignedKey();
      check.keyId = key?.id?.href ?? null;
      if (!key) return refuse("not signed");
      const owner = await ctx.getSignedKeyOwner();
      check.owner = owner?.id?.href ?? null;
      if (!owner?.id || !owner.preferredUsername) return refuse("no key owner");
      check.acct = `acct:${owner.preferredUsername}@${owner.id.host}`;
      const jrd = await ctx.lookupWebFinger(check.acct);
      const self = jrd?.links?.find((l) => l.rel === "self" && /activity\+json|ld\+json/.test(l.type ?? ""))?.href;
      if (self !== owner.id.href) return refuse(`WebFinger ${check.acct} gave ${self ?? (jrd ? "no self link" : "nothing")}`);
      check.ok = true;
      return true;
    } catch (e) {
      return refuse(String(e?.message ?? e));
    }
  }

  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (!ACTORS.includes(identifier)) return null;
      const keys = await ctx.getActorKeyPairs(identifier);
      const main = identifier === PEER;
      return new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        // A custom emoji in the display name, as Mastodon users have them (Tern shows it in the account's `emojis`).
        name: main ? `Fedify Peer :${PEER_EMOJI}:` : `Fedify ${identifier}`,
        tags: main ? [peerEmoji(PEER_EMOJI)] : [],
        summary: "An independent ActivityPub server (fedify) for Tern's federation tests.",
        url: new URL(`/@${identifier}`, origin),
        inbox: ctx.getInboxUri(identifier),
        endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
        followers: main ? ctx.getFollowersUri(identifier) : null,
        manuallyApprovesFollowers: false,
        discoverable: true,
        publicKey: keys[0].cryptographicKey,
        assertionMethods: keys.map((k) => k.multikey),
      });
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) => {
      const keyJwk = keyJwks.get(identifier);
      if (!keyJwk) return [];
      return [
        {
          privateKey: await importJwk(keyJwk.privateKey, "private"),
          publicKey: await importJwk(keyJwk.publicKey, "public"),
        },
      ];
    })
    .authorize((ctx) => keyOwnerFoundByWebFinger(ctx));

  federation.setFollowersDispatcher("/users/{identifier}/followers", async (_ctx, identifier) => {
    if (identifier !== PEER) return null;
    return { items: [...followers.values()] };
  });

  federation
    .setObjectDispatcher(Note, "/users/{identifier}/notes/{id}", (_ctx, { identifier, id }) => {
      if (!ACTORS.includes(identifier)) return null;
      return notes.get(id) ?? null;
    })
    .authorize((ctx) => keyOwnerFoundByWebFinger(ctx));

  federation
    .setObjectDispatcher(Question, "/users/{identifier}/questions/{id}", (_ctx, { identifier, id }) => {
      if (identifier !== PEER) return null;
      const q = [...questions.values()].find((x) => x.key === id);
      return q ? questionOf(q) : null;
    })
    .authorize((ctx) => keyOwnerFoundByWebFinger(ctx));

  /** The peer's Question a vote counted in, or null when `create` is no (valid) vote. */
  async function countVote(ctx, create) {
    const object = await create.getObject(ctx).catch(() => null);
    const q = object instanceof Note && object.replyTargetId ? questions.get(object.replyTargetId.href) : undefined;
    const voter = create.actorId?.href;
    if (!q || !voter || object.attributionId?.href !== voter) return null;
    const choice = q.options.indexOf(String(object.name ?? ""));
    const mine = q.votes.get(voter) ?? new Set();
    if (choice < 0 || mine.has(choice) || (!q.multiple && mine.size > 0)) return null;
    if (Temporal.Instant.compare(Temporal.Now.instant(), q.endTime) >= 0) return null;
    mine.add(choice);
    q.votes.set(voter, mine);
    q.voters.add(voter);
    q.tallies[choice]++;
    return q;
  }

  /** The Question as it stands: one Note per option with its count (`replies.totalItems`), and the voters' count. */
  function questionOf(q) {
    const options = q.options.map((name, i) => new Note({ name, replies: new Collection({ totalItems: q.tallies[i] }) }));
    return new Question({
      id: new URL(q.id),
      attribution: q.actorUri,
      content: `<p>${q.content}</p>`,
      published: q.published,
      url: new URL(q.id),
      tos: q.to,
      ccs: q.cc,
      endTime: q.endTime,
      voters: q.voters.size + q.otherVoters,
      ...(q.multiple ? { inclusiveOptions: options } : { exclusiveOptions: options }),
    });
  }

  const record = async (_ctx, activity) => {
    const id = activity.id?.href ?? null;
    keep({
      type: activity.constructor.name,
      id,
      actor: activity.actorId?.href ?? null,
      activity,
      raw: (id && rawById.get(id)) ?? (await activity.toJsonLd({ format: "compact" })),
      at: Date.now(),
    });
  };

  federation
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      await record(ctx, follow);
      // The peer's actors are unlocked: every Follow of one is accepted at once, with one Accept id per follower and
      // followee however often they follow (Hollo's shape: a re-follow gets an Accept whose id was seen before).
      const followee = ACTORS.find((a) => follow.objectId?.href === ctx.getActorUri(a).href);
      if (!followee) return;
      const follower = await follow.getActor(ctx);
      if (!follower?.id) return;
      if (followee === PEER) followers.set(follower.id.href, follower);
      const pair = `${follower.id.href} ${followee}`;
      if (!acceptIds.has(pair)) acceptIds.set(pair, new URL(`/users/${followee}/accepts/${randomUUID()}`, origin));
      await ctx.sendActivity({ identifier: followee }, follower, new Accept({ id: acceptIds.get(pair), actor: ctx.getActorUri(followee), object: follow }), {
        immediate: true,
      });
    })
    .on(Undo, async (ctx, undo) => {
      await record(ctx, undo);
      const inner = await undo.getObject(ctx).catch(() => null);
      if (inner instanceof Follow && undo.actorId) followers.delete(undo.actorId.href);
    })
    .on(Create, async (ctx, create) => {
      // A vote on one of the peer's polls: counted once per voter and option (once per voter on a single-choice
      // poll, none after the end) before it is recorded, then the Question goes back to the voter with its counts.
      const q = await countVote(ctx, create);
      await record(ctx, create);
      if (!q) return;
      const actor = await create.getActor(ctx);
      if (actor) await sendQuestionUpdate(q, actor);
    })
    .on(Activity, record)
    .onUnverifiedActivity((_ctx, activity, reason) => {
      unverified.push({ type: activity.constructor.name, id: activity.id?.href ?? null, reason });
    })
    .onError((_ctx, error) => {
      errors.push({ where: "inbox", error: String(error?.stack ?? error) });
    });

  serve(async (req, res) => {
    try {
      const { request, url, headers, body } = await toFetchRequest(req, origin);
      const file = req.method === "GET" ? files.get(url.pathname) : undefined;
      if (file) {
        file.gets++;
        res.writeHead(200, { "content-type": file.type, "content-length": String(file.bytes.length) });
        res.end(file.bytes);
        return;
      }
      let json = null;
      if (req.method === "POST") {
        try {
          json = JSON.parse(body.toString("utf8"));
          if (typeof json?.id === "string") rawById.set(json.id, json);
        } catch {
          /* not JSON: fedify answers it */
        }
      }
      const response = await fedifyFetch(federation, request);
      if (req.method === "POST")
        posts.push({
          path: url.pathname,
          type: json?.type ?? null,
          id: json?.id ?? null,
          status: response.status,
          rfc9421: headers.has("signature-input"),
          signatureInput: headers.get("signature-input"),
        });
      await sendResponse(res, response);
    } catch (e) {
      errors.push({ where: "http", error: String(e?.stack ?? e) });
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(e));
    }
  });

  const queue = startQueue(federation);
  // What the peer itself signed to Tern (another peer's requests pass through this shim too: told apart by key id).
  const restoreFetch = downgradeHttpsFor(new Set(ternHosts), (request, res) => {
    const sig = request.headers.get("signature-input") ?? request.headers.get("signature") ?? "";
    const keyId = /keyid="([^"]+)"/i.exec(sig)?.[1];
    if (!keyId?.startsWith(`${origin}/`)) return;
    sent.push({ method: request.method, url: request.url, rfc9421: request.headers.has("signature-input"), status: res.status });
  });

  const ctx = () => federation.createContext(new URL(origin), undefined);
  const actorUri = ctx().getActorUri(PEER);
  const uriOf = (name) => ctx().getActorUri(name);
  const newId = (kind = "activities") => new URL(`/${kind}/${randomUUID()}`, origin);
  /** The peer's signed GETs (its key, draft-cavage): Tern may run in authorized-fetch mode. */
  const loader = () => ctx().getDocumentLoader({ identifier: PEER });

  const send = async (recipients, activity, opts = {}, as = PEER) => {
    await ctx().sendActivity({ identifier: as }, recipients, activity, { immediate: true, ...opts });
    return activity;
  };

  const sendQuestionUpdate = (q, recipients) =>
    send(
      recipients,
      new Update({ id: newId(), actor: actorUri, object: questionOf(q), tos: q.to, ccs: q.cc }),
      recipients === "followers" ? { preferSharedInbox: true } : {},
    );

  return {
    origin,
    host,
    port,
    questions,
    handle: `${PEER}@${host}`,
    emojiUrl: (shortcode = PEER_EMOJI) => new URL(`/emojis/${shortcode}.png`, origin).href,
    /** Serves `bytes` at `path`; answers its URL and how many times it was fetched (`gets()`). */
    serveFile(path, bytes, type) {
      const entry = { type, bytes, gets: 0 };
      files.set(path, entry);
      return { url: new URL(path, origin).href, gets: () => entry.gets };
    },
    actorUri,
    received,
    unverified,
    posts,
    sent,
    keyOwnerChecks,
    acceptIds,
    errors,
    uriOf,
    handleOf: (name) => `${name}@${host}`,
    /** The spec fedify remembers for `ternOrigin` after its double knock ("rfc9421" / "draft-cavage-http-signatures-12"). */
    rememberedSpec: (ternOrigin) => kv.get(["_fedify", "httpMessageSignaturesSpec", ternOrigin]),
    followers,
    federation,
    ctx,

    /** WebFinger (fedify's own lookup) then the actor document, both fetched by the peer. */
    async lookup(handleOrUri) {
      const c = ctx();
      return c.lookupObject(handleOrUri, { documentLoader: await loader() });
    },

    /**
     * Resolves when an activity matching `pred` has been received (verified): checked now and on every arrival, no
     * polling. `timeoutMs` only bounds a failure; it leaves room for one of Tern's queue retries (10-16 s later).
     */
    waitFor(pred, { timeoutMs = 45_000, what = "activity" } = {}) {
      return waitFor(pred, timeoutMs, () => {
        const seen = received.map((r) => `${r.type} ${r.id}`).join("\n    ") || "(nothing)";
        const bad = unverified.map((u) => `${u.type} ${u.id}: ${JSON.stringify(u.reason)}`).join("\n    ") || "(none)";
        const errs = errors.map((e) => `${e.where}: ${e.error.split("\n")[0]}`).join("\n    ") || "(none)";
        const http = posts.map((p) => `${p.status} ${p.path} ${p.type} ${p.id}`).join("\n    ") || "(none)";
        return `peer did not receive ${what} within ${timeoutMs} ms.\n  received:\n    ${seen}\n  refused (signature):\n    ${bad}\n  errors:\n    ${errs}\n  POSTs to the peer:\n    ${http}`;
      });
    },

    follow(target) {
      return send(target, new Follow({ id: newId(), actor: actorUri, object: target.id }));
    },
    undo(target, activity) {
      return send(target, new Undo({ id: newId(), actor: actorUri, object: activity }));
    },
    like(target, objectUri) {
      return send(target, new Like({ id: newId(), actor: actorUri, object: new URL(objectUri) }));
    },
    /** A public boost of `objectUri` by `as` (one of the peer's actors), delivered to `target`. */
    announce(target, objectUri, { as = PEER } = {}) {
      return send(
        target,
        new Announce({
          id: newId(),
          actor: uriOf(as),
          object: new URL(objectUri),
          published: Temporal.Now.instant(),
          to: PUBLIC_COLLECTION,
          ccs: as === PEER ? [target.id, ctx().getFollowersUri(PEER)] : [target.id],
        }),
        {},
        as,
      );
    },

    /**
     * Publishes a Note (public unless told otherwise), mentioning `mention` (an Actor) if given and the actors in
     * `alsoMentions`, replying to `inReplyTo` if given, `published` now unless told; delivered to `recipients` (an
     * Actor, a list, or "followers").
     */
    async post(recipients, { content, mention, alsoMentions = [], inReplyTo, visibility = "public", emojis = [], published, attachments = [] } = {}) {
      const key = randomUUID();
      const id = ctx().getObjectUri(Note, { identifier: PEER, id: key });
      const followersUri = ctx().getFollowersUri(PEER);
      const tags = emojis.map(peerEmoji); // `emojis`: shortcodes the content uses, each sent as an Emoji tag
      let html = `<p>${content ?? "hello from the peer"}</p>`;
      if (mention) {
        const name = `@${mention.preferredUsername}@${mention.id.host}`;
        tags.push(new Mention({ href: mention.id, name }));
        html = `<p><span class="h-card"><a href="${mention.url?.href ?? mention.id.href}" class="u-url mention">${name}</a></span> ${content ?? ""}</p>`;
      }
      const to = visibility === "public" ? [PUBLIC_COLLECTION] : visibility === "direct" ? (mention ? [mention.id] : []) : [followersUri];
      for (const m of alsoMentions) {
        const name = `@${m.preferredUsername}@${m.id.host}`;
        tags.push(new Mention({ href: m.id, name }));
        html = `${html}<p><span class="h-card"><a href="${m.url?.href ?? m.id.href}" class="u-url mention">${name}</a></span></p>`;
      }
      const mentioned = [...(mention ? [mention.id] : []), ...alsoMentions.map((m) => m.id)];
      const cc = visibility === "public" ? [followersUri, ...mentioned] : visibility === "direct" ? [] : mentioned;
      const note = new Note({
        id,
        attribution: actorUri,
        content: html,
        published: published ?? Temporal.Now.instant(),
        url: id,
        tos: to,
        ccs: cc,
        tags,
        replyTarget: inReplyTo ? new URL(inReplyTo) : undefined,
        // `attachments`: { url, mediaType, name } each, as Mastodon's Document (no blurhash or sizes: Tern measures)
        attachments: attachments.map((a) => new Document({ url: new URL(a.url), mediaType: a.mediaType, name: a.name ?? null })),
      });
      notes.set(key, note);
      const create = new Create({ id: new URL(`${id.href}/activity`), actor: actorUri, object: note, tos: to, ccs: cc, published: note.published });
      await send(recipients, create, recipients === "followers" ? { preferSharedInbox: true } : {});
      return { id: id.href, key, note, create };
    },

    /**
     * Publishes a public Question (a poll) to `recipients`; `tallies` and `otherVoters` stand for votes it already
     * has from elsewhere. Votes that arrive are counted in its state (returned, and in `questions`).
     */
    async postQuestion(recipients, { content = "a poll", options, multiple = false, tallies, otherVoters = 0, expiresInMs = 3_600_000 }) {
      const key = randomUUID();
      const id = new URL(`/users/${PEER}/questions/${key}`, origin).href;
      const q = {
        key,
        id,
        actorUri,
        content,
        options,
        multiple,
        tallies: tallies ? [...tallies] : options.map(() => 0),
        otherVoters,
        voters: new Set(),
        votes: new Map(),
        published: Temporal.Now.instant(),
        endTime: Temporal.Now.instant().add({ milliseconds: expiresInMs }),
        to: [PUBLIC_COLLECTION],
        cc: [ctx().getFollowersUri(PEER)],
      };
      questions.set(id, q);
      const create = new Create({ id: new URL(`${id}/activity`), actor: actorUri, object: questionOf(q), tos: q.to, ccs: q.cc, published: q.published });
      await send(recipients, create, recipients === "followers" ? { preferSharedInbox: true } : {});
      return q;
    },

    /** Counts `n` votes for `option` from other servers and sends the Question's new counts to `recipients`. */
    countElsewhere(recipients, q, option, n = 1) {
      q.tallies[q.options.indexOf(option)] += n;
      q.otherVoters += n;
      return sendQuestionUpdate(q, recipients);
    },

    /** Votes on someone's poll as Mastodon does: a Create{Note} whose `name` is the option, to the poll's author. */
    vote(author, questionUri, option) {
      const id = new URL(`${actorUri.href}#votes/${randomUUID()}`);
      const note = new Note({ id, attribution: actorUri, name: option, replyTarget: new URL(questionUri), tos: [author.id] });
      return send(author, new Create({ id: new URL(`${id.href}/activity`), actor: actorUri, object: note, tos: [author.id] }));
    },

    async edit(recipients, posted, content) {
      const note = posted.note.clone({ content: `<p>${content}</p>`, updated: Temporal.Now.instant() });
      notes.set(posted.key, note);
      posted.note = note;
      const update = new Update({ id: newId(), actor: actorUri, object: note, tos: note.toIds, ccs: note.ccIds });
      await send(recipients, update, recipients === "followers" ? { preferSharedInbox: true } : {});
      return update;
    },

    async remove(recipients, posted) {
      notes.delete(posted.key);
      const del = new Delete({
        id: newId(),
        actor: actorUri,
        object: new Tombstone({ id: new URL(posted.id) }),
        tos: [PUBLIC_COLLECTION],
      });
      await send(recipients, del, recipients === "followers" ? { preferSharedInbox: true } : {});
      return del;
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
