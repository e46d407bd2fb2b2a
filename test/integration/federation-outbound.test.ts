// What local actions send to other servers: the activity JSON of each kind and the inboxes it is addressed to.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, makeUser } from "./helpers";
import { PUBLIC, addFollow, remoteAccount, remoteStatus, take } from "./federation-outbound-fixtures";
import { queued } from "./queues";

const actorOf = (username: string) => `${ORIGIN}/users/${username}`;

async function withRemoteFollowers() {
  const u = await makeUser();
  const a1 = await remoteAccount("ann", "a.example");
  const a2 = await remoteAccount("abe", "a.example");
  const b1 = await remoteAccount("bea", "b.example", { shared: false });
  for (const r of [a1, a2, b1]) await addFollow(r.id, u.id);
  return { u, a1, a2, b1 };
}

describe("statuses", () => {
  it("delivers a public post once per shared inbox, as Create(Note) addressed to Public and followers", async () => {
    const { u, b1 } = await withRemoteFollowers();
    const res = await u.api.post("/api/v1/statuses", { status: "hello #fediverse", language: "en" });
    expect(res.status).toBe(200);
    const [create, ...rest] = await take();
    expect(rest).toEqual([]);
    expect(create.inboxes).toEqual(["https://a.example/inbox", b1.inbox].sort());
    const note = create.activity.object;
    expect(create.activity).toMatchObject({
      type: "Create",
      id: `${note.id}/activity`,
      actor: actorOf(u.username),
      to: [PUBLIC],
      cc: [`${actorOf(u.username)}/followers`],
    });
    expect(note).toMatchObject({
      type: "Note",
      id: `${actorOf(u.username)}/statuses/${res.body.id}`,
      url: res.body.url,
      attributedTo: actorOf(u.username),
      to: [PUBLIC],
      cc: [`${actorOf(u.username)}/followers`],
      inReplyTo: null,
      sensitive: false,
      content: res.body.content,
      contentMap: { en: res.body.content },
      published: res.body.created_at,
    });
    expect(note.tag).toEqual([{ type: "Hashtag", href: `${ORIGIN}/tags/fediverse`, name: "#fediverse" }]);
    expect(create.activity["@context"][0]).toBe("https://www.w3.org/ns/activitystreams");
  });

  it("addresses followers-only posts to the followers collection, on the same hosts", async () => {
    const { u, b1 } = await withRemoteFollowers();
    await u.api.post("/api/v1/statuses", { status: "just friends", visibility: "private" });
    const [create] = await take("Create");
    expect(create.inboxes).toEqual(["https://a.example/inbox", b1.inbox].sort());
    expect(create.activity.to).toEqual([`${actorOf(u.username)}/followers`]);
    expect(create.activity.cc).toEqual([]);
    expect(create.activity.object.to).toEqual([`${actorOf(u.username)}/followers`]);
  });

  it("puts Public in cc for unlisted posts", async () => {
    const { u } = await withRemoteFollowers();
    await u.api.post("/api/v1/statuses", { status: "quiet", visibility: "unlisted" });
    const [create] = await take("Create");
    expect(create.activity.to).toEqual([`${actorOf(u.username)}/followers`]);
    expect(create.activity.cc).toEqual([PUBLIC]);
  });

  it("sends a direct post only to the mentioned remote account, addressed to it alone", async () => {
    const { u } = await withRemoteFollowers();
    const carol = await remoteAccount("carol", "c.example", { shared: false });
    const res = await u.api.post("/api/v1/statuses", { status: "@carol@c.example psst", visibility: "direct" });
    expect(res.status).toBe(200);
    const [create] = await take("Create");
    expect(create.inboxes).toEqual([carol.inbox]);
    expect(create.activity.to).toEqual([carol.uri]);
    expect(create.activity.cc).toEqual([]);
    expect(create.activity.object.tag).toContainEqual({ type: "Mention", href: carol.uri, name: "@carol@c.example" });
  });

  it("adds mentioned remote accounts and the replied-to remote author to a public post's inboxes", async () => {
    const { u } = await withRemoteFollowers();
    const carol = await remoteAccount("carol", "c.example");
    const dave = await remoteAccount("dave", "d.example");
    const parent = await remoteStatus(dave);
    const res = await u.api.post("/api/v1/statuses", { status: "@carol@c.example see this", in_reply_to_id: parent.id });
    expect(res.status).toBe(200);
    const [create] = await take("Create");
    expect(create.inboxes).toEqual(expect.arrayContaining(["https://a.example/inbox", carol.sharedInbox, dave.sharedInbox]));
    expect(create.activity.object.inReplyTo).toBe(parent.uri);
    expect(create.activity.cc).toContain(carol.uri);
  });

  it("stores and sends nothing when no remote account is involved", async () => {
    const u = await makeUser();
    const local = await makeUser();
    await local.api.post(`/api/v1/accounts/${u.id}/follow`);
    await u.api.post("/api/v1/statuses", { status: "only locals here" });
    expect(await take()).toEqual([]);
    expect(queued.deliveries).toEqual([]);
  });

  it("sends Update with the edited Note, and Delete with a Tombstone to followers and mentioned accounts", async () => {
    const { u } = await withRemoteFollowers();
    const carol = await remoteAccount("carol", "c.example");
    const res = await u.api.post("/api/v1/statuses", { status: "first @carol@c.example" });
    await take();
    expect((await u.api.put(`/api/v1/statuses/${res.body.id}`, { status: "second @carol@c.example" })).status).toBe(200);
    const [update] = await take("Update");
    expect(update.activity.object).toMatchObject({ id: `${actorOf(u.username)}/statuses/${res.body.id}`, type: "Note" });
    expect(update.activity.object.content).toContain("second");
    expect(update.activity.object.updated).toMatch(/^\d{4}-/);
    expect(update.activity.id).toContain("#updates/");
    expect(update.inboxes).toEqual(expect.arrayContaining(["https://a.example/inbox", carol.sharedInbox]));

    expect((await u.api.delete(`/api/v1/statuses/${res.body.id}`)).status).toBe(200);
    const [del] = await take("Delete");
    const uri = `${actorOf(u.username)}/statuses/${res.body.id}`;
    expect(del.activity).toMatchObject({
      type: "Delete",
      id: `${uri}#delete`,
      actor: actorOf(u.username),
      object: { id: uri, type: "Tombstone", atomUri: uri },
      to: [PUBLIC],
    });
    expect(del.activity.cc).toEqual([`${actorOf(u.username)}/followers`, carol.uri]);
    expect(del.inboxes).toEqual(expect.arrayContaining(["https://a.example/inbox", carol.sharedInbox]));
  });

  it("a Delete also reaches the servers of remote accounts that boosted, favourited or replied to the status", async () => {
    const u = await makeUser();
    const booster = await remoteAccount("booster", "boost.example");
    const faver = await remoteAccount("faver", "fave.example", { shared: false });
    const replier = await remoteAccount("replier", "reply.example");
    const res = await u.api.post("/api/v1/statuses", { status: "widely seen" });
    await take();
    const p = res.body.id.padStart(20, "0");
    const now = Date.now();
    await env.DB.prepare(
      "INSERT INTO statuses (id, uri, account_id, local, visibility, reblog_of_id, created_at, updated_at) VALUES (?1, ?2, ?3, 0, 'public', ?4, ?5, ?5)",
    )
      .bind("00000000000000009001", `${booster.uri}/statuses/9001/activity`, booster.id.padStart(20, "0"), p, now)
      .run();
    await env.DB.prepare(
      "INSERT INTO statuses (id, uri, account_id, local, visibility, in_reply_to_id, created_at, updated_at) VALUES (?1, ?2, ?3, 0, 'public', ?4, ?5, ?5)",
    )
      .bind("00000000000000009002", `${replier.uri}/statuses/9002`, replier.id.padStart(20, "0"), p, now)
      .run();
    await env.DB.prepare("INSERT INTO favourites (id, account_id, status_id, created_at) VALUES ('00000000000000009003', ?1, ?2, ?3)")
      .bind(faver.id.padStart(20, "0"), p, now)
      .run();
    expect((await u.api.delete(`/api/v1/statuses/${res.body.id}`)).status).toBe(200);
    const [del] = await take("Delete");
    expect(del?.inboxes).toEqual([booster.sharedInbox, faver.inbox, replier.sharedInbox].sort());
  });

  it("skips hosts under a suspending domain block and unavailable hosts", async () => {
    const { u, b1 } = await withRemoteFollowers();
    await remoteAccount("x", "c.example").then((c) => addFollow(c.id, u.id));
    await env.DB.prepare("INSERT INTO domain_blocks (id, domain, severity, created_at) VALUES ('00000000000000000001', 'a.example', 'suspend', 0)").run();
    await env.DB.prepare("INSERT INTO unavailable_domains (domain, created_at) VALUES ('c.example', 0)").run();
    await u.api.post("/api/v1/statuses", { status: "who hears this" });
    const [create] = await take("Create");
    expect(create.inboxes).toEqual([b1.inbox]);
  });
});

