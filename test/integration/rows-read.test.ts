// Rows read per page (issue 12: D1 bills rows read): a page costs rows in proportion to what it shows, never to
// the size of the database. Measured from Server-Timing's d1r (DEV_SERVER_TIMING, src/lib/limits/d1-counter.ts), on
// pages of 20 with boosts, quotes, media-less replies and mentions in them.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { padId } from "../../src/lib/text/ids";
import { follow, insertStatus, nextId } from "./feeds-fixtures";
import { makeUser, type TestUser } from "./helpers";
import { timedGet } from "./server-timing-fixtures";

async function timed(path: string, token: string) {
  const { status, body, metrics, rt } = await timedGet(path, token);
  // Every page reads some rows (the token, at least): a missing or zero figure means nothing was measured, and the
  // comparisons below would hold for any page.
  expect(metrics.d1r, `${path}: server-timing d1r`).toBeGreaterThan(0);
  return { status, body: body as unknown[], rt, rows: metrics.d1r! };
}

let viewer: TestUser;
const authors: TestUser[] = [];
let threadRoot = "";

type SearchFigures = Record<string, { rows: number; rt: number; found: number }>;

/**
 * Per path: rows read, round trips and how many results the page found: the `kind` list of a search answer, the
 * notification groups of a v2 page, else the array answered. As the viewer unless another token is given.
 */
async function searchFigures(paths: string[], kind?: "statuses" | "accounts" | "hashtags", token = viewer.token): Promise<SearchFigures> {
  const out: SearchFigures = {};
  for (const path of paths) {
    const r = await timed(path, token);
    expect(r.status, path).toBe(200);
    const body = r.body as unknown as unknown[] | Record<string, unknown[]>;
    const list = Array.isArray(body) ? body : kind ? body[kind] : body.notification_groups;
    out[path] = { rows: r.rows, rt: r.rt, found: list!.length };
  }
  return out;
}

/** The database grew with rows the searches must not read: the same results, round trips, and rows read (±2). */
function expectSameSearch(paths: string[], before: SearchFigures, after: SearchFigures) {
  for (const path of paths) {
    expect(after[path]!.found, path).toBe(before[path]!.found);
    expect(after[path]!.rt, path).toBe(before[path]!.rt);
    expect(after[path]!.rows, path).toBeLessThanOrEqual(before[path]!.rows + 2);
  }
}

/** Some noise the pages must not read: statuses of accounts the viewer does not follow. */
async function noise(n: number, by: TestUser) {
  for (let i = 0; i < n; i++) await insertStatus(by, { text: `noise ${i}` });
}

/**
 * n local statuses of `accountId` ("<word> i", the given visibility), newer than everything so far, in one statement:
 * what a page must not read more of when the database grows.
 */
