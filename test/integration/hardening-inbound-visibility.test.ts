// Security (issue 7, class 7): inbound interactions obey the same visibility as REST. A Like, Announce or reply from
// an actor who may not see a local private or direct status changes nothing: no count, no notification, no thread.
import { beforeAll, describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";
import { AS_PUBLIC, create, deliver, installFetchMock, newId, note, remoteActor } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

const localUri = (username: string) => `${ORIGIN}/users/${username}`;

describe("inbound interactions on statuses the actor may not see", () => {
  for (const visibility of ["private", "direct"] as const) {
    it(`${visibility}: Like, Announce and a reply from a stranger are not taken; a follower's Like is (private)`, async () => {
      const owner = await makeUser(`own${visibility}`);
      const stranger = await remoteActor(`str${visibility}`);
      const post = await owner.api.post("/api/v1/statuses", { status: "for my circle", visibility });
      expect(post.status).toBe(200);
      const uri = post.body.uri as string;

      await deliver(stranger, { id: newId(stranger, "likes"), type: "Like", actor: stranger.uri, object: uri });
      await deliver(stranger, {
        id: newId(stranger, "announces"),
        type: "Announce",
        actor: stranger.uri,
        object: uri,
        to: [AS_PUBLIC],
        published: new Date().toISOString(),
      });
      const reply = note(stranger, { inReplyTo: uri, content: "<p>I saw it anyway</p>", to: [AS_PUBLIC] });
      await deliver(stranger, create(stranger, reply));

      const s = await owner.api.get(`/api/v1/statuses/${post.body.id}`);
      expect(s.body).toMatchObject({ favourites_count: 0, reblogs_count: 0, replies_count: 0 });
      expect((await owner.api.get("/api/v1/notifications")).body).toEqual([]);
      const ctx = await owner.api.get(`/api/v1/statuses/${post.body.id}/context`);
      expect(ctx.body.descendants).toEqual([]);

      if (visibility === "private") {
        const friend = await remoteActor(`fr${visibility}`);
        await deliver(friend, { id: newId(friend, "follows"), type: "Follow", actor: friend.uri, object: localUri(owner.username) });
        await deliver(friend, { id: newId(friend, "likes"), type: "Like", actor: friend.uri, object: uri });
        const after = await owner.api.get(`/api/v1/statuses/${post.body.id}`);
        expect(after.body.favourites_count).toBe(1);
      }
    });
  }

  it("a public status can still be liked, boosted and replied to by anyone, unless its author blocks them", async () => {
    const owner = await makeUser("ownpublic");
    const fan = await remoteActor("fanpublic");
    const post = await owner.api.post("/api/v1/statuses", { status: "hello world" });
    await deliver(fan, { id: newId(fan, "likes"), type: "Like", actor: fan.uri, object: post.body.uri });
    await deliver(fan, create(fan, note(fan, { inReplyTo: post.body.uri, to: [AS_PUBLIC] })));
    const s = await owner.api.get(`/api/v1/statuses/${post.body.id}`);
    expect(s.body).toMatchObject({ favourites_count: 1, replies_count: 1 });

    const troll = await remoteActor("trollpublic");
    await deliver(troll, { id: newId(troll, "likes"), type: "Like", actor: troll.uri, object: `${ORIGIN}/nothing` }); // becomes known
    const rows = await owner.api.get(`/api/v1/accounts/search?q=trollpublic@remote.example&resolve=false`);
    const trollId = rows.body[0]?.id as string;
    expect(trollId).toBeTruthy();
    await owner.api.post(`/api/v1/accounts/${trollId}/block`);
    await deliver(troll, { id: newId(troll, "likes"), type: "Like", actor: troll.uri, object: post.body.uri });
    await deliver(troll, {
      id: newId(troll, "announces"),
      type: "Announce",
      actor: troll.uri,
      object: post.body.uri,
      to: [AS_PUBLIC],
      published: new Date().toISOString(),
    });
    const after = await owner.api.get(`/api/v1/statuses/${post.body.id}`);
    expect(after.body).toMatchObject({ favourites_count: 1, reblogs_count: 0 });
  });
});
