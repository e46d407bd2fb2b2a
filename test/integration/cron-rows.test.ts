// Rows read by the cron's 5th-minute housekeeping (issue 12: D1 bills rows read; bench/README.md, "What a
// single-user instance costs"). A run reads rows in proportion to what changed and to what trends, never to the
// statuses, favourites, tags and cards the database holds from before the trend windows. Counted with the D1 counter
// (src/lib/limits/d1-counter.ts, `rows`), per task and for the whole run, on a database shaped like bench/day.mjs's day: a few
// thousand statuses over two days, boosts, favourites, tags and cards.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { housekeepingTasks, hourlyTasks, runScheduled } from "../../src/background/cron";
import { createDb } from "../../src/db/client";
import { Effects } from "../../src/effects/collector";
import type { Env } from "../../src/env";
import { countingD1, type D1Count } from "../../src/lib/limits/d1-counter";
import { padId, snowflake } from "../../src/lib/text/ids";
import { seenBucket } from "../../src/federation/inbox/inbox-seen";
import { refreshLinkTrends, refreshStatusTrends, refreshTagTrends } from "../../src/trends/refresh";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ACCOUNTS = 200;
const TAGS = 20;
const CARDS = 30;

const id = (at: number) => padId(snowflake(at));

async function json(sqlText: string, rows: unknown[][]) {
  for (let i = 0; i < rows.length; i += 500)
    await env.DB.prepare(sqlText)
      .bind(JSON.stringify(rows.slice(i, i + 500)))
      .run();
}
const col = (n: number) => `json_extract(value, '$[${n}]')`;

const accounts: string[] = [];
const tags: string[] = [];

/** Remote accounts, tags, and `cards` article cards fetched at `fetchedAt` (returned by id). */
async function base() {
  const now = Date.now();
  const rows = Array.from({ length: ACCOUNTS }, (_, i) => {
    const a = id(now - 60 * DAY + i);
    accounts.push(a);
    return [a, `r${i}`, `https://remote.example/users/r${i}`];
  });
  await json(
    `INSERT INTO accounts (id, username, domain, uri, discoverable, created_at, updated_at)
     SELECT ${col(0)}, ${col(1)}, 'remote.example', ${col(2)}, 1, 1, 1 FROM json_each(?)`,
    rows,
  );
  const t = Array.from({ length: TAGS }, (_, i) => {
    const x = id(now - 60 * DAY + 1000 + i);
    tags.push(x);
    return [x, `tag${i}`];
  });
  await json(`INSERT INTO tags (id, name, display_name, usable, trendable, created_at) SELECT ${col(0)}, ${col(1)}, ${col(1)}, 1, 1, 1 FROM json_each(?)`, t);
}

async function cards(n: number, fetchedAt: number, label: string): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => [id(fetchedAt + i), `https://news.example/${label}/${i}`]);
  await json(
    `INSERT INTO preview_cards (id, url, title, description, type, link_type, provider_name, image, language, created_at, fetched_at)
     SELECT ${col(0)}, ${col(1)}, 'A story', 'What happened', 'link', 'article', 'News', 'https://news.example/i.jpg', 'en', ${fetchedAt}, ${fetchedAt}
     FROM json_each(?)`,
    rows,
  );
  return rows.map((r) => r[0] as string);
}

/**
 * `n` public originals spread over [from, to), every 10th with a tag and every 15th with one of `cardIds`; a boost for
 * every 5th, and favourites for every 4th, each by other accounts shortly after.
 */
