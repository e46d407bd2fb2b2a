// The dashboard data (Mastodon's Admin::Metrics::Measure, ::Dimension and ::Retention), computed from D1 and rendered
// by src/entities/admin/admin-measure.ts, admin-dimension.ts and admin-cohort.ts. Every key
// asked for adds its statements to ONE batch; each statement is a range scan over an index for start_at..end_at:
// snowflake ids (statuses, users, reports, favourites, follows, media are time-ordered) or an indexed timestamp. The
// span is capped at MAX_DAYS (a dimension asked for without a start or an end reads all time, or up to today; see
// readSpan). Unknown keys are ignored, as Mastodon ignores them; a known key that needs parameters (tag_accounts[id],
// instance_accounts[domain], ...) without them is a 400, as Rails' params.require answers.
//
// Where Mastodon counts something Tern does not record, the nearest stored fact is counted instead:
// - active_users: Mastodon counts, per day, users who used the app that day (Redis). Tern keeps only each user's
//   latest activity (users.last_active_at, else current_sign_in_at), so a user counts on the day of their latest
//   activity: the total is right for a range ending today, the per-day series undercounts earlier days.
// - interactions: Mastodon counts favourites, boosts and replies received by local statuses as they happen; Tern
//   counts the favourite, boost and reply rows that exist (undone ones are not counted).
// - sources: users have no "created by application"; the application of a user's first token is used ("web" when
//   the user has none).
// - space_usage: D1's database size (as the last statement reports it) and the bytes of stored media.
import { sql, type SQL } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { runBatch } from "../../db/client";
import { renderAdminCohort, type MastodonAdminCohort } from "../../entities/admin/admin-cohort";
import { type DimensionItem, type MastodonAdminDimension, renderAdminDimension } from "../../entities/admin/admin-dimension";
import { type MastodonAdminMeasure, renderAdminMeasure } from "../../entities/admin/admin-measure";
import { SOFTWARE_VERSION, TERN_VERSION } from "../../env";
import { badRequest, validationFailed } from "../../lib/http/errors";
import { padId, parseId, snowflakeFloor } from "../../lib/text/ids";

const DAY = 86_400_000;
export const MAX_DAYS = 366;
const fl = (ms: number) => padId(snowflakeFloor(ms));
/** Written into the SQL, not bound: D1 binds JS numbers as REAL, which would make the division fractional. */
const D = sql.raw(String(DAY));

export interface Span {
  /** First day (UTC midnight, ms) and the end of the last day (exclusive). */
  start: number;
  end: number;
}

/** Days a measure or a retention covers when start_at is not given (the dashboard's 30 days). */
export const DEFAULT_DAYS = 30;

/**
 * start_at/end_at as Mastodon reads them (dates; the time of day is dropped), the end day included. Either may be
 * left out (Mastodon's API documents neither as required): for dimensions (`open`) the range is then open on that
 * side, as Mastodon's `(start_at..end_at)` is (all time, or up to today), and no length cap applies; for measures and
 * retention, whose series have one entry per day or month, a missing end is today and a missing start is
 * DEFAULT_DAYS before the end.
 */
export function readSpan(startAt: unknown, endAt: unknown, { open = false, now = Date.now() } = {}): Span {
  const given = (v: unknown) => v !== undefined && v !== null && v !== "";
  const day = (v: unknown, name: string) => {
    const t = typeof v === "string" && v.length <= 40 ? Date.parse(v) : Number.NaN;
    if (!Number.isFinite(t)) throw validationFailed(`${name} is not a valid date`);
    return Math.floor(t / DAY) * DAY;
  };
  const end = (given(endAt) ? day(endAt, "end_at") : Math.floor(now / DAY) * DAY) + DAY;
  const start = given(startAt) ? day(startAt, "start_at") : open ? 0 : end - DEFAULT_DAYS * DAY;
  if (end <= start) throw validationFailed("end_at must be after start_at");
  if (!(open && (!given(startAt) || !given(endAt))) && (end - start) / DAY > MAX_DAYS) throw validationFailed(`the period is longer than ${MAX_DAYS} days`);
  return { start, end };
}

