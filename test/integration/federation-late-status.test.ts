// Statuses older than Mastodon's real-time window (6 hours) that arrive late (backfill, a fetched context, the
// original of a boost) are stored but not fanned out: they never land in home feeds as new. A boost is new: it lands.
import { beforeAll, describe, expect, it } from "vitest";
import { makeUser } from "./helpers";
import { AS_PUBLIC, create, deliver, installFetchMock, newId, note, pad, remoteActor, runJobs, serveJson, sql } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

describe("late old statuses", () => {
  it("an old Create is stored but not in home; a fresh one is; a boost of an old post lands as the boost only", async () => {
    const reader = await makeUser("latereader");
    const bob = await remoteActor("bob", "late.example");
    const carol = await remoteActor("carol", "late.example");
    await deliver(bob, { id: newId(bob), type: "Like", actor: bob.uri, object: "https://x.example/none" });
    const [b] = await sql("SELECT id FROM accounts WHERE uri = ?", bob.uri);
    await sql(
      "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, 0, ?)",
      pad("4242"),
      pad(reader.id),
      b.id,
      Date.now(),
    );

    const eightHoursAgo = new Date(Date.now() - 8 * 3600_000).toISOString();
    const old = note(bob, { published: eightHoursAgo, content: "<p>from this morning</p>" });
    const fresh = note(bob, { content: "<p>just now</p>" });
    await deliver(bob, create(bob, old));
    await deliver(bob, create(bob, fresh));

    // carol's old post, boosted by bob now: served for the fetch the Announce triggers.
    const carolOld = note(carol, { published: eightHoursAgo, content: "<p>carol's old post</p>" });
    serveJson("late.example", new URL(carolOld.id as string).pathname, carolOld);
    const boost = { id: newId(bob, "announces"), type: "Announce", actor: bob.uri, object: carolOld.id, to: [AS_PUBLIC], published: new Date().toISOString() };
    await deliver(bob, boost);
    await runJobs();

    const home = await reader.api.get("/api/v1/timelines/home");
    const shown = home.body.map((s: { uri: string; reblog: { uri: string } | null }) => (s.reblog ? `boost of ${s.reblog.uri}` : s.uri));
    expect(shown).toEqual([`boost of ${carolOld.id}`, fresh.id]);
    // The old status is stored all the same (its page, its context).
    expect((await sql("SELECT count(*) AS n FROM statuses WHERE uri = ?", old.id))[0].n).toBe(1);
  });
});