async function statusesBetween(from: number, to: number, n: number, cardIds: string[]) {
  const st: unknown[][] = [];
  const stTags: unknown[][] = [];
  const stCards: unknown[][] = [];
  const favs: unknown[][] = [];
  const step = (to - from) / n;
  for (let i = 0; i < n; i++) {
    const at = Math.floor(from + i * step);
    const s = id(at);
    const author = accounts[i % ACCOUNTS]!;
    st.push([s, author, null, at, `https://remote.example/s/${s}`]);
    if (i % 10 === 0) stTags.push([s, tags[(i / 10) % TAGS]!]);
    if (i % 15 === 0 && cardIds.length) stCards.push([s, cardIds[(i / 15) % cardIds.length]!]);
    const later = Math.min(at + Math.floor(step / 2), to - 1);
    if (i % 5 === 0) {
      const b = id(later);
      st.push([b, accounts[(i + 7) % ACCOUNTS]!, s, later, `https://remote.example/s/${b}`]);
    }
    if (i % 4 === 0) for (let k = 1; k <= 2; k++) favs.push([id(later), accounts[(i + k * 11) % ACCOUNTS]!, s, later]);
  }
  st.sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  await json(
    `INSERT INTO statuses (id, uri, account_id, local, reblog_of_id, content, visibility, language, created_at, updated_at)
     SELECT ${col(0)}, ${col(4)}, ${col(1)}, 0, ${col(2)}, '<p>x</p>', 'public', 'en', ${col(3)}, ${col(3)} FROM json_each(?)`,
    st,
  );
  await json(`INSERT INTO status_tags (status_id, tag_id) SELECT ${col(0)}, ${col(1)} FROM json_each(?)`, stTags);
  await json(
    `INSERT INTO status_preview_cards (status_id, preview_card_id, url) SELECT ${col(0)}, ${col(1)}, pc.url FROM json_each(?) JOIN preview_cards pc ON pc.id = ${col(1)}`,
    stCards,
  );
  await json(
    `INSERT OR IGNORE INTO favourites (id, account_id, status_id, created_at) SELECT ${col(0)}, ${col(1)}, ${col(2)}, ${col(3)} FROM json_each(?)`,
    favs,
  );
}

/** The cron's own bookkeeping rows that old data leaves behind: seen activities and delivered ones (kept for days). */
async function federationRows(from: number, to: number, n: number) {
  const step = (to - from) / n;
  const seen = Array.from({ length: n }, (_, i) => [`https://remote.example/a/${from}-${i}`, seenBucket(Math.floor(from + i * step))]);
  await json(`INSERT OR IGNORE INTO inbox_seen (activity_id, day) SELECT ${col(0)}, ${col(1)} FROM json_each(?)`, seen);
}

/** Rows read by each housekeeping task (and the whole 5th-minute run) at `at`, without changing the database. */
async function measure(at: number) {
  const per: Record<string, number> = {};
  // Each task once, alone; then the whole run (the every-minute task included) on the state the tasks left.
  const c: D1Count = { n: 0 };
  const counted = countingD1(env.DB, c, { rows: true });
  const tasks = housekeepingTasks({ ...env, DB: counted } as Env, createDb(counted), new Effects("http://tern.test"), at);
  for (const [name, task] of tasks) {
    const before = c.r ?? 0;
    await task();
    per[name] = (c.r ?? 0) - before;
  }
  // The trends refresh by kind.
  const db = createDb(counted);
  for (const [name, fn] of [
    ["  tags", refreshTagTrends],
    ["  statuses", refreshStatusTrends],
    ["  links", refreshLinkTrends],
  ] as const) {
    const before = c.r ?? 0;
    await fn(db, at);
    per[`refresh trends:${name.trim()}`] = (c.r ?? 0) - before;
  }
  const all: D1Count = { n: 0 };
  await runScheduled({ ...env, DB: countingD1(env.DB, all, { rows: true }) } as Env, at + 5 * 60_000, { housekeeping: true, hourly: false });
  per.total = all.r ?? 0;
  // The hourly task, apart.
  const before = c.r ?? 0;
  // The card pass only: the review notice (even hours) reads the trend rows awaiting review, whatever the hour here.
  for (const [name, task] of hourlyTasks(env, createDb(counted), at, new Effects("http://tern.test"))) if (name === "prune unused preview cards") await task();
  hourly = (c.r ?? 0) - before;
  return per;
}