const days = (s: Span) => Array.from({ length: (s.end - s.start) / DAY }, (_, i) => s.start + i * DAY);

type Row = Record<string, unknown>;
type Params = Record<string, unknown>;

/** A key's statements, and how its entity (src/entities/admin/admin-measure.ts, admin-dimension.ts) is rendered from their rows. */
interface Part<T> {
  stmts: Statement[];
  build(results: Row[][]): T;
}

/** Runs the parts' statements as one batch and builds each part from its own results. */
async function runParts<T>(db: DB, parts: Part<T>[]): Promise<T[]> {
  const all = parts.flatMap((p) => p.stmts);
  const res = (await runBatch(db, all)) as Row[][];
  let i = 0;
  return parts.map((p) => {
    const mine = res.slice(i, i + p.stmts.length);
    i += p.stmts.length;
    return p.build(mine);
  });
}

function paramsOf(all: Params, key: string): Params {
  const v = all[key];
  if (!v || typeof v !== "object" || Array.isArray(v)) throw badRequest(`param is missing or the value is empty: ${key}`);
  return v as Params;
}

function tagIdOf(all: Params, key: string): string {
  return parseId(paramsOf(all, key).id) ?? "0";
}

/** Accounts of a domain (and its subdomains when asked), as an SQL condition on `col`. */
function domainCond(all: Params, key: string, col: SQL): SQL {
  const p = paramsOf(all, key);
  const domain = typeof p.domain === "string" ? p.domain.trim().toLowerCase().slice(0, 253) : "";
  if (!domain) throw badRequest(`param is missing or the value is empty: ${key}[domain]`);
  const sub = p.include_subdomains === true || p.include_subdomains === "true" || p.include_subdomains === "1";
  const dotted = `%.${domain.replace(/[\\%_]/g, (c) => `\\${c}`)}`;
  return sub ? sql`(${col} = ${domain} OR ${col} LIKE ${dotted} ESCAPE '\\')` : sql`${col} = ${domain}`;
}

// ---- measures ----

/** Per-day counts: `perDay` must select `d` (a UTC day number) and `v` over the range it is given. */
type PerDay = (from: number, to: number) => SQL;

function seriesPart(
  db: DB,
  key: string,
  perDay: PerDay,
  span: Span,
  opts: { unit?: string; total?: SQL; distinct?: (from: number, to: number) => SQL } = {},
): Part<MastodonAdminMeasure> {
  const len = span.end - span.start;
  const allTime = !!opts.total;
  const from = allTime ? span.start : span.start - len;
  const stmts: Statement[] = [db.all(perDay(from, span.end))];
  if (opts.total) stmts.push(db.all(opts.total));
  if (opts.distinct) stmts.push(db.all(opts.distinct(span.start, span.end)), db.all(opts.distinct(span.start - len, span.start)));
  return {
    stmts,
    build([rows = [], t1 = [], t2 = []]) {
      const byDay = new Map(rows.map((r) => [Number(r.d), Number(r.v) || 0]));
      const sum = (a: number, b: number) => {
        let n = 0;
        for (const [d, v] of byDay) if (d * DAY >= a && d * DAY < b) n += v;
        return n;
      };
      const total = opts.total ? Number(t1[0]?.v ?? 0) : opts.distinct ? Number(t1[0]?.v ?? 0) : sum(span.start, span.end);
      return renderAdminMeasure({
        key,
        unit: opts.unit ?? null,
        total,
        previousTotal: allTime ? null : opts.distinct ? Number(t2[0]?.v ?? 0) : sum(span.start - len, span.start),
        days: days(span).map((d) => ({ day: d, value: byDay.get(d / DAY) ?? 0 })),
      });
    },
  };
}