async function statusesOf(accountId: string, n: number, word: string, visibility = "public") {
  const base = nextId();
  for (let i = 1; i < n; i++) nextId();
  await env.DB.prepare(
    `INSERT INTO statuses (id, uri, account_id, local, content, text, visibility, language, created_at, updated_at)
     WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
     SELECT printf('%020d', CAST(? AS INTEGER) + i * 3), 'http://tern.test/' || ? || '/' || (CAST(? AS INTEGER) + i * 3), ?, 1,
       '<p>' || ? || ' ' || i || '</p>', ? || ' ' || i, ?, 'en', 0, 0 FROM n`,
  )
    .bind(n, base, word, base, padId(accountId), word, word, visibility)
    .run();
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
    // Polls of those statuses: each rendered status looks its poll up by status (polls_status; without it, every
    // status on a page scanned every poll).
    await env.DB.prepare(
      `INSERT INTO polls (id, status_id, account_id, options, votes_per_option, created_at, updated_at)
       SELECT id, id, account_id, '["a","b"]', '[0,0]', 0, 0 FROM statuses WHERE account_id = ?`,
    )
      .bind(padId(other.id))
      .run();
    const after: Record<string, number> = {};
    for (const path of paths) after[path] = (await timed(path, viewer.token)).rows;
    console.log("rows read per page, before and after the database grew:", JSON.stringify({ before, after }));
    for (const path of paths) expect(after[path], path).toBeLessThanOrEqual((before[path] ?? 0) + 2);
  });
  // Issue 12 point 2: a status search reads the viewer's library (their own index ranges) and a capped walk of the
  // newest public matches, never every match: more statuses with the word that the viewer may not find (a stranger's,
  // not indexable; followers-only ones) or older than the walk add no rows.
  it("status search reads the same rows when the database grows with matches the viewer cannot find", async () => {
    const author = await makeUser();
    await env.DB.prepare("UPDATE accounts SET indexable = 1 WHERE id = ?").bind(padId(author.id)).run();
    for (let i = 0; i < 5; i++) await insertStatus(author, { text: `otter public ${i}` });
    const theirs = await insertStatus(authors[0]!, { text: "otter favourited" });
    await env.DB.prepare("INSERT INTO favourites (id, account_id, status_id, created_at) VALUES (?, ?, ?, ?)")
      .bind(padId(nextId()), padId(viewer.id), padId(theirs), Date.now())
      .run();
    for (let i = 0; i < 10; i++) await insertStatus(viewer, { text: `otter of mine ${i}` });
    const stranger = await makeUser();
    /** n statuses with the word, by the stranger (not indexable), newer than everything so far, indexed as posts are. */
    const matches = async (n: number, visibility: string) => {
      await statusesOf(stranger.id, n, "otter", visibility);
      await env.DB.prepare("INSERT OR IGNORE INTO status_search (id, text) SELECT CAST(id AS INTEGER), text FROM statuses WHERE account_id = ?")
        .bind(padId(stranger.id))
        .run();
    };
    const paths = [
      "/api/v2/search?type=statuses&q=otter&limit=20",
      "/api/v2/search?q=otter&limit=20",
      "/api/v2/search?type=statuses&q=otter%20in:public&limit=20",
    ];
    const measure = () => searchFigures(paths, "statuses");
    // 600 of the stranger's first: the public walk is then full, whatever comes after.
    await matches(600, "public");
    const before = await measure();
    // The database grows with matches the viewer may not find: 1,500 public (not indexable) and 500 followers-only.
    await matches(1500, "public");
    await matches(500, "private");
    const after = await measure();
    console.log("status search rows read, before and after 2,000 more matches:", JSON.stringify({ before, after }));
    expectSameSearch(paths, before, after);
    // The viewer's 10 and the favourite. The indexable author's 5 are older than the 400 newest public matches the
    // walk looks at (20 per result wanted), so a page of 20 no longer reaches them: the cap's price (search.ts).
    expect(before[paths[0]!]!.found).toBe(11);
    // Bounded by the page and the viewer's library (a few hundred public candidates at most), not by the 2,600 matches.
    expect(after[paths[0]!]!.rows).toBeLessThan(2_600);
  });
});

