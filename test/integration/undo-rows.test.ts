// Undoing an action removes the notification it caused: by its recipient, type and activity (notifications_activity),
// never by type and activity alone, which scanned every notification stored. Rows read by an unfavourite, an unboost,
// an unfollow and a status deletion do not grow with the notifications of the instance (issue 12: D1 bills rows read),
// nor a deletion with its polls and bookmarks.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { padId } from "../../src/lib/text/ids";
import { makeUser } from "./helpers";
import { timedCall } from "./server-timing-fixtures";

/** Polls and bookmarks of other statuses: what a status deletion looks up by status (polls_status, bookmarks_status). */
async function morePollsAndBookmarks(bookmarkerId: string, n: number) {
  const rows = Array.from({ length: n }, (_, i) => [padId(String(6_000_000_000 + i)), padId(String(5_000_000_000 + i))]);
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO polls (id, status_id, account_id, options, votes_per_option, created_at, updated_at)
       SELECT value ->> 0, value ->> 1, value ->> 1, '["a","b"]', '[0,0]', 0, 0 FROM json_each(?)`,
    ).bind(JSON.stringify(rows)),
    env.DB.prepare(`INSERT INTO bookmarks (id, account_id, status_id, created_at) SELECT value ->> 0, ?, value ->> 1, 0 FROM json_each(?)`).bind(
      padId(bookmarkerId),
      JSON.stringify(rows),
    ),
  ]);
}

async function moreNotifications(recipientId: string, fromId: string, n: number) {
  const rows = Array.from({ length: n }, (_, i) => [padId(String(8_000_000_000 + i)), padId(String(7_000_000_000 + i))]);
  await env.DB.prepare(
    `INSERT INTO notifications (id, account_id, from_account_id, type, status_id, activity_id, created_at, filtered)
     SELECT value ->> 0, ?, ?, 'favourite', NULL, value ->> 1, 0, 0 FROM json_each(?)`,
  )
    .bind(padId(recipientId), padId(fromId), JSON.stringify(rows))
    .run();
}

describe("undoing an action", () => {
  it("reads no more rows with 3,000 more notifications, 2,000 more polls and bookmarks stored", async () => {
    const author = await makeUser();
    const fan = await makeUser();
    const rounds = async () => {
      const s = (await author.api.post("/api/v1/statuses", { status: "undo me", visibility: "public" })).body.id;
      expect((await fan.api.post(`/api/v1/statuses/${s}/favourite`)).status).toBe(200);
      const unfavourite = await timedCall("POST", `/api/v1/statuses/${s}/unfavourite`, fan.token);
      expect(unfavourite.body.favourites_count).toBe(0);
      expect((await fan.api.post(`/api/v1/statuses/${s}/reblog`)).status).toBe(200);
      const unreblog = await timedCall("POST", `/api/v1/statuses/${s}/unreblog`, fan.token);
      expect(unreblog.body.reblogged).toBe(false);
      expect((await fan.api.post(`/api/v1/accounts/${author.id}/follow`)).status).toBe(200);
      const unfollow = await timedCall("POST", `/api/v1/accounts/${author.id}/unfollow`, fan.token);
      expect(unfollow.body.following).toBe(false);
      expect((await fan.api.post(`/api/v1/statuses/${s}/reblog`)).status).toBe(200);
      const deleted = await timedCall("DELETE", `/api/v1/statuses/${s}`, author.token);
      expect(deleted.status).toBe(200);
      // Each undo took its notification with it.
      const left = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE account_id = ? AND created_at > 0")
        .bind(padId(author.id))
        .first<{ n: number }>();
      expect(left?.n).toBe(0);
      return { unfavourite: unfavourite.rows, unreblog: unreblog.rows, unfollow: unfollow.rows, deleted: deleted.rows };
    };
    const before = await rounds();
    await moreNotifications(author.id, fan.id, 3000);
    await morePollsAndBookmarks(fan.id, 2000);
    const after = await rounds();
    console.log("rows read, undoing:", JSON.stringify(before), "then with 3,000 more notifications:", JSON.stringify(after));
    for (const k of Object.keys(before) as (keyof typeof before)[]) expect(after[k], k).toBeLessThanOrEqual(before[k] + 2);
  });
});