/**
 * An instance_* measure counting rows of one table for the accounts of a domain (`a`): all-time total, per day by the
 * rows' snowflake ids (index-backed ranges). `from` and `alias` are fixed strings written here, never input.
 */
function instanceRows(key: string, from: string, alias: string) {
  return (db: DB, span: Span, p: Params): Part<MastodonAdminMeasure> => {
    const rows = sql`FROM ${sql.raw(from)} WHERE ${domainCond(p, key, sql.raw("a.domain"))}`;
    const t = sql.raw(alias);
    return seriesPart(
      db,
      key,
      (x, y) => sql`SELECT ${t}.created_at / ${D} AS d, count(*) AS v ${rows} AND ${t}.id >= ${fl(x)} AND ${t}.id < ${fl(y)} GROUP BY d`,
      span,
      { total: sql`SELECT count(*) AS v ${rows}` },
    );
  };
}

const MEASURES: Record<string, (db: DB, span: Span, p: Params) => Part<MastodonAdminMeasure>> = {
  active_users: (db, span) =>
    seriesPart(
      db,
      "active_users",
      (a, b) => sql`SELECT at / ${D} AS d, count(*) AS v FROM (
        SELECT coalesce(last_active_at, current_sign_in_at) AS at FROM users
        WHERE last_active_at >= ${a} AND last_active_at < ${b}
        UNION ALL SELECT current_sign_in_at FROM users WHERE last_active_at IS NULL AND current_sign_in_at >= ${a} AND current_sign_in_at < ${b}
      ) GROUP BY d`,
      span,
    ),
  new_users: (db, span) =>
    seriesPart(db, "new_users", (a, b) => sql`SELECT created_at / ${D} AS d, count(*) AS v FROM users WHERE id >= ${fl(a)} AND id < ${fl(b)} GROUP BY d`, span),
  interactions: (db, span) =>
    seriesPart(
      db,
      "interactions",
      (a, b) => sql`SELECT d, sum(v) AS v FROM (
        SELECT f.created_at / ${D} AS d, count(*) AS v FROM favourites f JOIN statuses s ON s.id = f.status_id
          WHERE f.id >= ${fl(a)} AND f.id < ${fl(b)} AND s.local = 1 GROUP BY d
        UNION ALL SELECT r.created_at / ${D}, count(*) FROM statuses r JOIN statuses s ON s.id = coalesce(r.reblog_of_id, r.in_reply_to_id)
          WHERE r.id >= ${fl(a)} AND r.id < ${fl(b)} AND s.local = 1 AND r.account_id <> s.account_id GROUP BY 1
      ) GROUP BY d`,
      span,
    ),
  opened_reports: (db, span) =>
    seriesPart(
      db,
      "opened_reports",
      (a, b) => sql`SELECT created_at / ${D} AS d, count(*) AS v FROM reports WHERE id >= ${fl(a)} AND id < ${fl(b)} GROUP BY d`,
      span,
    ),
  resolved_reports: (db, span) =>
    seriesPart(
      db,
      "resolved_reports",
      (a, b) => sql`SELECT action_taken_at / ${D} AS d, count(*) AS v FROM reports WHERE action_taken_at >= ${a} AND action_taken_at < ${b} GROUP BY d`,
      span,
    ),
  tag_accounts: (db, span, p) => {
    const tag = padId(tagIdOf(p, "tag_accounts"));
    const base = (a: number, b: number) => sql`FROM status_tags st JOIN statuses s ON s.id = st.status_id
      WHERE st.tag_id = ${tag} AND st.status_id >= ${fl(a)} AND st.status_id < ${fl(b)}`;
    return seriesPart(db, "tag_accounts", (a, b) => sql`SELECT s.created_at / ${D} AS d, count(DISTINCT s.account_id) AS v ${base(a, b)} GROUP BY d`, span, {
      distinct: (a, b) => sql`SELECT count(DISTINCT s.account_id) AS v ${base(a, b)}`,
    });
  },
  tag_uses: (db, span, p) => {
    const tag = padId(tagIdOf(p, "tag_uses"));
    return seriesPart(
      db,
      "tag_uses",
      (a, b) => sql`SELECT s.created_at / ${D} AS d, count(*) AS v FROM status_tags st JOIN statuses s ON s.id = st.status_id
        WHERE st.tag_id = ${tag} AND st.status_id >= ${fl(a)} AND st.status_id < ${fl(b)} GROUP BY d`,
      span,
    );
  },
  tag_servers: (db, span, p) => {
    const tag = padId(tagIdOf(p, "tag_servers"));
    const base = (a: number, b: number) => sql`FROM status_tags st JOIN statuses s ON s.id = st.status_id JOIN accounts a ON a.id = s.account_id
      WHERE st.tag_id = ${tag} AND st.status_id >= ${fl(a)} AND st.status_id < ${fl(b)}`;
    return seriesPart(
      db,
      "tag_servers",
      (a, b) => sql`SELECT s.created_at / ${D} AS d, count(DISTINCT coalesce(a.domain, '')) AS v ${base(a, b)} GROUP BY d`,
      span,
      {
        distinct: (a, b) => sql`SELECT count(DISTINCT coalesce(a.domain, '')) AS v ${base(a, b)}`,
      },
    );
  },
  // The instance_* measures: totals of all time (Mastodon's total_in_time_range? false), no previous total.
  instance_accounts: (db, span, p) => {
    const dom = domainCond(p, "instance_accounts", sql.raw("domain"));
    return seriesPart(
      db,
      "instance_accounts",
      (a, b) => sql`SELECT created_at / ${D} AS d, count(*) AS v FROM accounts WHERE ${dom} AND created_at >= ${a} AND created_at < ${b} GROUP BY d`,
      span,
      { total: sql`SELECT count(*) AS v FROM accounts WHERE ${dom}` },
    );
  },
  instance_media_attachments: (db, span, p) => {
    const dom = domainCond(p, "instance_media_attachments", sql.raw("a.domain"));
    const from = sql`FROM media_attachments m JOIN accounts a ON a.id = m.account_id WHERE ${dom}`;
    return seriesPart(
      db,
      "instance_media_attachments",
      (x, y) => sql`SELECT m.created_at / ${D} AS d, coalesce(sum(m.file_size), 0) AS v ${from} AND m.id >= ${fl(x)} AND m.id < ${fl(y)} GROUP BY d`,
      span,
      { unit: "bytes", total: sql`SELECT coalesce(sum(m.file_size), 0) AS v ${from}` },
    );
  },
  instance_reports: instanceRows("instance_reports", "reports r JOIN accounts a ON a.id = r.target_account_id", "r"),
  instance_statuses: instanceRows("instance_statuses", "accounts a JOIN statuses s ON s.account_id = a.id", "s"),
  // Follows by the instance's accounts (of local accounts).
  instance_follows: instanceRows("instance_follows", "accounts a JOIN follows f ON f.account_id = a.id", "f"),
  // Follows of the instance's accounts (by local accounts).
  instance_followers: instanceRows("instance_followers", "accounts a JOIN follows f ON f.target_account_id = a.id", "f"),
};