// A profile's media tab (only_media) walks the account's attachments by status (media_account_status), and the public
// timeline's only_media all attachments by status (media_status), and pinned statuses are the account's pins, not its
// statuses: statuses without media or pins, however many, add no rows.
describe("only_media and pinned pages", () => {
  it("reads the same rows when the account posts 2,000 more statuses without media", async () => {
    const author = await makeUser();
    const withMedia: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await insertStatus(author, { text: `picture ${i}` });
      withMedia.push(id);
      // Two attachments on the first: one entry on the page.
      for (let k = 0; k < (i === 0 ? 2 : 1); k++)
        await env.DB.prepare("INSERT INTO media_attachments (id, account_id, status_id, type, remote_url, created_at) VALUES (?, ?, ?, 'image', ?, ?)")
          .bind(padId(nextId()), padId(author.id), padId(id), `https://files.example/${id}-${k}.png`, Date.now())
          .run();
    }
    /** n of the author's statuses without media, newer than everything so far. */
    const plain = (n: number) => statusesOf(author.id, n, "words");
    const path = `/api/v1/accounts/${author.id}/statuses?only_media=true&limit=20`;
    await plain(100);
    const before = await timed(path, viewer.token);
    await plain(2000);
    const after = await timed(path, viewer.token);
    console.log("media tab rows read, before and after 2,000 more statuses without media:", before.rows, after.rows);
    const ids = (r: { body: unknown[] }) => (r.body as { id: string }[]).map((x) => x.id);
    expect(ids(before)).toEqual([...withMedia].reverse());
    expect(ids(after)).toEqual(ids(before));
    expect(after.rt).toBe(before.rt);
    expect(after.rows).toBeLessThanOrEqual(before.rows + 2);
    // Paged by the Link header's max_id, as clients do: the older two, then nothing.
    const older = await timed(`${path.replace("limit=20", "limit=1")}&max_id=${withMedia[2]}`, viewer.token);
    expect(ids(older)).toEqual([withMedia[1]]);

    // The public timeline's only_media walks attachments the same way (media_status): anyone may ask for it.
    const pub = "/api/v1/timelines/public?only_media=true&local=true&limit=20";
    const pubBefore = await timed(pub, viewer.token);
    await plain(2000);
    const pubAfter = await timed(pub, viewer.token);
    console.log("public only_media rows read, before and after 2,000 more statuses without media:", pubBefore.rows, pubAfter.rows);
    expect(ids(pubBefore).slice(0, 3)).toEqual([...withMedia].reverse());
    expect(ids(pubAfter)).toEqual(ids(pubBefore));
    expect(pubAfter.rows).toBeLessThanOrEqual(pubBefore.rows + 2);
    const since = await timed(`${pub}&min_id=${withMedia[0]}`, viewer.token);
    expect(ids(since)).toEqual([withMedia[2], withMedia[1]]);

    // Pinned statuses (asked for on every profile a client opens): the account's pins, not its statuses.
    for (const id of [withMedia[0]!, withMedia[2]!])
      await env.DB.prepare("INSERT INTO status_pins (id, account_id, status_id, created_at) VALUES (?, ?, ?, ?)")
        .bind(padId(nextId()), padId(author.id), padId(id), Date.now())
        .run();
    const pins = `/api/v1/accounts/${author.id}/statuses?pinned=true`;
    const pinsBefore = await timed(pins, viewer.token);
    await plain(2000);
    const pinsAfter = await timed(pins, viewer.token);
    console.log("pinned statuses rows read, before and after 2,000 more statuses:", pinsBefore.rows, pinsAfter.rows);
    expect(ids(pinsBefore)).toEqual([withMedia[2], withMedia[0]]);
    expect(ids(pinsAfter)).toEqual(ids(pinsBefore));
    expect(pinsAfter.rows).toBeLessThanOrEqual(pinsBefore.rows + 2);
  });
});

// A notifications list filtered by type (the mentions tab, Ivory's types[], Tusky's exclude_types[]) walks
// notifications_type (account, type, id): one range for one type, one merged walk per type for several. The
// recipient's notifications of other types add no rows. Before, several types walked every notification newest first,
// to the very end on the last page of every filtered list (one type did so until notifications_type).
describe("notifications by type", () => {
  it("read the same rows when 2,000 favourites arrive", async () => {
    const me = await makeUser();
    const other = await makeUser();
    for (let i = 0; i < 5; i++) expect((await other.api.post("/api/v1/statuses", { status: `@${me.username} hello ${i}` })).status).toBe(200);
    expect((await other.api.post(`/api/v1/accounts/${me.id}/follow`)).status).toBe(200);
    /** n favourite notifications from `other`, newer than everything so far. */
    const favourites = async (n: number) => {
      const base = nextId();
      for (let i = 1; i < n; i++) nextId();
      await env.DB.prepare(
        `INSERT INTO notifications (id, account_id, from_account_id, type, activity_id, created_at, filtered)
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         SELECT printf('%020d', CAST(? AS INTEGER) + i * 3), ?, ?, 'favourite', printf('%020d', CAST(? AS INTEGER) + i * 3), 0, 0 FROM n`,
      )
        .bind(n, base, padId(me.id), padId(other.id), base)
        .run();
    };
    const paths = [
      "/api/v1/notifications?types[]=mention",
      "/api/v2/notifications?types[]=mention",
      "/api/v1/notifications?types[]=follow",
      "/api/v1/notifications?types[]=mention&types[]=follow&types[]=reblog",
      "/api/v2/notifications?types[]=mention&types[]=follow",
      "/api/v1/notifications?exclude_types[]=favourite",
      "/api/v2/notifications?exclude_types[]=favourite&exclude_types[]=reblog",
    ];
    const counts = ["/api/v1/notifications/unread_count?exclude_types[]=favourite", "/api/v2/notifications/unread_count?types[]=mention&types[]=follow"];
    const measure = async () => {
      const figures = await searchFigures(paths, undefined, me.token);
      for (const path of counts) {
        const r = await timed(path, me.token);
        figures[path] = { rows: r.rows, rt: r.rt, found: (r.body as unknown as { count: number }).count };
      }
      return figures;
    };
    await favourites(100);
    const before = await measure();
    expect([...paths, ...counts].map((p) => before[p]!.found)).toEqual([5, 5, 1, 6, 6, 6, 6, 6, 6]);
    await favourites(2000);
    const after = await measure();
    console.log("notifications by type, rows read before and after 2,000 favourites:", JSON.stringify({ before, after }));
    expectSameSearch([...paths, ...counts], before, after);
  });
});