describe("interactions", () => {
  it("announces a boost of a remote status to followers and its author, and undoes it", async () => {
    const { u } = await withRemoteFollowers();
    const dave = await remoteAccount("dave", "d.example");
    const s = await remoteStatus(dave);
    const res = await u.api.post(`/api/v1/statuses/${s.id}/reblog`);
    expect(res.status).toBe(200);
    const [ann] = await take("Announce");
    const reblogUri = `${actorOf(u.username)}/statuses/${res.body.id}/activity`;
    expect(ann.activity).toMatchObject({
      type: "Announce",
      id: reblogUri,
      actor: actorOf(u.username),
      object: s.uri,
      to: [PUBLIC],
      cc: [dave.uri, `${actorOf(u.username)}/followers`],
    });
    expect(ann.inboxes).toEqual(["https://a.example/inbox", "https://b.example/users/bea/inbox", dave.sharedInbox].sort());

    expect((await u.api.post(`/api/v1/statuses/${s.id}/unreblog`)).status).toBe(200);
    const [undo] = await take("Undo");
    expect(undo.activity).toMatchObject({
      type: "Undo",
      id: `${reblogUri}/undo`,
      actor: actorOf(u.username),
      object: { type: "Announce", id: reblogUri, object: s.uri },
    });
    expect(undo.inboxes).toContain(dave.sharedInbox);
  });

  it("keeps a boost of one's own followers-only post away from Public", async () => {
    const { u } = await withRemoteFollowers();
    const s = await u.api.post("/api/v1/statuses", { status: "mine", visibility: "private" });
    await take();
    expect((await u.api.post(`/api/v1/statuses/${s.body.id}/reblog`)).status).toBe(200);
    const [ann] = await take("Announce");
    expect(ann.activity.to).toEqual([`${actorOf(u.username)}/followers`]);
    expect(JSON.stringify(ann.activity)).not.toContain(PUBLIC);
  });

  it("likes a remote status at its author's own inbox, stores the Like id, and undoes it", async () => {
    const u = await makeUser();
    const dave = await remoteAccount("dave", "d.example");
    const s = await remoteStatus(dave);
    expect((await u.api.post(`/api/v1/statuses/${s.id}/favourite`)).status).toBe(200);
    const [like] = await take("Like");
    expect(like.inboxes).toEqual([dave.inbox]);
    expect(like.activity).toMatchObject({ type: "Like", actor: actorOf(u.username), object: s.uri });
    expect(like.activity.id).toMatch(new RegExp(`^${actorOf(u.username)}#likes/\\d+$`));
    const fav = await env.DB.prepare("SELECT uri FROM favourites WHERE status_id = ?").bind(s.id.padStart(20, "0")).first<{ uri: string }>();
    expect(fav?.uri).toBe(like.activity.id);

    expect((await u.api.post(`/api/v1/statuses/${s.id}/unfavourite`)).status).toBe(200);
    const [undo] = await take("Undo");
    expect(undo.inboxes).toEqual([dave.inbox]);
    expect(undo.activity).toMatchObject({ actor: actorOf(u.username), object: { type: "Like", id: like.activity.id, object: s.uri } });
  });

  it("federates nothing for favourites of local statuses", async () => {
    const u = await makeUser();
    const other = await makeUser();
    const s = await other.api.post("/api/v1/statuses", { status: "local" });
    await take();
    await u.api.post(`/api/v1/statuses/${s.body.id}/favourite`);
    expect(queued.jobs.filter((j) => j.type === "federate")).toEqual([]);
    expect(await take()).toEqual([]);
  });

  it("sends Add and Remove for pins to the featured collection", async () => {
    const { u } = await withRemoteFollowers();
    const s = await u.api.post("/api/v1/statuses", { status: "pin me" });
    await take();
    await u.api.post(`/api/v1/statuses/${s.body.id}/pin`);
    const [add] = await take("Add");
    const uri = `${actorOf(u.username)}/statuses/${s.body.id}`;
    expect(add.activity).toMatchObject({ type: "Add", actor: actorOf(u.username), object: uri, target: `${actorOf(u.username)}/collections/featured` });
    expect(add.inboxes).toContain("https://a.example/inbox");
    await u.api.post(`/api/v1/statuses/${s.body.id}/unpin`);
    const [remove] = await take("Remove");
    expect(remove.activity).toMatchObject({ type: "Remove", object: uri, target: `${actorOf(u.username)}/collections/featured` });
  });
});