const knownKeys = (keys: string[], table: Record<string, unknown>) => [...new Set(keys)].filter((k) => Object.hasOwn(table, k));

export function adminMeasures(db: DB, keys: string[], span: Span, params: Params) {
  return runParts(
    db,
    knownKeys(keys, MEASURES).map((k) => MEASURES[k]!(db, span, params)),
  );
}

// ---- dimensions ----

function languageName(code: string): string {
  try {
    return new Intl.DisplayNames(["en"], { type: "language" }).of(code) ?? code;
  } catch {
    return code;
  }
}

/** What a one-query dimension's SQL reads: the span, the row limit, this server's domain, and its own params. */
interface DimArgs {
  s: Span;
  limit: number;
  local: string;
  /** The dimension's `id` param, a tag id. */
  tag: () => string;
  /** The dimension's `domain` (and `include_subdomains`) params, as a condition on accounts `a`. */
  dom: () => SQL;
}

/** A dimension that is one query of {k, v} rows, and how to name a k for people (k itself by default). */
type OneQuery = [rows: (x: DimArgs) => SQL, human?: (k: string) => string];

const ONE_QUERY: Record<string, OneQuery> = {
  // Interface languages of users active in the period (Mastodon: users.locale by current_sign_in_at).
  languages: [
    ({ s, limit }) => sql`SELECT locale AS k, count(*) AS v FROM users WHERE current_sign_in_at >= ${s.start} AND current_sign_in_at < ${s.end}
        AND locale IS NOT NULL GROUP BY locale ORDER BY v DESC LIMIT ${limit}`,
    languageName,
  ],
  servers: [
    ({ s, limit, local }) => sql`SELECT coalesce(a.domain, ${local}) AS k, count(*) AS v FROM statuses st JOIN accounts a ON a.id = st.account_id
        WHERE st.id >= ${fl(s.start)} AND st.id < ${fl(s.end)} GROUP BY a.domain ORDER BY v DESC LIMIT ${limit}`,
  ],
  tag_servers: [
    ({ s, limit, local, tag }) => sql`SELECT coalesce(a.domain, ${local}) AS k, count(*) AS v FROM status_tags st JOIN statuses s ON s.id = st.status_id
        JOIN accounts a ON a.id = s.account_id WHERE st.tag_id = ${tag()} AND st.status_id >= ${fl(s.start)} AND st.status_id < ${fl(s.end)}
        GROUP BY a.domain ORDER BY v DESC LIMIT ${limit}`,
  ],
  tag_languages: [
    ({ s, limit, tag }) => sql`SELECT s.language AS k, count(*) AS v FROM status_tags st JOIN statuses s ON s.id = st.status_id
        WHERE st.tag_id = ${tag()} AND st.status_id >= ${fl(s.start)} AND st.status_id < ${fl(s.end)} AND s.language IS NOT NULL
        GROUP BY s.language ORDER BY v DESC LIMIT ${limit}`,
    languageName,
  ],
  // The instance's accounts most followed from here, by follows made in the period.
  instance_accounts: [
    ({ s, limit, dom }) => sql`SELECT a.username AS k, count(*) AS v FROM accounts a JOIN follows f ON f.target_account_id = a.id
        WHERE ${dom()} AND f.id >= ${fl(s.start)} AND f.id < ${fl(s.end)} GROUP BY a.id ORDER BY v DESC LIMIT ${limit}`,
  ],
  instance_languages: [
    ({ s, limit, dom }) => sql`SELECT st.language AS k, count(*) AS v FROM accounts a JOIN statuses st ON st.account_id = a.id
        WHERE ${dom()} AND st.id >= ${fl(s.start)} AND st.id < ${fl(s.end)} AND st.language IS NOT NULL
        GROUP BY st.language ORDER BY v DESC LIMIT ${limit}`,
    languageName,
  ],
};

