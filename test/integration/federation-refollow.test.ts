// Follow → unfollow → follow again, with servers that reuse activity ids (Hollo reuses one Accept id per follower):
// every state change valid now is applied; a replay of the same change changes nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";
import { deliver, installFetchMock, newId, remoteActor, sql } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

const localUri = (username: string) => `${ORIGIN}/users/${username}`;

async function idOf(uri: string): Promise<string> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", uri);
  return String(BigInt(row.id));
}

describe("re-follow with reused activity ids", () => {
  it("an Accept with an id seen before completes a new follow request; its replay changes nothing", async () => {
    const erin = await makeUser("erin2");
    const bob = await remoteActor("bob", "hollo.example", { locked: true });
    // Make bob known locally (a Like introduces his account).
    await deliver(bob, { id: newId(bob), type: "Like", actor: bob.uri, object: `${localUri("erin2")}/statuses/1` });
    const bobId = await idOf(bob.uri);
    const acceptId = `${bob.uri}#accepts/followers/${erin.id}`;
    const rel = async () => (await erin.api.get(`/api/v1/accounts/relationships?id[]=${bobId}`)).body[0];

    for (let round = 1; round <= 2; round++) {
      expect((await erin.api.post(`/api/v1/accounts/${bobId}/follow`)).status).toBe(200);
      expect(await rel()).toMatchObject({ following: false, requested: true });
      const [req] = await sql("SELECT uri FROM follow_requests WHERE target_account_id = ?", bobId.padStart(20, "0"));
      const follow = { id: req.uri, type: "Follow", actor: localUri("erin2"), object: bob.uri };
      await deliver(bob, { id: acceptId, type: "Accept", actor: bob.uri, object: follow });
      expect(await rel(), `round ${round}`).toMatchObject({ following: true, requested: false });
      // The same Accept again: still following, one follow row.
      await deliver(bob, { id: acceptId, type: "Accept", actor: bob.uri, object: follow });
      const rows = await sql("SELECT count(*) AS n FROM follows WHERE target_account_id = ?", bobId.padStart(20, "0"));
      expect(Number(rows[0].n)).toBe(1);
      expect((await erin.api.post(`/api/v1/accounts/${bobId}/unfollow`)).status).toBe(200);
      expect(await rel()).toMatchObject({ following: false, requested: false });
    }
  });

  it("a Follow with the id of an earlier, undone Follow follows again; an Undo with a reused id unfollows again", async () => {
    const fay = await makeUser("fay2");
    const bob = await remoteActor("bob", "reuse.example");
    const followId = `${bob.uri}#follows/fay2`;
    const undoId = `${bob.uri}#follows/fay2/undo`;
    const follow = { id: followId, type: "Follow", actor: bob.uri, object: localUri("fay2") };
    const followers = async () => (await fay.api.get(`/api/v1/accounts/${fay.id}`)).body.followers_count;
    for (let round = 1; round <= 2; round++) {
      await deliver(bob, follow);
      expect(await followers(), `round ${round}: followed`).toBe(1);
      await deliver(bob, follow); // a repeat: still one follower
      expect(await followers()).toBe(1);
      await deliver(bob, { id: undoId, type: "Undo", actor: bob.uri, object: follow });
      expect(await followers(), `round ${round}: undone`).toBe(0);
    }
  });
});