describe("relationships", () => {
  it("a follow's answer shows it made, with its options, unless the target is locked or the follower silenced (Mastodon's AccountsController#follow)", async () => {
    const u = await makeUser();
    const open = await remoteAccount("openly", "remote.example");
    const res = await u.api.post(`/api/v1/accounts/${open.id}/follow`, { reblogs: false, notify: true, languages: ["de"] });
    expect(res.body).toMatchObject({ following: true, requested: false, showing_reblogs: false, notifying: true, languages: ["de"] });
    // Asked again before the Accept: the same answer.
    expect((await u.api.post(`/api/v1/accounts/${open.id}/follow`)).body).toMatchObject({ following: true, requested: false });

    const shut = await remoteAccount("shut", "remote.example");
    await env.DB.prepare("UPDATE accounts SET locked = 1 WHERE id = ?").bind(shut.id.padStart(20, "0")).run();
    expect((await u.api.post(`/api/v1/accounts/${shut.id}/follow`)).body).toMatchObject({ following: false, requested: true });

    const quiet = await makeUser();
    await env.DB.prepare("UPDATE accounts SET silenced_at = ? WHERE id = ?").bind(Date.now(), quiet.id.padStart(20, "0")).run();
    const local = await makeUser();
    // A silenced account's follow is a request, even of an unlocked local account, and is answered as one.
    expect((await quiet.api.post(`/api/v1/accounts/${open.id}/follow`)).body).toMatchObject({ following: false, requested: true });
    expect((await quiet.api.post(`/api/v1/accounts/${local.id}/follow`)).body).toMatchObject({ following: false, requested: true });
  });

  it("follows a remote account through a pending request with a Follow, and undoes it with the same id", async () => {
    const u = await makeUser();
    const bob = await remoteAccount("bob", "remote.example");
    const res = await u.api.post(`/api/v1/accounts/${bob.id}/follow`);
    expect(res.status).toBe(200);
    // The answer shows the follow as made (bob is not locked), as Mastodon's; it is stored as a request until the Accept.
    expect(res.body).toMatchObject({ following: true, requested: false });
    expect((await u.api.get(`/api/v1/accounts/relationships?id[]=${bob.id}`)).body[0]).toMatchObject({ following: false, requested: true });
    const row = await env.DB.prepare("SELECT uri FROM follow_requests WHERE target_account_id = ?").bind(bob.id.padStart(20, "0")).first<{ uri: string }>();
    expect(row?.uri).toMatch(new RegExp(`^${ORIGIN}/[0-9a-f-]{36}$`));
    const [follow] = await take("Follow");
    expect(follow.inboxes).toEqual([bob.inbox]);
    expect(follow.activity).toEqual({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: row!.uri,
      type: "Follow",
      actor: actorOf(u.username),
      object: bob.uri,
    });

    // A second follow while the request is pending sends nothing new.
    await u.api.post(`/api/v1/accounts/${bob.id}/follow`);
    expect(await take("Follow")).toEqual([]);

    expect((await u.api.post(`/api/v1/accounts/${bob.id}/unfollow`)).status).toBe(200);
    const [undo] = await take("Undo");
    expect(undo.inboxes).toEqual([bob.inbox]);
    expect(undo.activity).toMatchObject({ type: "Undo", actor: actorOf(u.username), object: { type: "Follow", id: row!.uri, object: bob.uri } });
  });

  it("accepts and rejects a remote follower's request with the original Follow as object", async () => {
    const u = await makeUser(undefined, { locked: true });
    const bob = await remoteAccount("bob", "remote.example");
    const eve = await remoteAccount("eve", "evil.example");
    for (const [r, n] of [
      [bob, 1],
      [eve, 2],
    ] as const) {
      await env.DB.prepare("INSERT INTO follow_requests (id, account_id, target_account_id, uri, created_at) VALUES (?1, ?2, ?3, ?4, 0)")
        .bind(String(1000 + n).padStart(20, "0"), r.id.padStart(20, "0"), u.id.padStart(20, "0"), `${r.uri}#follows/${n}`)
        .run();
    }
    expect((await u.api.post(`/api/v1/follow_requests/${bob.id}/authorize`)).body.followed_by).toBe(true);
    const [accept] = await take("Accept");
    expect(accept.inboxes).toEqual([bob.inbox]);
    expect(accept.activity).toMatchObject({
      type: "Accept",
      actor: actorOf(u.username),
      object: { id: `${bob.uri}#follows/1`, type: "Follow", actor: bob.uri, object: actorOf(u.username) },
    });
    const stored = await env.DB.prepare("SELECT uri FROM follows WHERE account_id = ?").bind(bob.id.padStart(20, "0")).first<{ uri: string }>();
    expect(stored?.uri).toBe(`${bob.uri}#follows/1`);

    await u.api.post(`/api/v1/follow_requests/${eve.id}/reject`);
    const [reject] = await take("Reject");
    expect(reject.inboxes).toEqual([eve.inbox]);
    expect(reject.activity).toMatchObject({ type: "Reject", object: { id: `${eve.uri}#follows/2`, type: "Follow", actor: eve.uri } });

    // Removing a remote follower rejects its Follow too (Mastodon's RemoveFromFollowersService).
    await u.api.post(`/api/v1/accounts/${bob.id}/remove_from_followers`);
    const [removed] = await take("Reject");
    expect(removed.activity.object).toMatchObject({ id: `${bob.uri}#follows/1`, actor: bob.uri });
  });

  it("accepts pending remote requests when the account is unlocked", async () => {
    const u = await makeUser(undefined, { locked: true });
    const bob = await remoteAccount("bob", "remote.example", { shared: false });
    const local = await makeUser();
    await local.api.post(`/api/v1/accounts/${u.id}/follow`);
    await env.DB.prepare("INSERT INTO follow_requests (id, account_id, target_account_id, uri, created_at) VALUES ('00000000000000009999', ?1, ?2, ?3, 0)")
      .bind(bob.id.padStart(20, "0"), u.id.padStart(20, "0"), `${bob.uri}#follows/9`)
      .run();
    await take();
    expect((await u.api.patch("/api/v1/accounts/update_credentials", { locked: false })).status).toBe(200);
    const accepts = await take("Accept");
    expect(accepts).toHaveLength(1);
    expect(accepts[0].inboxes).toEqual([bob.inbox]);
    expect(accepts[0].activity.object).toMatchObject({ id: `${bob.uri}#follows/9`, actor: bob.uri, object: actorOf(u.username) });
  });

  it("blocks and unblocks a remote account with Block and Undo(Block)", async () => {
    const u = await makeUser();
    const bob = await remoteAccount("bob", "remote.example");
    await u.api.post(`/api/v1/accounts/${bob.id}/block`);
    const [block] = await take("Block");
    expect(block.inboxes).toEqual([bob.inbox]);
    expect(block.activity).toMatchObject({ type: "Block", actor: actorOf(u.username), object: bob.uri });
    expect(block.activity.id).toMatch(new RegExp(`^${ORIGIN}/[0-9a-f-]{36}$`));
    await u.api.post(`/api/v1/accounts/${bob.id}/unblock`);
    const [undo] = await take("Undo");
    expect(undo.activity).toMatchObject({ type: "Undo", object: { type: "Block", id: block.activity.id, object: bob.uri } });
  });
});