type DimensionDef = (db: DB, span: Span, limit: number, p: Params, localDomain: string) => Part<MastodonAdminDimension>;

/** A one-query dimension as a part: its rows as {key, human_key, value}. */
const oneQuery =
  (key: string, [rows, human = (k) => k]: OneQuery): DimensionDef =>
  (db, s, limit, p, local) => {
    const stmt = rows({ s, limit, local, tag: () => padId(tagIdOf(p, key)), dom: () => domainCond(p, key, sql.raw("a.domain")) });
    return {
      stmts: [db.all(stmt)],
      build: ([found = []]) =>
        renderAdminDimension(
          key,
          found.map((r) => ({ key: String(r.k ?? ""), humanKey: human(String(r.k ?? "")), value: Number(r.v) || 0 })),
        ),
    };
  };

const DIMENSIONS: Record<string, DimensionDef> = {
  ...Object.fromEntries(Object.entries(ONE_QUERY).map(([key, def]) => [key, oneQuery(key, def)])),
  sources: (db, s, limit) => ({
    stmts: [
      db.all(sql`SELECT (SELECT a.name FROM oauth_access_tokens t JOIN oauth_applications a ON a.id = t.application_id
          WHERE t.user_id = u.id ORDER BY t.id LIMIT 1) AS k, count(*) AS v
        FROM users u WHERE u.id >= ${fl(s.start)} AND u.id < ${fl(s.end)} GROUP BY k ORDER BY v DESC LIMIT ${limit}`),
    ],
    build: ([rows = []]) =>
      renderAdminDimension(
        "sources",
        rows.map((r) => ({ key: r.k ? String(r.k) : "web", humanKey: r.k ? String(r.k) : "Website", value: Number(r.v) || 0 })),
      ),
  }),
  space_usage: (db) => ({
    stmts: [db.all(sql`SELECT coalesce(sum(file_size), 0) AS v FROM media_attachments WHERE file_key IS NOT NULL`), db.run(sql`SELECT 1`)],
    build: ([media = [], probe]) => {
      const size = Number((probe as unknown as { meta?: { size_after?: number } })?.meta?.size_after ?? 0);
      const data: DimensionItem[] = [];
      if (size > 0) data.push({ key: "d1", humanKey: "D1", value: size, bytes: true });
      data.push({ key: "media", humanKey: "Media storage", value: Number(media[0]?.v ?? 0), bytes: true });
      return renderAdminDimension("space_usage", data);
    },
  }),
  software_versions: () => ({
    stmts: [],
    build: () =>
      renderAdminDimension("software_versions", [
        { key: "tern", humanKey: "Tern", value: TERN_VERSION, humanValue: TERN_VERSION },
        { key: "mastodon", humanKey: "Mastodon API", value: SOFTWARE_VERSION, humanValue: SOFTWARE_VERSION },
      ]),
  }),
};

