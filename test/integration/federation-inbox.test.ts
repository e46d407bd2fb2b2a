// Inbound activities end to end: signed POSTs from a fake remote server to our inboxes, processed by the JOBS
// consumer, observed through the REST API as a local user would see them.
import { beforeAll, describe, expect, it } from "vitest";
import { anon, makeUser, ORIGIN } from "./helpers";
import {
  AS_PUBLIC,
  create,
  deliver,
  installFetchMock,
  newId,
  note,
  pad,
  postInbox,
  remoteActor,
  runJobs,
  sql,
  type RemoteActor,
} from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

const localUri = (username: string) => `${ORIGIN}/users/${username}`;

async function remoteAccountId(a: RemoteActor): Promise<string> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", a.uri);
  return String(BigInt(row.id));
}

describe("Follow / Accept / Reject / Undo", () => {
  it("follow of an unlocked user: follower row, notification, Accept enqueued; repeat re-accepts; Undo removes", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const follow = { id: newId(bob, "follows"), type: "Follow", actor: bob.uri, object: localUri("alice") };
    const r = await deliver(bob, follow, "/users/alice/inbox");
    expect(r.status).toBe(202);
    expect(r.jobs.some((j) => j.type === "federate" && j.action.kind === "accept_follow" && j.action.followUri === follow.id)).toBe(true);
    const followers = await alice.api.get(`/api/v1/accounts/${alice.id}/followers`);
    expect(followers.body.map((a: any) => a.acct)).toEqual(["bob@remote.example"]);
    const notes = await alice.api.get("/api/v1/notifications");
    expect(notes.body.map((n: any) => n.type)).toEqual(["follow"]);
    expect((await alice.api.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(1);

    // The same Follow again (new id): no second row, Accept re-sent.
    const again = { ...follow, id: newId(bob, "follows") };
    const r2 = await deliver(bob, again);
    expect(r2.jobs.some((j) => j.type === "federate" && j.action.kind === "accept_follow" && j.action.followUri === again.id)).toBe(true);
    expect((await alice.api.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(1);

    await deliver(bob, { id: newId(bob), type: "Undo", actor: bob.uri, object: again });
    expect((await alice.api.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(0);
    expect((await alice.api.get("/api/v1/notifications")).body).toEqual([]);
  });

  it("follow of a locked user is a request; authorizing it makes a follower", async () => {
    const carol = await makeUser("carol", { locked: true });
    const bob = await remoteActor("bob");
    await deliver(bob, { id: newId(bob, "follows"), type: "Follow", actor: bob.uri, object: localUri("carol") });
    const reqs = await carol.api.get("/api/v1/follow_requests");
    expect(reqs.body.map((a: any) => a.acct)).toEqual(["bob@remote.example"]);
    expect((await carol.api.get("/api/v1/notifications")).body.map((n: any) => n.type)).toEqual(["follow_request"]);
    expect((await carol.api.get(`/api/v1/accounts/${carol.id}`)).body.followers_count).toBe(0);
    const id = await remoteAccountId(bob);
    const ok = await carol.api.post(`/api/v1/follow_requests/${id}/authorize`);
    expect(ok.status).toBe(200);
    expect((await carol.api.get(`/api/v1/accounts/${carol.id}`)).body.followers_count).toBe(1);
  });

  it("follow from an account the target blocks is rejected", async () => {
    const dave = await makeUser("dave");
    const bob = await remoteActor("bob");
    // bob becomes known through a first, harmless activity
    await deliver(bob, { id: newId(bob), type: "Like", actor: bob.uri, object: `${ORIGIN}/users/dave/statuses/1` });
    await dave.api.post(`/api/v1/accounts/${await remoteAccountId(bob)}/block`);
    await runJobs();
    const r = await deliver(bob, { id: newId(bob, "follows"), type: "Follow", actor: bob.uri, object: localUri("dave") });
    expect(r.jobs.some((j) => j.type === "federate" && j.action.kind === "reject_follow")).toBe(true);
    expect((await dave.api.get(`/api/v1/accounts/${dave.id}`)).body.followers_count).toBe(0);
  });

  it("C23: our request is accepted only by its followee", async () => {
    const erin = await makeUser("erin");
    const bob = await remoteActor("bob", "remote.example", { locked: true });
    const mallory = await remoteActor("mallory", "evil.example");
    await deliver(bob, { id: newId(bob), type: "Like", actor: bob.uri, object: `${ORIGIN}/users/erin/statuses/1` });
    await deliver(mallory, { id: newId(mallory), type: "Like", actor: mallory.uri, object: `${ORIGIN}/users/erin/statuses/1` });
    const bobId = await remoteAccountId(bob);
    const followUri = `${ORIGIN}/f-${Date.now()}`;
    await sql(
      "INSERT INTO follow_requests (id, account_id, target_account_id, show_reblogs, notify, uri, created_at) VALUES (?, ?, ?, 1, 0, ?, ?)",
      pad("777"),
      pad(erin.id),
      pad(bobId),
      followUri,
      Date.now(),
    );
    const embedded = { id: followUri, type: "Follow", actor: localUri("erin"), object: bob.uri };
    // mallory "accepts" erin's follow of bob: by id, and embedded
    await deliver(mallory, { id: newId(mallory), type: "Accept", actor: mallory.uri, object: followUri });
    await deliver(mallory, { id: newId(mallory), type: "Accept", actor: mallory.uri, object: embedded });
    let rel = await erin.api.get(`/api/v1/accounts/relationships?id[]=${bobId}`);
    expect(rel.body[0]).toMatchObject({ following: false, requested: true });
    // bob accepts: now erin follows bob, and a merge job ran
    const r = await deliver(bob, { id: newId(bob), type: "Accept", actor: bob.uri, object: embedded });
    expect(r.jobs.some((j) => j.type === "merge_feed")).toBe(true);
    rel = await erin.api.get(`/api/v1/accounts/relationships?id[]=${bobId}`);
    expect(rel.body[0]).toMatchObject({ following: true, requested: false });
    // bob later rejects (removes erin as follower)
    await deliver(bob, { id: newId(bob), type: "Reject", actor: bob.uri, object: followUri });
    rel = await erin.api.get(`/api/v1/accounts/relationships?id[]=${bobId}`);
    expect(rel.body[0]).toMatchObject({ following: false, requested: false });
  });

  it("Block by a remote account ends follows both ways", async () => {
    const fay = await makeUser("fay");
    const bob = await remoteActor("bob");
    await deliver(bob, { id: newId(bob, "follows"), type: "Follow", actor: bob.uri, object: localUri("fay") });
    expect((await fay.api.get(`/api/v1/accounts/${fay.id}`)).body.followers_count).toBe(1);
    await deliver(bob, { id: newId(bob), type: "Block", actor: bob.uri, object: localUri("fay") });
    expect((await fay.api.get(`/api/v1/accounts/${fay.id}`)).body.followers_count).toBe(0);
    const rel = await fay.api.get(`/api/v1/accounts/relationships?id[]=${await remoteAccountId(bob)}`);
    expect(rel.body[0].blocked_by).toBe(true);
  });
});

describe("Create", () => {
  it("a public note reaches local followers' home timelines and the public timeline", async () => {
    const gus = await makeUser("gus");
    const bob = await remoteActor("bob");
    await deliver(bob, { id: newId(bob), type: "Like", actor: bob.uri, object: `${ORIGIN}/x` });
    const bobId = await remoteAccountId(bob);
    await gus.api.post(`/api/v1/accounts/${bobId}/follow`);
    await sql("DELETE FROM follow_requests");
    await sql(
      "INSERT OR IGNORE INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, 0, ?)",
      pad("991"),
      pad(gus.id),
      pad(bobId),
      Date.now(),
    );
    await runJobs();
    const n = note(bob, {
      content: '<p>hi <script>alert(1)</script><a href="https://x.example/tags/tern" class="mention hashtag" rel="tag">#<span>Tern</span></a></p>',
      tag: [{ type: "Hashtag", name: "#Tern", href: "https://x.example/tags/tern" }],
      contentMap: { en: "ignored" },
      attachment: [
        {
          type: "Document",
          mediaType: "image/png",
          url: "https://remote.example/m/1.png",
          name: "a cat",
          blurhash: "LEHV6nWB2yk8",
          width: 640,
          height: 480,
          focalPoint: [0.5, -0.25],
        },
      ],
    });
    const r = await deliver(bob, create(bob, n));
    expect(r.status).toBe(202);
    const home = await gus.api.get("/api/v1/timelines/home");
    expect(home.body.map((s: any) => s.uri)).toEqual([n.id]);
    const s = home.body[0];
    expect(s.content).not.toContain("script");
    expect(s.account.acct).toBe("bob@remote.example");
    expect(s.visibility).toBe("public");
    expect(s.tags.map((t: any) => t.name)).toEqual(["tern"]);
    expect(s.media_attachments[0]).toMatchObject({
      type: "image",
      remote_url: "https://remote.example/m/1.png",
      description: "a cat",
      blurhash: "LEHV6nWB2yk8",
    });
    expect(s.media_attachments[0].meta.focus).toEqual({ x: 0.5, y: -0.25 });
    const pub = await anon.get("/api/v1/timelines/public");
    expect(pub.body.map((x: any) => x.uri)).toContain(n.id);
    // The same Create again changes nothing.
    await deliver(bob, create(bob, n));
    expect((await sql("SELECT count(*) AS n FROM statuses WHERE uri = ?", n.id))[0].n).toBe(1);
  });

  it("private and direct notes are visible only to their audience; a reply with a mention notifies", async () => {
    const hal = await makeUser("hal");
    const ivy = await makeUser("ivy");
    const bob = await remoteActor("bob");
    const direct = note(bob, {
      content: `<p><span class="h-card"><a href="${ORIGIN}/@hal" class="u-url mention">@<span>hal</span></a></span> secret</p>`,
      to: [localUri("hal")],
      cc: [],
      tag: [{ type: "Mention", href: localUri("hal"), name: `@hal@tern.test` }],
    });
    await deliver(bob, create(bob, direct));
    const [row] = await sql("SELECT id, visibility FROM statuses WHERE uri = ?", direct.id);
    expect(row.visibility).toBe("direct");
    const id = String(BigInt(row.id));
    expect((await hal.api.get(`/api/v1/statuses/${id}`)).status).toBe(200);
    expect((await ivy.api.get(`/api/v1/statuses/${id}`)).status).toBe(404);
    expect((await anon.get(`/api/v1/statuses/${id}`)).status).toBe(404);
    // A direct mention from a stranger is held back by the default policy (for_private_mentions: filter).
    const notes = await hal.api.get("/api/v1/notifications?include_filtered=true");
    expect(notes.body.map((n: any) => [n.type, n.status?.id])).toEqual([["mention", id]]);

    const priv = note(bob, { to: [bob.followers], cc: [localUri("ivy")] });
    await deliver(bob, create(bob, priv));
    const [p] = await sql("SELECT id, visibility FROM statuses WHERE uri = ?", priv.id);
    expect(p.visibility).toBe("private");
    const pid = String(BigInt(p.id));
    expect((await ivy.api.get(`/api/v1/statuses/${pid}`)).status).toBe(200); // silently addressed
    expect((await hal.api.get(`/api/v1/statuses/${pid}`)).status).toBe(404);
    expect((await ivy.api.get("/api/v1/notifications")).body).toEqual([]); // silent: no notification

    // A reply to hal's post, mentioning hal.
    const mine = await hal.api.post("/api/v1/statuses", { status: "hello fediverse" });
    const reply = note(bob, {
      inReplyTo: mine.body.uri,
      cc: [bob.followers, localUri("hal")],
      tag: [{ type: "Mention", href: localUri("hal"), name: "@hal" }],
    });
    await deliver(bob, create(bob, reply));
    const ctx = await hal.api.get(`/api/v1/statuses/${mine.body.id}/context`);
    expect(ctx.body.descendants.map((s: any) => s.uri)).toEqual([reply.id]);
    expect((await hal.api.get(`/api/v1/statuses/${mine.body.id}`)).body.replies_count).toBe(1);
    const n2 = await hal.api.get("/api/v1/notifications");
    expect(n2.body[0]).toMatchObject({ type: "mention", account: { acct: "bob@remote.example" } });
    expect(n2.body[0].status.in_reply_to_id).toBe(mine.body.id);
  });

  it("an old note (published 2016) gets an id that sorts by its time, and a poll", async () => {
    const bob = await remoteActor("bob");
    const old = note(bob, {
      type: "Question",
      published: "2016-05-01T10:00:00Z",
      content: "<p>which?</p>",
      oneOf: [
        { type: "Note", name: "a", replies: { type: "Collection", totalItems: 3 } },
        { type: "Note", name: "b", replies: { type: "Collection", totalItems: 1 } },
      ],
      endTime: "2016-05-02T10:00:00Z",
      votersCount: 4,
    });
    await deliver(bob, create(bob, old));
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", old.id);
    const id = String(BigInt(row.id));
    expect(Number(BigInt(id) >> 16n)).toBe(Date.parse("2016-05-01T10:00:00Z"));
    const s = await anon.get(`/api/v1/statuses/${id}`);
    expect(s.body.created_at).toBe("2016-05-01T10:00:00.000Z");
    expect(s.body.poll).toMatchObject({ expired: true, votes_count: 4, multiple: false });
    expect(s.body.poll.options).toEqual([
      { title: "a", votes_count: 3 },
      { title: "b", votes_count: 1 },
    ]);
  });
});

describe("Like / Announce / Undo", () => {
  it("count and notify once, even when posted three times via shared and personal inboxes (C3, C17)", async () => {
    const jo = await makeUser("jo");
    const bob = await remoteActor("bob");
    const post = await jo.api.post("/api/v1/statuses", { status: "boost me" });
    const like = { id: newId(bob, "likes"), type: "Like", actor: bob.uri, object: post.body.uri };
    const announce = {
      id: newId(bob, "announces"),
      type: "Announce",
      actor: bob.uri,
      object: post.body.uri,
      to: [AS_PUBLIC],
      cc: [bob.followers],
      published: new Date().toISOString(),
    };
    for (const path of ["/inbox", "/users/jo/inbox", "/inbox"]) {
      expect((await postInbox(bob, like, { path })).status).toBe(202);
      expect((await postInbox(bob, announce, { path })).status).toBe(202);
    }
    await runJobs();
    let s = await jo.api.get(`/api/v1/statuses/${post.body.id}`);
    expect(s.body).toMatchObject({ favourites_count: 1, reblogs_count: 1 });
    const notes = await jo.api.get("/api/v1/notifications");
    expect(notes.body.map((n: any) => n.type).sort()).toEqual(["favourite", "reblog"]);
    const rebloggers = await jo.api.get(`/api/v1/statuses/${post.body.id}/reblogged_by`);
    expect(rebloggers.body.map((a: any) => a.acct)).toEqual(["bob@remote.example"]);

    await deliver(bob, { id: newId(bob), type: "Undo", actor: bob.uri, object: like });
    await deliver(bob, { id: newId(bob), type: "Undo", actor: bob.uri, object: announce.id });
    s = await jo.api.get(`/api/v1/statuses/${post.body.id}`);
    expect(s.body).toMatchObject({ favourites_count: 0, reblogs_count: 0 });
    expect((await jo.api.get("/api/v1/notifications")).body).toEqual([]);
  });

  it("an Announce of an unknown remote note fetches it from its origin", async () => {
    const kim = await makeUser("kim");
    const bob = await remoteActor("bob");
    const zed = await remoteActor("zed", "other.example");
    const n = note(zed, { id: "https://other.example/users/zed/statuses/42" });
    const { serveJson } = await import("./federation-inbox-fixtures");
    serveJson("other.example", "/users/zed/statuses/42", { "@context": "https://www.w3.org/ns/activitystreams", ...n });
    const bobFollow = { id: newId(bob, "follows"), type: "Follow", actor: bob.uri, object: localUri("kim") };
    await deliver(bob, bobFollow);
    await sql(
      "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, (SELECT id FROM accounts WHERE uri = ?), 1, 0, ?)",
      pad("992"),
      pad(kim.id),
      bob.uri,
      Date.now(),
    );
    const announce = { id: newId(bob, "announces"), type: "Announce", actor: bob.uri, object: n.id, to: [AS_PUBLIC], published: new Date().toISOString() };
    await deliver(bob, announce);
    const home = await kim.api.get("/api/v1/timelines/home");
    expect(home.body.map((s: any) => [s.account.acct, s.reblog?.uri])).toEqual([["bob@remote.example", n.id]]);
    expect(home.body[0].reblog.account.acct).toBe("zed@other.example");
  });
});

describe("Delete and Update", () => {
  it("Delete removes a note; Create after Delete is ignored (C16); Delete before Create too", async () => {
    const lu = await makeUser("lu");
    const bob = await remoteActor("bob");
    const n = note(bob);
    await deliver(bob, create(bob, n));
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", n.id);
    const id = String(BigInt(row.id));
    await lu.api.post(`/api/v1/statuses/${id}/favourite`);
    await deliver(bob, { id: `${n.id}#delete`, type: "Delete", actor: bob.uri, object: { id: n.id, type: "Tombstone" } });
    expect((await lu.api.get(`/api/v1/statuses/${id}`)).status).toBe(404);
    expect((await sql("SELECT count(*) AS n FROM favourites"))[0].n).toBe(0);
    await deliver(bob, create(bob, n, { id: `${n.id}/activity2` }));
    expect((await sql("SELECT count(*) AS n FROM statuses WHERE uri = ?", n.id))[0].n).toBe(0);

    const later = note(bob);
    await deliver(bob, { id: `${later.id}#delete`, type: "Delete", actor: bob.uri, object: later.id });
    await deliver(bob, create(bob, later));
    expect((await sql("SELECT count(*) AS n FROM statuses WHERE uri = ?", later.id))[0].n).toBe(0);
  });

  it("Update{Note} makes a history of 2; a stale Update is ignored (C18); reblogger gets an update notification", async () => {
    const mo = await makeUser("mo");
    const bob = await remoteActor("bob");
    const n = note(bob, { content: "<p>first</p>" });
    await deliver(bob, create(bob, n));
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", n.id);
    const id = String(BigInt(row.id));
    await mo.api.post(`/api/v1/statuses/${id}/reblog`);
    await runJobs();
    const t1 = new Date(Date.now() + 1000).toISOString();
    await deliver(bob, { id: `${n.id}#updates/1`, type: "Update", actor: bob.uri, object: { ...n, content: "<p>second</p>", updated: t1 } });
    let s = await mo.api.get(`/api/v1/statuses/${id}`);
    expect(s.body.content).toBe("<p>second</p>");
    expect(s.body.edited_at).not.toBeNull();
    const hist = await mo.api.get(`/api/v1/statuses/${id}/history`);
    expect(hist.body.map((h: any) => h.content)).toEqual(["<p>first</p>", "<p>second</p>"]);
    expect((await mo.api.get("/api/v1/notifications")).body.map((x: any) => x.type)).toEqual(["update"]);
    // stale: updated before the stored edit
    const t0 = new Date(Date.now() - 60_000).toISOString();
    await deliver(bob, { id: `${n.id}#updates/0`, type: "Update", actor: bob.uri, object: { ...n, content: "<p>stale</p>", updated: t0 } });
    s = await mo.api.get(`/api/v1/statuses/${id}`);
    expect(s.body.content).toBe("<p>second</p>");
    expect((await mo.api.get(`/api/v1/statuses/${id}/history`)).body).toHaveLength(2);
  });

  it("Update{Person} refreshes the profile from its origin", async () => {
    const bob = await remoteActor("bob");
    await deliver(bob, { id: newId(bob), type: "Like", actor: bob.uri, object: `${ORIGIN}/x` });
    const [before] = await sql("SELECT display_name FROM accounts WHERE uri = ?", bob.uri);
    expect(before.display_name).toBe("BOB");
    const r = await deliver(bob, { id: newId(bob), type: "Update", actor: bob.uri, object: { ...bob.doc, name: "ignored, refetched" } });
    expect(r.status).toBe(202);
    const [after] = await sql("SELECT display_name, fetched_at FROM accounts WHERE uri = ?", bob.uri);
    expect(after.display_name).toBe("BOB");
  });

  it("Delete of the actor suspends it: follows end, statuses are kept but hidden", async () => {
    const nia = await makeUser("nia");
    const bob = await remoteActor("bob");
    await deliver(bob, { id: newId(bob, "follows"), type: "Follow", actor: bob.uri, object: localUri("nia") });
    const mine = await nia.api.post("/api/v1/statuses", { status: "like me" });
    await deliver(bob, { id: newId(bob), type: "Like", actor: bob.uri, object: mine.body.uri });
    await deliver(bob, create(bob, note(bob)));
    expect((await nia.api.get(`/api/v1/statuses/${mine.body.id}`)).body.favourites_count).toBe(1);
    await deliver(bob, { id: `${bob.uri}#delete`, type: "Delete", actor: bob.uri, object: bob.uri, to: [AS_PUBLIC] });
    expect((await nia.api.get(`/api/v1/accounts/${nia.id}`)).body.followers_count).toBe(0);
    const [acct] = await sql("SELECT suspended_at, (SELECT count(*) FROM statuses s WHERE s.account_id = a.id) AS n FROM accounts a WHERE uri = ?", bob.uri);
    expect(acct.suspended_at).not.toBeNull();
    // Reversible (federation-suspension.test.ts): the status stays, hidden while its author is suspended.
    expect(acct.n).toBe(1);
    // Anything later from bob (but an Update of itself) is dropped.
    const r = await deliver(bob, create(bob, note(bob)));
    expect([202, 401, 403]).toContain(r.status);
    expect((await sql("SELECT count(*) AS n FROM statuses WHERE account_id = (SELECT id FROM accounts WHERE uri = ?)", bob.uri))[0].n).toBe(1);
  });
});

describe("Featured and Flag", () => {
  it("Add/Remove to the actor's featured collection pins a status", async () => {
    const bob = await remoteActor("bob");
    const n = note(bob);
    await deliver(bob, create(bob, n));
    await deliver(bob, { id: newId(bob), type: "Add", actor: bob.uri, object: n.id, target: bob.featured });
    const bobId = String(BigInt((await sql("SELECT id FROM accounts WHERE uri = ?", bob.uri))[0].id));
    let pinned = await anon.get(`/api/v1/accounts/${bobId}/statuses?pinned=true`);
    expect(pinned.body.map((s: any) => s.uri)).toEqual([n.id]);
    await deliver(bob, { id: newId(bob), type: "Remove", actor: bob.uri, object: n.id, target: bob.featured });
    pinned = await anon.get(`/api/v1/accounts/${bobId}/statuses?pinned=true`);
    expect(pinned.body).toEqual([]);
  });

  it("Flag creates a report and notifies moderators", async () => {
    const mod = await makeUser("mod", { roleId: "1" });
    const olu = await makeUser("olu");
    const post = await olu.api.post("/api/v1/statuses", { status: "reported" });
    const bob = await remoteActor("bob");
    await deliver(bob, { id: newId(bob, "flags"), type: "Flag", actor: bob.uri, object: [localUri("olu"), post.body.uri], content: "spam <b>here</b>" });
    const [rep] = await sql("SELECT * FROM reports");
    expect(rep.comment).toBe("spam here");
    expect(JSON.parse(rep.status_ids)).toEqual([post.body.id]);
    expect(String(BigInt(rep.target_account_id))).toBe(olu.id);
    const notes = await mod.api.get("/api/v1/notifications?types[]=admin.report");
    expect(notes.body.map((n: any) => n.type)).toEqual(["admin.report"]);
  });
});
