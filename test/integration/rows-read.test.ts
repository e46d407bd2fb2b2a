// Rows read per page (issue 12: D1 bills rows read): a page costs rows in proportion to what it shows, never to
// the size of the database. Measured from Server-Timing's d1r (DEV_SERVER_TIMING, src/lib/d1-counter.ts), on
// pages of 20 with boosts, quotes, media-less replies and mentions in them.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { padId } from "../../src/lib/ids";
import { follow, insertStatus, nextId } from "./feeds-fixtures";
import { makeUser, ORIGIN, type TestUser } from "./helpers";

async function timed(path: string, token: string) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${ORIGIN}${path}`, { headers: { authorization: `Bearer ${token}` } }),
    { ...env, DEV_SERVER_TIMING: "true" } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const body = (await res.json()) as unknown[];
  const m: Record<string, number> = {};
  for (const part of (res.headers.get("server-timing") ?? "").split(",")) {
    const x = /^\s*([\w-]+)\b.*;\s*dur=(\d+)/.exec(part);
    if (x?.[1] && x[2]) m[x[1]] = Number(x[2]);
  }
  return { status: res.status, body, rt: m.d1 ?? -1, rows: m.d1r ?? -1 };
}

let viewer: TestUser;
const authors: TestUser[] = [];
let threadRoot = "";

/** Some noise the pages must not read: statuses of accounts the viewer does not follow. */
async function noise(n: number, by: TestUser) {
  for (let i = 0; i < n; i++) await insertStatus(by, { text: `noise ${i}` });
}

beforeAll(async () => {
  viewer = await makeUser();
  for (let i = 0; i < 5; i++) {
    const a = await makeUser();
    authors.push(a);
    await follow(viewer, a);
  }
  const stranger = await makeUser();
  await noise(30, stranger);
  // 30 entries in the viewer's home: originals, replies with mentions, boosts of the noise, a quote.
  const ids: { id: string; rb: string | null; author: string }[] = [];
  const strangers = await env.DB.prepare("SELECT id FROM statuses WHERE account_id = ? LIMIT 10").bind(padId(stranger.id)).all<{ id: string }>();
  for (let i = 0; i < 30; i++) {
    const a = authors[i % authors.length]!;
    if (i % 6 === 5) {
      const target = String(strangers.results[i % 10]!.id).replace(/^0+/, "");
      ids.push({ id: await insertStatus(a, { reblogOf: target }), rb: target, author: a.id });
    } else if (i % 4 === 3 && ids.length) {
      const parent = ids[ids.length - 1]!;
      ids.push({ id: await insertStatus(a, { inReplyTo: { id: parent.id, accountId: parent.author }, mentions: [parent.author] }), rb: null, author: a.id });
    } else ids.push({ id: await insertStatus(a, { text: `home ${i}` }), rb: null, author: a.id });
  }
  threadRoot = ids[2]!.id;
  // A quote of a stranger's status (quotes table as the quote-posts work writes it).
  const quoting = ids[ids.length - 1]!;
  await env.DB.prepare(
    "INSERT INTO quotes (id, status_id, account_id, quoted_status_id, quoted_account_id, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'accepted', ?, ?)",
  )
    .bind(padId(nextId()), padId(quoting.id), padId(quoting.author), strangers.results[0]!.id, padId(stranger.id), Date.now(), Date.now())
    .run();
  // 40 notifications: favourites of the viewer's statuses and follows, from the followed authors.
  const own: string[] = [];
  for (let i = 0; i < 10; i++) own.push(await insertStatus(viewer, { text: `mine ${i}` }));
  const notes = [];
  for (let i = 0; i < 40; i++) {
    const from = authors[i % authors.length]!;
    const fav = i % 4 !== 0;
    notes.push(
      env.DB.prepare(
        "INSERT INTO notifications (id, account_id, from_account_id, type, status_id, activity_id, group_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ).bind(
        padId(nextId()),
        padId(viewer.id),
        padId(from.id),
        fav ? "favourite" : "follow",
        fav ? padId(own[i % own.length]!) : null,
        padId(nextId()),
        fav ? `favourite-${own[i % own.length]}` : `ungrouped-${i}`,
        Date.now(),
      ),
    );
  }
  await env.DB.batch(notes);
  await env.DB.batch(
    ids.map((s) =>
      env.DB.prepare("INSERT INTO home_feed (account_id, status_id, reblog_of_id, author_id) VALUES (?, ?, ?, ?)").bind(
        padId(viewer.id),
        padId(s.id),
        s.rb ? padId(s.rb) : null,
        padId(s.author),
      ),
    ),
  );
});

describe("rows read per page", () => {
  it("home: a page of 20 reads at most 150 rows, in 3 round trips", async () => {
    const r = await timed("/api/v1/timelines/home?limit=20", viewer.token);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(20);
    console.log("home20 rows", r.rows, "rt", r.rt);
    expect(r.rt).toBe(3);
    expect(r.rows).toBeLessThanOrEqual(150);
  });

  it("public, account statuses, notifications and context read the same rows whatever else the database holds", async () => {
    const paths = [
      "/api/v1/timelines/home?limit=20",
      "/api/v1/timelines/home?limit=40",
      "/api/v1/timelines/public?limit=20",
      "/api/v1/timelines/public?local=true&limit=20",
      `/api/v1/accounts/${authors[0]!.id}/statuses?limit=20`,
      "/api/v1/notifications",
      "/api/v2/notifications",
      `/api/v1/statuses/${threadRoot}/context`,
    ];
    const before: Record<string, number> = {};
    for (const path of paths) {
      const r = await timed(path, viewer.token);
      expect(r.status).toBe(200);
      before[path] = r.rows;
    }
    // More of everything the pages do not show: another account's statuses, threads, boosts and notifications.
    const other = await makeUser();
    const someone = await makeUser();
    let last = "";
    for (let i = 0; i < 120; i++) {
      if (i % 3 === 0 || !last) last = await insertStatus(other, { visibility: "unlisted", text: `more ${i}` });
      else if (i % 3 === 1) last = await insertStatus(someone, { visibility: "unlisted", inReplyTo: { id: last, accountId: other.id }, mentions: [other.id] });
      // Unlisted: the public timeline skips boosts inside its index range, so public ones there would add rows in
      // proportion to how dense boosts are among recent public statuses (not to the database's size).
      else await insertStatus(someone, { reblogOf: last, visibility: "unlisted" });
    }
    await env.DB.prepare(
      "INSERT INTO notifications (id, account_id, from_account_id, type, status_id, activity_id, group_key, created_at) SELECT id, ?, ?, 'favourite', id, id, 'favourite-' || id, created_at FROM statuses WHERE account_id = ?",
    )
      .bind(padId(other.id), padId(someone.id), padId(other.id))
      .run();
    const after: Record<string, number> = {};
    for (const path of paths) after[path] = (await timed(path, viewer.token)).rows;
    console.log("rows read per page, before and after the database grew:", JSON.stringify({ before, after }));
    for (const path of paths) expect(after[path], path).toBeLessThanOrEqual((before[path] ?? 0) + 2);
  });
});
