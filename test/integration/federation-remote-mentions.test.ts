// A remote status mentioning another remote account (one known here) keeps that mention: it is listed on the
// status, and only local mentioned accounts are notified.
import { beforeAll, describe, expect, it } from "vitest";
import { anon, makeUser, ORIGIN } from "./helpers";
import { create, deliver, installFetchMock, newId, note, remoteActor, sql } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

describe("mentions between remote accounts", () => {
  it("are stored and shown; local mentioned accounts are notified, remote ones never", async () => {
    const local = await makeUser("mentionee");
    const carol = await remoteActor("carol", "c.example");
    const bob = await remoteActor("bob", "b.example");
    // carol becomes known here (any activity from her does).
    await deliver(carol, { id: newId(carol), type: "Like", actor: carol.uri, object: `${ORIGIN}/users/mentionee/statuses/1` });
    const n = note(bob, {
      content: "<p>@carol @mentionee hello</p>",
      tag: [
        { type: "Mention", href: carol.uri, name: "@carol@c.example" },
        { type: "Mention", href: `${ORIGIN}/users/mentionee`, name: "@mentionee" },
      ],
      cc: [carol.uri, `${ORIGIN}/users/mentionee`],
    });
    expect((await deliver(bob, create(bob, n))).status).toBe(202);
    const lookup = await anon.get("/api/v1/accounts/lookup?acct=bob@b.example");
    const [status] = (await anon.get(`/api/v1/accounts/${lookup.body.id}/statuses`)).body;
    expect(status.mentions.map((m: { acct: string }) => m.acct).sort()).toEqual(["carol@c.example", "mentionee"]);
    const notes = await local.api.get("/api/v1/notifications");
    expect(notes.body.map((x: { type: string }) => x.type)).toEqual(["mention"]);
    const rows = await sql("SELECT count(*) AS n FROM notifications WHERE account_id IN (SELECT id FROM accounts WHERE domain IS NOT NULL)");
    expect(Number(rows[0].n)).toBe(0);
  });
});