describe("account-level", () => {
  it("sends Update(Person) to followers after a profile change", async () => {
    const { u } = await withRemoteFollowers();
    expect((await u.api.patch("/api/v1/accounts/update_credentials", { display_name: "New Name", note: "hi" })).status).toBe(200);
    const [update] = await take("Update");
    expect(update.inboxes).toEqual(["https://a.example/inbox", "https://b.example/users/bea/inbox"]);
    expect(update.activity).toMatchObject({ type: "Update", actor: actorOf(u.username), to: [PUBLIC] });
    expect(update.activity.object).toMatchObject({ id: actorOf(u.username), type: "Person", name: "New Name", preferredUsername: u.username });
    expect(update.activity.object.publicKey.publicKeyPem).toContain("BEGIN PUBLIC KEY");
  });

  it("forwards a report as a Flag from the instance actor only when asked", async () => {
    const u = await makeUser();
    const bob = await remoteAccount("bob", "remote.example");
    const s = await remoteStatus(bob);
    expect((await u.api.post("/api/v1/reports", { account_id: bob.id, status_ids: [s.id], comment: "spam", forward: false })).status).toBe(200);
    expect(await take()).toEqual([]);
    const res = await u.api.post("/api/v1/reports", { account_id: bob.id, status_ids: [s.id], comment: "spam!", forward: true });
    expect(res.body.forwarded).toBe(true);
    const [flag] = await take("Flag");
    const inst = await env.DB.prepare("SELECT id, uri FROM accounts WHERE username = 'instance.actor' AND domain IS NULL").first<{ id: string; uri: string }>();
    expect(flag.accountId).toBe(inst!.id.replace(/^0+/, ""));
    expect(flag.inboxes).toEqual([bob.sharedInbox]);
    expect(flag.activity).toMatchObject({ type: "Flag", actor: `${ORIGIN}/actor`, content: "spam!", object: [bob.uri, s.uri] });
    const report = await env.DB.prepare("SELECT uri FROM reports WHERE id = ?").bind(res.body.id.padStart(20, "0")).first<{ uri: string }>();
    expect(report?.uri).toBe(flag.activity.id);
  });

  it("deletes an actor at its followers' and followings' inboxes", async () => {
    const { u } = await withRemoteFollowers();
    const bob = await remoteAccount("bob", "remote.example");
    await addFollow(u.id, bob.id);
    queued.jobs.push({ type: "federate", origin: ORIGIN, action: { kind: "delete_actor", accountId: u.id } });
    const [del] = await take("Delete");
    expect(del.activity).toMatchObject({
      type: "Delete",
      id: `${actorOf(u.username)}#delete`,
      actor: actorOf(u.username),
      object: actorOf(u.username),
      to: [PUBLIC],
    });
    expect(del.inboxes).toEqual(["https://a.example/inbox", "https://b.example/users/bea/inbox", bob.sharedInbox!].sort());
  });
});