// The profile directory is open to anyone: its candidates are the local accounts and a window of the newest remote
// ones (or the newest statuses' authors), sorted; sorting every discoverable account read the whole table each time.
describe("the instance's weekly activity", () => {
  it("reads the twelve weeks it counts, not every local status ever posted", async () => {
    const author = await makeUser();
    await insertStatus(author, { text: "this week" });
    /** n local public statuses posted a year ago (ids made from that time, as posting makes them). */
    const old = async (n: number, at: number) => {
      await env.DB.prepare(
        `INSERT INTO statuses (id, uri, account_id, local, content, text, visibility, language, created_at, updated_at)
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         SELECT printf('%020d', (CAST(? AS INTEGER) << 16) + i), 'http://tern.test/old/' || ? || '/' || i, ?, 1, '<p>old</p>', 'old', 'public', 'en', ?, ? FROM n`,
      )
        .bind(n, at, at, padId(author.id), at, at)
        .run();
    };
    const path = "/api/v1/instance/activity";
    const yearAgo = Date.now() - 365 * 86_400_000;
    await old(100, yearAgo);
    const before = await timed(path, viewer.token);
    await old(2000, yearAgo + 1000);
    const after = await timed(path, viewer.token);
    console.log("instance activity rows read, before and after 2,000 statuses of a year ago:", before.rows, after.rows);
    expect(after.body).toEqual(before.body);
    expect(after.rows).toBeLessThanOrEqual(before.rows + 2);
  });
});

describe("the profile directory and the peers list", () => {
  it("reads the same rows when 2,000 more remote accounts are stored, few of them discoverable", async () => {
    /** n remote accounts, one in `every` discoverable, stored after everything so far. */
    const remote = async (n: number, host: string, every = 1) => {
      const base = nextId();
      for (let i = 1; i < n; i++) nextId();
      await env.DB.prepare(
        `INSERT INTO accounts (id, username, domain, display_name, uri, discoverable, created_at, updated_at)
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         SELECT printf('%020d', CAST(? AS INTEGER) + i * 3), 'd' || i, ?, 'D ' || i, 'https://' || ? || '/users/d' || i, (i % ?) = 0, i, i FROM n`,
      )
        .bind(n, base, host, host, every)
        .run();
    };
    // The peers list too: the distinct domains, one seek each (knownDomainsCte), not every remote account's domain.
    const paths = [
      "/api/v1/directory?order=new&limit=40",
      "/api/v1/directory?order=active&limit=40",
      "/api/v1/directory?local=true&limit=40",
      "/api/v1/instance/peers",
    ];
    const measure = () => searchFigures(paths);
    await remote(2500, "dir1.example", 50);
    // A discoverable remote account that posted lately: the most-active order finds it among the newest statuses' authors.
    const poster = await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM accounts WHERE domain = 'dir1.example' AND discoverable = 1 LIMIT 1").first<{
      id: string;
    }>();
    await env.DB.prepare("UPDATE accounts SET last_status_at = ? WHERE id = ?").bind(Date.now(), poster!.id).run();
    await statusesOf(poster!.id, 1, "lately");
    const activeIds = async () => ((await timed(paths[1]!, viewer.token)).body as { id: string }[]).map((a) => a.id);
    expect(await activeIds()).toContain(String(BigInt(poster!.id)));
    const before = await measure();
    // Not discoverable, but one in fifty (what a walk of every account would have to read past).
    await remote(2000, "dir2.example", 50);
    const after = await measure();
    console.log("directory rows read, before and after 2,000 more remote accounts:", JSON.stringify({ before, after }));
    for (const path of paths) {
      expect(after[path]!.rt, path).toBe(before[path]!.rt);
      expect(after[path]!.rows, path).toBeLessThanOrEqual(before[path]!.rows + 10);
    }
    expect(before[paths[0]!]!.found).toBe(40);
    expect(after[paths[1]!]!.found).toBe(before[paths[1]!]!.found);
    expect(await activeIds()).toContain(String(BigInt(poster!.id)));
  });
});