export function adminDimensions(db: DB, keys: string[], span: Span, limit: number, params: Params, localDomain: string) {
  return runParts(
    db,
    knownKeys(keys, DIMENSIONS).map((k) => DIMENSIONS[k]!(db, span, limit, params, localDomain)),
  );
}

// ---- retention ----

/** UTC start of the day or month holding `ms`, and the next one. */
function periodStart(ms: number, frequency: "day" | "month"): number {
  if (frequency === "day") return Math.floor(ms / DAY) * DAY;
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
function nextPeriod(ms: number, frequency: "day" | "month"): number {
  if (frequency === "day") return ms + DAY;
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * Cohorts of users by sign-up day or month, and for each later period the share still signing in then or later
 * (Mastodon's Admin::Metrics::Retention: current_sign_in_at in or after the period). One statement: the users who
 * signed up in the span (a primary-key range).
 */
export async function adminRetention(db: DB, span: Span, frequency: "day" | "month"): Promise<MastodonAdminCohort[]> {
  const first = periodStart(span.start, frequency);
  const last = periodStart(span.end - 1, frequency);
  const until = nextPeriod(last, frequency);
  const users = await db.all<{ created_at: number; seen: number | null }>(
    sql`SELECT created_at, current_sign_in_at AS seen FROM users WHERE id >= ${fl(first)} AND id < ${fl(until)}`,
  );
  const periods: number[] = [];
  for (let p = first; p <= last; p = nextPeriod(p, frequency)) periods.push(p);
  return periods.map((cohort) => {
    const members = users.filter((u) => periodStart(Number(u.created_at), frequency) === cohort);
    return renderAdminCohort(
      cohort,
      frequency,
      periods
        .filter((p) => p >= cohort)
        .map((p) => {
          const value = members.filter((u) => u.seen != null && periodStart(Number(u.seen), frequency) >= p).length;
          return { period: p, rate: value / Math.max(members.length, 1), value };
        }),
    );
  });
}
