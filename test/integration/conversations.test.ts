// Direct-message conversations over REST, through the real posting path and the JOBS consumer: a direct status
// makes (or advances) one conversation per local participant, read state, removal, paging, deletes and blocks.
import { describe, expect, it } from "vitest";
import { eventually, links, makeUser, type TestUser } from "./helpers";

const dm = async (from: TestUser, text: string, extra: Record<string, unknown> = {}) => {
  const r = await from.api.post("/api/v1/statuses", { status: text, visibility: "direct", ...extra });
  expect(r.status).toBe(200);
  return r.body as { id: string };
};

const conversations = async (u: TestUser, query = "") => {
  const r = await u.api.get(`/api/v1/conversations${query}`);
  expect(r.status).toBe(200);
  return r as { body: { id: string; unread: boolean; accounts: { id: string; acct: string }[]; last_status: { id: string } | null }[]; headers: Headers };
};

describe("/api/v1/conversations", () => {
  it("a direct status starts a conversation for the author (read) and each mentioned account (unread)", async () => {
    const [alice, bob, carol] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const first = await dm(alice, `@${bob.username} @${carol.username} hello both`);
    const forBob = await eventually(async () => {
      const { body } = await conversations(bob);
      expect(body).toHaveLength(1);
      return body[0]!;
    });
    expect(forBob.unread).toBe(true);
    expect(forBob.last_status?.id).toBe(first.id);
    expect(forBob.accounts.map((a) => a.id).sort()).toEqual([alice.id, carol.id].sort());
    const [forAlice] = (await conversations(alice)).body;
    expect(forAlice?.unread).toBe(false);
    expect(forAlice?.accounts.map((a) => a.id).sort()).toEqual([bob.id, carol.id].sort());

    // A reply in the thread advances the same conversation; the replier's own copy stays read.
    const reply = await dm(bob, `@${alice.username} @${carol.username} hi!`, { in_reply_to_id: first.id });
    await eventually(async () => {
      const { body } = await conversations(alice);
      expect(body).toHaveLength(1);
      expect(body[0]?.last_status?.id).toBe(reply.id);
      expect(body[0]?.unread).toBe(true);
      expect(body[0]?.id).toBe(forAlice?.id);
    });
    const [bobs] = (await conversations(bob)).body;
    expect(bobs?.id).toBe(forBob.id);
    expect(bobs?.unread).toBe(false);
  });

  it("mark read, mark unread and remove act on the caller's own conversation only", async () => {
    const [alice, bob, eve] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await dm(alice, `@${bob.username} secret`);
    const conv = await eventually(async () => {
      const { body } = await conversations(bob);
      expect(body).toHaveLength(1);
      return body[0]!;
    });
    expect((await eve.api.post(`/api/v1/conversations/${conv.id}/read`)).status).toBe(404);
    expect((await eve.api.delete(`/api/v1/conversations/${conv.id}`)).status).toBe(404);
    expect((await bob.api.post("/api/v1/conversations/abc/read")).status).toBe(404);

    const read = await bob.api.post(`/api/v1/conversations/${conv.id}/read`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: conv.id, unread: false });
    expect((await conversations(bob)).body[0]?.unread).toBe(false);

    // Mastodon 4.2's unread: back to unread, for the caller's own conversation only.
    expect((await eve.api.post(`/api/v1/conversations/${conv.id}/unread`)).status).toBe(404);
    const unread = await bob.api.post(`/api/v1/conversations/${conv.id}/unread`);
    expect(unread.status).toBe(200);
    expect(unread.body).toMatchObject({ id: conv.id, unread: true });
    expect((await conversations(bob)).body[0]?.unread).toBe(true);
    expect((await conversations(alice)).body[0]?.unread).toBe(false);

    expect((await bob.api.delete(`/api/v1/conversations/${conv.id}`)).status).toBe(200);
    expect((await conversations(bob)).body).toEqual([]);
    // The sender's copy is untouched.
    expect((await conversations(alice)).body).toHaveLength(1);
  });

  it("a note to oneself lists the account itself; public and followers-only posts make no conversation", async () => {
    const [alice, bob] = await Promise.all([makeUser(), makeUser()]);
    await alice.api.post("/api/v1/statuses", { status: `@${bob.username} public mention` });
    await alice.api.post("/api/v1/statuses", { status: `@${bob.username} private mention`, visibility: "private" });
    const note = await dm(alice, "just for me");
    const [c] = await eventually(async () => {
      const { body } = await conversations(alice);
      expect(body).toHaveLength(1);
      return body;
    });
    expect(c?.last_status?.id).toBe(note.id);
    expect(c?.accounts.map((a) => a.id)).toEqual([alice.id]);
    expect((await conversations(bob)).body).toEqual([]);
  });

  it("deleting the newest status moves the conversation back; deleting the last one removes it", async () => {
    const [alice, bob] = await Promise.all([makeUser(), makeUser()]);
    const one = await dm(alice, `@${bob.username} one`);
    const two = await dm(alice, `@${bob.username} two`, { in_reply_to_id: one.id });
    await eventually(async () => expect((await conversations(bob)).body[0]?.last_status?.id).toBe(two.id));
    expect((await alice.api.delete(`/api/v1/statuses/${two.id}`)).status).toBe(200);
    await eventually(async () => {
      const { body } = await conversations(bob);
      expect(body).toHaveLength(1);
      expect(body[0]?.last_status?.id).toBe(one.id);
    });
    expect((await alice.api.delete(`/api/v1/statuses/${one.id}`)).status).toBe(200);
    await eventually(async () => expect((await conversations(bob)).body).toEqual([]));
    expect((await conversations(alice)).body).toEqual([]);
  });

  it("a blocked sender's direct status starts no conversation", async () => {
    const [alice, bob] = await Promise.all([makeUser(), makeUser()]);
    expect((await bob.api.post(`/api/v1/accounts/${alice.id}/block`)).status).toBe(200);
    await dm(alice, `@${bob.username} let me in`);
    await eventually(async () => expect((await conversations(alice)).body).toHaveLength(1));
    expect((await conversations(bob)).body).toEqual([]);
  });

  it("pages newest activity first with Link cursors; needs read:statuses", async () => {
    const [alice, bob] = await Promise.all([makeUser(), makeUser()]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await dm(alice, `@${bob.username} thread ${i}`)).id);
    await eventually(async () => expect((await conversations(bob)).body).toHaveLength(3));
    const page1 = await conversations(bob, "?limit=2");
    expect(page1.body.map((c) => c.last_status?.id)).toEqual([ids[2], ids[1]]);
    const next = links(page1.headers).next;
    expect(next).toBeTruthy();
    const page2 = await bob.api.get(next!);
    expect(page2.body.map((c: { last_status: { id: string } }) => c.last_status.id)).toEqual([ids[0]]);

    const noRead = await makeUser(undefined, { scopes: "write" });
    expect((await noRead.api.get("/api/v1/conversations")).status).toBe(403);
  });
});