// Hashtag search by prefix is a range of the name index (names are stored normalised), its candidates capped: other
// tags add no rows, and tags that match cost the cap. A case-insensitive LIKE read every tag.
describe("hashtag search rows read", () => {
  it("reads the same rows when 2,000 other tags are stored, and a capped number when 2,000 match", async () => {
    const tagsLike = async (n: number, prefix: string) => {
      const base = nextId();
      for (let i = 1; i < n; i++) nextId();
      await env.DB.prepare(
        `INSERT INTO tags (id, name, display_name, usable, created_at)
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         SELECT printf('%020d', CAST(? AS INTEGER) + i * 3), ? || i, ? || i, 1, 0 FROM n`,
      )
        .bind(n, base, prefix, prefix)
        .run();
    };
    await tagsLike(3, "heron");
    const paths = ["/api/v2/search?type=hashtags&q=heron", "/api/v2/search?q=%23Heron&limit=5"];
    const before = await searchFigures(paths, "hashtags");
    expect(before[paths[0]!]!.found).toBe(3);
    await tagsLike(2000, "other");
    const after = await searchFigures(paths, "hashtags");
    console.log("hashtag search rows read, before and after 2,000 other tags:", JSON.stringify({ before, after }));
    expectSameSearch(paths, before, after);
    await tagsLike(2000, "heronry");
    const many = await searchFigures(paths, "hashtags");
    console.log("hashtag search rows read with 2,000 matching tags:", JSON.stringify(many));
    expect(many[paths[0]!]!.found).toBe(20);
    expect(many[paths[0]!]!.rows).toBeLessThan(2_000);
  });
});

// A search made only of operators (a hashtag, has:, is:, from:) has no words to walk the FTS5 index by: its public
// candidates are a capped walk of the author's statuses, the hashtag's, or the newest statuses (publicWalk in
// src/queries/statuses/search.ts). It read every status newest first before, to the end when few or none matched.
describe("status search with only operators", () => {
  it("reads the same rows when the database grows with statuses that do not match", async () => {
    const me = await makeUser();
    const author = await makeUser();
    await env.DB.prepare("UPDATE accounts SET indexable = 1 WHERE id = ?").bind(padId(author.id)).run();
    const posted = async (u: TestUser, body: Record<string, unknown>) => expect((await u.api.post("/api/v1/statuses", body)).status).toBe(200);
    await posted(me, { status: "mine #kiwi" });
    await posted(me, { status: "a poll of mine", poll: { options: ["a", "b"], expires_in: 3600 } });
    await posted(author, { status: "theirs #kiwi" });
    await posted(author, { status: "theirs, plain" });
    const stranger = await makeUser();
    /** n public statuses of the stranger (not indexable), newer than everything so far, without tags, polls or media. */
    const plain = (n: number) => statusesOf(stranger.id, n, "plain");
    const paths = [
      "/api/v2/search?type=statuses&q=%23kiwi&limit=20",
      "/api/v2/search?type=statuses&q=has:poll&limit=5",
      `/api/v2/search?type=statuses&q=from:${author.username}&limit=5`,
      "/api/v2/search?type=statuses&q=is:sensitive&limit=5",
      "/api/v2/search?type=statuses&q=language:en%20-is:reply&limit=5",
    ];
    const asMe = () => searchFigures(paths, "statuses", me.token);
    // 500 first, so that the walk of the newest statuses is full whatever comes after.
    await plain(500);
    const before = await asMe();
    // Both #kiwi statuses (the viewer's own; the indexable author's, through the hashtag's walk), the viewer's poll, the
    // author's two (through the author's walk), nothing sensitive.
    expect(paths.slice(0, 4).map((p) => before[p]!.found)).toEqual([2, 1, 2, 0]);
    await plain(2000);
    const after = await asMe();
    console.log("operator-only status search rows read, before and after 2,000 more statuses:", JSON.stringify({ before, after }));
    for (const path of paths) {
      expect(after[path]!.rt, path).toBe(before[path]!.rt);
      expect(after[path]!.rows, path).toBeLessThanOrEqual(before[path]!.rows + 2);
    }
    expect(paths.map((p) => after[p]!.found)).toEqual(paths.map((p) => before[p]!.found));
  });
});