let now = 0;
let recent: Record<string, number> = {};
let hourly = 0;

beforeAll(async () => {
  now = Date.now();
  await base();
  const fresh = await cards(CARDS, now - 3 * DAY, "fresh");
  // The day's shape: ~3,000 originals over the two trend days, 600 boosts, 1,500 favourites, tags and cards.
  await statusesBetween(now - 2 * DAY, now - 60_000, 3000, fresh);
  await federationRows(now - 2 * DAY, now, 3000);
  recent = await measure(now);
  console.log("cron rows read per task (two days of statuses):", JSON.stringify(recent, null, 1), "hourly:", hourly);
});

describe("cron housekeeping rows read", () => {
  it("reads rows in proportion to the trend windows, not to the table", async () => {
    // The database gains a month of older activity: statuses, boosts, favourites, tags and cards older than every
    // window (cards fetched long ago, still linked), and seen activities still inside their 14 days.
    const old = await cards(300, now - 40 * DAY, "old");
    await statusesBetween(now - 40 * DAY, now - 8 * DAY, 12_000, old);
    await federationRows(now - 13 * DAY, now - 3 * DAY, 6000);
    const after = await measure(now + 10 * 60_000);
    console.log("cron rows read per task (plus 12,000 older statuses):", JSON.stringify(after, null, 1), "hourly:", hourly);
    // The 5th-minute run reads what it read before the older rows came (the clock moved 10 minutes: a little slack).
    for (const [task, rows] of Object.entries(after)) expect.soft(rows, task).toBeLessThanOrEqual(Math.ceil((recent[task] ?? 0) * 1.05) + 20);
    // On this day the trends refresh reads a fraction of what scanning the two days of statuses did (21,047 rows).
    expect(after.total).toBeLessThan(8000);
    // Something was counted: with no rows measured every bound above would hold.
    expect(recent.total).toBeGreaterThan(0);
    expect(after.total).toBeGreaterThan(0);
    // The hourly card pass reads one page of cards (200) and their link lookups, however many old cards are linked.
    expect(hourly).toBeLessThanOrEqual(3 * 200 + 10);
  });

  it("prunes unlinked cards past their two weeks a page an hour, and keeps linked and recent ones", async () => {
    const at = Date.now();
    const stale = await cards(450, at - 20 * DAY, "stale");
    const young = await cards(5, at - DAY, "young");
    // Every 3rd stale card stays linked to a status.
    const s = id(at - 3 * DAY);
    await env.DB.prepare(
      "INSERT INTO statuses (id, uri, account_id, local, content, visibility, created_at, updated_at) VALUES (?1, ?2, ?3, 0, '<p>x</p>', 'public', ?4, ?4)",
    )
      .bind(s, `https://remote.example/s/${s}`, accounts[0]!, at - 3 * DAY)
      .run();
    const linked = stale.filter((_, i) => i % 3 === 0);
    await json(
      `INSERT INTO status_preview_cards (status_id, preview_card_id, url) SELECT printf('%020s', ${col(0)}), ${col(1)}, 'u' FROM json_each(?)`,
      linked.map((c, i) => [(BigInt(s) + BigInt(i)).toString(), c]),
    );
    const left = async () => {
      const r = await env.DB.prepare("SELECT id FROM preview_cards").all<{ id: string }>();
      return new Set(r.results.map((x) => x.id));
    };
    const start = (await left()).size;
    // One run looks at 200 cards at most; the pass over every card takes a few runs and then starts over.
    const [[, prune]] = hourlyTasks(env, createDb(env.DB), at, new Effects("http://tern.test"));
    await prune();
    expect(start - (await left()).size).toBeLessThanOrEqual(200);
    for (let k = 0; k < 8; k++) await prune();
    const now2 = await left();
    for (const c of stale) expect(now2.has(c)).toBe(linked.includes(c));
    for (const c of young) expect(now2.has(c)).toBe(true);
  });
});