// A link pasted into search names a status by its uri or its page URL: both are index lookups (statuses_uri,
// statuses_url), so more statuses add no rows (the url lookup scanned every status before migrations/0038).
describe("status search by link", () => {
  it("reads the same rows when the database grows", async () => {
    const remote = padId(nextId());
    await env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, url, display_name, note, created_at, updated_at) VALUES (?, 'r', 'far.example', 'https://far.example/users/r', 'https://far.example/@r', '', '', 0, 0)",
    )
      .bind(remote)
      .run();
    /** n remote public statuses of r from `from`, each with a page URL other than its uri. */
    const remoteStatuses = async (from: number, n: number) => {
      const base = nextId();
      for (let i = 1; i < n; i++) nextId();
      await env.DB.prepare(
        `INSERT INTO statuses (id, uri, url, account_id, local, content, text, visibility, language, created_at, updated_at)
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         SELECT printf('%020d', CAST(? AS INTEGER) + i * 3), 'https://far.example/users/r/statuses/' || (CAST(? AS INTEGER) + i), 'https://far.example/@r/' || (CAST(? AS INTEGER) + i),
           ?, 0, '<p>far</p>', 'far', 'public', 'en', 0, 0 FROM n`,
      )
        .bind(n, base, from, from, remote)
        .run();
    };
    await remoteStatuses(1, 10);
    // Found by page URL, by uri, and a link to nothing (which a scan reads to the end).
    const paths = [
      "/api/v2/search?type=statuses&q=https://far.example/@r/5",
      "/api/v2/search?q=https://far.example/users/r/statuses/7",
      "/api/v2/search?type=statuses&q=https://far.example/@r/999999",
    ];
    const before = await searchFigures(paths, "statuses");
    expect(paths.map((p) => before[p]!.found)).toEqual([1, 1, 0]);
    await remoteStatuses(100, 2000);
    const after = await searchFigures(paths, "statuses");
    console.log("status search by link rows read, before and after 2,000 more statuses:", JSON.stringify({ before, after }));
    expectSameSearch(paths, before, after);
  });
});

// Issue 12 point 2: account search reads candidates from the username index range and the display-name FTS5 index,
// each capped (src/queries/statuses/search.ts), never every account: 2,000 more accounts that do not match add no rows, and
// 2,000 that do cost the cap, not the matches.
describe("account search rows read", () => {
  /** n remote accounts (as federation stores them; the triggers index their names), usernames `${prefix}N`. */
  const accountsLike = async (n: number, prefix: string, displayName: string) => {
    const base = nextId();
    for (let i = 1; i < n; i++) nextId();
    await env.DB.prepare(
      `INSERT INTO accounts (id, username, domain, display_name, uri, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
       SELECT printf('%020d', CAST(? AS INTEGER) + i * 3), ? || i, 'many.example', ? || ' ' || i,
         'https://many.example/users/' || ? || i, 0, 0 FROM n`,
    )
      .bind(n, base, prefix, displayName, prefix)
      .run();
  };

  it("reads the same rows when 2,000 accounts that do not match are added, and a capped number when 2,000 do", async () => {
    const fox = await makeUser("vixen");
    await env.DB.prepare("UPDATE accounts SET display_name = 'Arctic Vixen' WHERE id = ?").bind(padId(fox.id)).run();
    const named = await makeUser("plainname");
    await env.DB.prepare("UPDATE accounts SET display_name = 'The Vixen Too' WHERE id = ?").bind(padId(named.id)).run();
    await follow(viewer, named);
    const paths = ["/api/v2/search?q=vix&type=accounts&limit=20", "/api/v2/search?q=vix&limit=20", "/api/v2/search?q=vix&type=accounts&following=true"];
    const measure = () => searchFigures(paths, "accounts");
    const before = await measure();
    expect(before[paths[0]!]!.found).toBe(2);
    expect(before[paths[2]!]!.found).toBe(1);
    await accountsLike(2000, "other", "Someone Else");
    const after = await measure();
    console.log("account search rows read, before and after 2,000 more accounts:", JSON.stringify({ before, after }));
    expectSameSearch(paths, before, after);
    // 2,000 matches, by username and by display name: the page reads the capped candidates, not the matches.
    await accountsLike(2000, "vixen_", "Vixen Fan");
    const many = await measure();
    console.log("account search rows read with 2,000 matching accounts:", JSON.stringify(many));
    expect(many[paths[0]!]!.found).toBe(20);
    expect(many[paths[0]!]!.rows).toBeLessThan(2_000);
    // The viewer's follows did not change: following=true reads the same.
    expect(many[paths[2]!]!.rows).toBeLessThanOrEqual(before[paths[2]!]!.rows + 2);
  });
});
