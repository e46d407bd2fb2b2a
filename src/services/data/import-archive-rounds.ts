// The rounds of an archive import (the `import_archive` effect; import-archive.ts stores and checks the upload).
//
//   split      outbox.json, likes.json and bookmarks.json cut into parts in R2, a bounded number of bytes a round
//              (import-archive-split.ts)
//   statuses   at most ITEMS_PER_ROUND activities a round (fewer when media or ROUND_BUDGET_MS run out): each Create a
//              local status (import-archive-items.ts), its media copied from the zip into R2; each Announce a boost when
//              its status is on this server, else skipped
//   likes,     one part a round: favourites and bookmarks of statuses found on this server; the others are skipped
//   bookmarks
//   threads    replies met before their parent are linked to it (one statement)
//   profile    if asked: name, bio, fields, avatar and header from actor.json (import-archive-profile.ts)
//   done       the upload and its parts are deleted from R2
//
// Each round writes its rows and its progress (counters and cursor) in ONE batch whose first statement is a
// compare-and-set on the cursor: a round that fails writes nothing and the next starts where the last committed one
// stopped, and two copies of one round cannot both commit. Items are keyed by their original URI
// (`archive_import_items`), so an item is never imported twice, not even by a second upload of the same archive.
// A failing round retries itself (ARCHIVE_MAX_ATTEMPTS in a row, with growing delays) and never throws to the queue
// after it recorded that; then the import is `failed` and can be resumed by its owner. An archive the split finds
// corrupt fails at once, its files deleted, and cannot be resumed (it would not mend). The D1 rows each round writes
// (D1's own count) are added up per UTC day: past `dailyRows`, the next round waits for the next day.
import { and, eq, sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { runBatch } from "../../db/client";
import { accounts, archiveImports, type AccountRow, type ArchiveImportRow, type ArchiveParts, type Visibility } from "../../db/schema";
import { accountRows } from "../../db/table-rows";
import type { Effects } from "../../effects/collector";
import type { Config, Env } from "../../env";
import { padId, snowflake } from "../../lib/text/ids";
import { JsonItemsError } from "../../lib/text/json-items";
import { openEntry, type RandomAccess, readEntry, ZipError, type ZipEntryInfo } from "../../lib/text/zip-read";
import { buildMeta, IMAGE_LIMIT, inspectFile, MAX_VIDEO_PIXELS, putInspected, uploadKey, VIDEO_LIMIT } from "../../media/store";
import { sniff } from "../../media/sniff";
import { abortUnlessOneChanged } from "../statuses/status-revision";
import { takeArchiveProfile } from "./import-archive-profile";
import { archiveOf, directory, partKey, splitObjectKeys, splitRound } from "./import-archive-split";
import {
  archivePath,
  importedBoostStatements,
  importedStatusStatements,
  type KnownStatus,
  MAX_IMPORTED_ATTACHMENTS,
  type ParsedItem,
  parseItem,
  type StoredAttachment,
} from "./import-archive-items";

export const ITEMS_PER_ROUND = 10;
/** Media files copied per round (each a few R2 calls: the platform's subrequest limits). */
export const MEDIA_PER_ROUND = 5;
export const ARCHIVE_MAX_ATTEMPTS = 5;
/** D1 rows an import may write per UTC day: half of the free plan's 100,000, the rest left to the instance. */
export const ARCHIVE_DAILY_ROWS = 50_000;
const ROUND_BUDGET_MS = 20_000;
const DAY = 86_400_000;
/** Queues delay a message by at most 12 hours. */
const MAX_DELAY_S = 43_200;

const NEXT: Record<string, string> = { split: "statuses", statuses: "likes", likes: "bookmarks", bookmarks: "threads", threads: "done" };

interface Progress {
  phase?: string;
  cursor?: string | null;
  parts?: ArchiveParts;
  total?: number;
  processed?: number;
  imported?: number;
  skipped?: number;
  failed?: number;
}

interface RoundResult {
  progress: Progress;
  stmts: Statement[];
  /** R2 objects this round wrote that its rows point at: deleted again when the batch fails. */
  stored: string[];
}

/** One round of an import; records the next while work is left. */
/** What a round reads from env: the bucket, and the split's per-round bound. */
export type ArchiveEnv = Pick<Env, "MEDIA" | "ARCHIVE_SPLIT_BYTES">;

export async function runArchiveImportRound(
  db: DB,
  env: ArchiveEnv,
  fx: Effects,
  cfg: Config,
  importId: string,
  dailyRows = ARCHIVE_DAILY_ROWS,
  now = Date.now(),
): Promise<void> {
  const [imp] = await db.select().from(archiveImports).where(eq(archiveImports.id, importId)).limit(1);
  if (imp?.state !== "in_progress") return;
  const next = () => fx.add({ type: "import_archive", importId, origin: fx.origin });
  const [me] = await accountRows(db, { where: eq(accounts.id, imp.accountId), limit: 1 });
  if (!me || me.suspendedAt) {
    await db.update(archiveImports).set({ state: "failed", error: "account gone" }).where(eq(archiveImports.id, imp.id));
    return;
  }
  const today = Math.floor(now / DAY);
  const usedToday = imp.budgetDay === today ? imp.budgetRows : 0;
  if (usedToday >= dailyRows) {
    fx.later(Math.min(MAX_DELAY_S, Math.ceil(((today + 1) * DAY - now) / 1000) + 60), { type: "import_archive", importId, origin: fx.origin });
    return;
  }
  if (imp.phase === "done") return finish(db, env, imp);
  let round: RoundResult;
  let results: unknown[];
  try {
    round = await runPhase(db, env, fx, cfg, imp, me);
    const set = progressStatement(db, imp, round.progress);
    try {
      results = await runBatch(db, [set, abortUnlessOneChanged(db), ...round.stmts]);
    } catch (e) {
      await env.MEDIA.delete(round.stored).catch(() => {});
      throw e;
    }
  } catch (e) {
    // An archive found corrupt while it is split (a deflate stream, a CRC, a size, JSON that is not a collection) will
    // not mend: the import fails at once, before any status was written, and its files go.
    if (imp.phase === "split" && (e instanceof ZipError || e instanceof JsonItemsError)) return refuseCorrupt(db, env, imp, e);
    await recordFailure(db, fx, imp, e);
    return;
  }
  const rows = results.reduce<number>((n, r) => n + ((r as { meta?: { rows_written?: number } } | null)?.meta?.rows_written ?? 0), 0);
  await db.run(sql`UPDATE archive_imports SET rows_written = rows_written + ${rows},
    budget_rows = CASE WHEN budget_day = ${today} THEN budget_rows ELSE 0 END + ${rows}, budget_day = ${today} WHERE id = ${padId(imp.id)}`);
  next();
}

/** The round's progress, applied only if nobody moved the import since it was read. */
function progressStatement(db: DB, imp: ArchiveImportRow, p: Progress): Statement {
  return db.run(sql`UPDATE archive_imports SET phase = ${p.phase ?? imp.phase}, cursor = ${p.cursor === undefined ? imp.cursor : p.cursor},
    parts = ${JSON.stringify(p.parts ?? imp.parts)}, total_items = total_items + ${p.total ?? 0},
    processed_items = processed_items + ${p.processed ?? 0}, imported_items = imported_items + ${p.imported ?? 0},
    skipped_items = skipped_items + ${p.skipped ?? 0}, failed_items = failed_items + ${p.failed ?? 0}, attempts = 0, error = NULL
    WHERE id = ${padId(imp.id)} AND state = 'in_progress' AND phase = ${imp.phase} AND cursor IS ${imp.cursor}`);
}

async function recordFailure(db: DB, fx: Effects, imp: ArchiveImportRow, e: unknown): Promise<void> {
  const attempts = imp.attempts + 1;
  const error = (e instanceof Error ? e.message : String(e)).slice(0, 500);
  const failed = attempts >= ARCHIVE_MAX_ATTEMPTS;
  // If D1 cannot take even this, the error goes to the effects runner, whose retries are bounded too.
  await db
    .update(archiveImports)
    .set({ attempts, error, ...(failed ? { state: "failed" } : {}) })
    .where(and(eq(archiveImports.id, imp.id), eq(archiveImports.state, "in_progress")));
  if (!failed) fx.later(Math.min(MAX_DELAY_S, 30 * 2 ** attempts), { type: "import_archive", importId: imp.id, origin: fx.origin });
}

async function refuseCorrupt(db: DB, env: Pick<Env, "MEDIA">, imp: ArchiveImportRow, e: Error): Promise<void> {
  await db
    .update(archiveImports)
    // phase "done": nothing is left to resume (its files are gone)
    .set({ state: "failed", phase: "done", attempts: ARCHIVE_MAX_ATTEMPTS, error: `The archive cannot be read: ${e.message}`.slice(0, 500) })
    .where(and(eq(archiveImports.id, imp.id), eq(archiveImports.state, "in_progress")));
  await deleteImportObjects(env, imp);
}

async function finish(db: DB, env: Pick<Env, "MEDIA">, imp: ArchiveImportRow): Promise<void> {
  await deleteImportObjects(env, imp);
  await db.update(archiveImports).set({ state: "finished", finishedAt: Date.now() }).where(eq(archiveImports.id, imp.id));
}

/** The upload, its parts, and what the split kept (an older split's whole copies, the checkpoints' windows). */
export async function deleteImportObjects(env: Pick<Env, "MEDIA">, imp: ArchiveImportRow): Promise<void> {
  const keys = [imp.fileKey, ...(await splitObjectKeys(env, imp))];
  for (let i = 0; i < keys.length; i += 1000) await env.MEDIA.delete(keys.slice(i, i + 1000));
}

function runPhase(db: DB, env: ArchiveEnv, fx: Effects, cfg: Config, imp: ArchiveImportRow, me: AccountRow): Promise<RoundResult> {
  switch (imp.phase) {
    case "split":
      return splitRound(env, imp).then((progress) => ({ progress, stmts: [], stored: [] }));
    case "statuses":
      return statusesRound(db, env, cfg, imp, me);
    case "likes":
    case "bookmarks":
      return urisRound(db, env, imp, me, imp.phase);
    case "threads":
      return Promise.resolve({ progress: { phase: imp.takeProfile ? "profile" : "done", cursor: null }, stmts: threadStatements(db, me.id), stored: [] });
    case "profile":
      return profileRound(db, env, fx, cfg, imp, me);
    default:
      throw new Error(`unknown phase ${imp.phase}`);
  }
}

async function profileRound(db: DB, env: Pick<Env, "MEDIA">, fx: Effects, cfg: Config, imp: ArchiveImportRow, me: AccountRow): Promise<RoundResult> {
  const src = archiveOf(env, imp);
  await takeArchiveProfile(db, env, fx, cfg, imp, me, src, await directory(src));
  return { progress: { phase: "done", cursor: null }, stmts: [], stored: [] };
}

// ---- statuses ----

const parseCursor = (c: string | null): [number, number] => {
  const [p, i] = (c ?? "0:0").split(":").map((x) => Number(x) || 0);
  return [p ?? 0, i ?? 0];
};

function parseJson(text: unknown): unknown {
  if (typeof text !== "string") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null; // not JSON: the item is skipped
  }
}

async function readPart(env: Pick<Env, "MEDIA">, key: string): Promise<unknown[]> {
  const o = await env.MEDIA.get(key);
  if (!o) throw new Error(`import part ${key} is gone`);
  const items = JSON.parse(await o.text()) as unknown;
  return Array.isArray(items) ? items : [];
}

/** The followers collection the archive's statuses were addressed to (Mastodon's `<actor>/followers`). */
function followersOf(imp: ArchiveImportRow): string {
  return `${imp.actorUri ?? ""}/followers`;
}

async function statusesRound(db: DB, env: Pick<Env, "MEDIA">, cfg: Config, imp: ArchiveImportRow, me: AccountRow): Promise<RoundResult> {
  const [p, i] = parseCursor(imp.cursor);
  const partCount = imp.parts.outbox?.parts ?? 0;
  if (p >= partCount) return { progress: { phase: NEXT.statuses, cursor: "0:0" }, stmts: [], stored: [] };
  const all = await readPart(env, partKey(imp.id, "outbox", p));
  const slice = all.slice(i, i + ITEMS_PER_ROUND);
  const actor = imp.actorUri ?? "";
  const followers = followersOf(imp);
  const parsed = slice.map((text) => parseItem(parseJson(text), actor, followers));
  const known = await knownStatuses(db, me.id, parsed);
  const src = imp.kind === "zip" ? archiveOf(env, imp) : null;
  // The zip's directory is read only by a round that has media to copy.
  let dir: Map<string, ZipEntryInfo> | null = null;
  const started = Date.now();
  const stmts: Statement[] = [];
  const stored: string[] = [];
  let media = 0;
  let n = 0;
  let imported = 0;
  let skipped = 0;
  let failed = 0;
  for (const item of parsed) {
    if (n > 0 && (Date.now() - started > ROUND_BUDGET_MS || media >= MEDIA_PER_ROUND)) break;
    n++;
    if (item.kind === "skip" || known.done.has(item.uri)) {
      skipped++;
      continue;
    }
    if (item.kind === "announce") {
      const target = known.byUri.get(item.object);
      const visible = target && (target.accountId === me.id || target.visibility === "public" || target.visibility === "unlisted");
      if (!target || !visible || known.boosted.has(target.id)) {
        skipped++;
        continue;
      }
      stmts.push(...importedBoostStatements(db, cfg, me, item, target));
      known.boosted.add(target.id);
      known.done.add(item.uri);
      imported++;
      continue;
    }
    const parent = item.note.inReplyTo ? (known.byUri.get(item.note.inReplyTo) ?? null) : null;
    const attachments: StoredAttachment[] = [];
    for (const att of item.note.attachments.slice(0, MAX_IMPORTED_ATTACHMENTS)) {
      const path = archivePath(att.url);
      if (path && src && !dir) dir = await directory(src);
      const entry = path && dir ? dir.get(path) : undefined;
      if (!entry || !src) continue; // not in the upload (an outbox.json alone): the status comes without it
      media++;
      const id = snowflake(item.published);
      const file = await storeAttachment(env, src, entry, id);
      if (!file) {
        failed++;
        continue;
      }
      stored.push(file.key);
      attachments.push({ ...file, id, description: att.description, focus: att.focus, blurhash: att.blurhash });
    }
    const closeBefore = imp.createdAt - 3600_000;
    const made = importedStatusStatements(db, cfg, me, item, followers, parent, attachments, closeBefore);
    stmts.push(...made.stmts);
    known.done.add(item.uri);
    known.byUri.set(item.uri, { id: made.row.id, accountId: me.id, conversationId: made.row.conversationId, visibility: made.row.visibility });
    imported++;
  }
  const end = i + n >= all.length;
  return {
    progress: { cursor: end ? `${p + 1}:0` : `${p}:${i + n}`, processed: n, imported, skipped, failed },
    stmts,
    stored,
  };
}

interface Known {
  /** Original URIs already imported for this account. */
  done: Set<string>;
  /** Statuses by original URI (imported) or URI (on this server). */
  byUri: Map<string, KnownStatus>;
  /** Statuses this account boosted already. */
  boosted: Set<string>;
}

/** What the round's items refer to, in one round trip. */
async function knownStatuses(db: DB, accountId: string, items: ParsedItem[]): Promise<Known> {
  const own = new Set<string>();
  const refs = new Set<string>();
  for (const it of items) {
    if (it.kind === "skip") continue;
    own.add(it.uri);
    if (it.kind === "create" && it.note.inReplyTo) refs.add(it.note.inReplyTo);
    if (it.kind === "announce") refs.add(it.object);
  }
  const keys = JSON.stringify([...own, ...refs]);
  const refList = JSON.stringify([...refs]);
  const me = padId(accountId);
  type Row = { uri: string; id: string; account_id: string; conversation_id: string | null; visibility: Visibility };
  const [mapped, local, boosted] = await db.batch([
    db.all<Row>(sql`SELECT a.original_uri AS uri, s.id, s.account_id, s.conversation_id, s.visibility
      FROM archive_import_items a JOIN statuses s ON s.id = a.status_id
      WHERE a.account_id = ${me} AND a.original_uri IN (SELECT value FROM json_each(${keys}))`),
    db.all<Row>(sql`SELECT uri, id, account_id, conversation_id, visibility FROM statuses WHERE uri IN (SELECT value FROM json_each(${refList}))`),
    db.all<{ id: string }>(sql`SELECT b.reblog_of_id AS id FROM statuses t JOIN statuses b ON b.reblog_of_id = t.id AND b.account_id = ${me}
      WHERE t.uri IN (SELECT value FROM json_each(${refList}))`),
  ]);
  const k: Known = { done: new Set(), byUri: new Map(), boosted: new Set((boosted as { id: string }[]).map((r) => unpad(r.id))) };
  const put = (r: Row) =>
    k.byUri.set(r.uri, {
      id: unpad(r.id),
      accountId: unpad(r.account_id),
      conversationId: r.conversation_id ? unpad(r.conversation_id) : null,
      visibility: r.visibility,
    });
  for (const r of local as Row[]) put(r);
  for (const r of mapped as Row[]) {
    put(r);
    if (own.has(r.uri)) k.done.add(r.uri);
  }
  return k;
}

const unpad = (s: string) => s.replace(/^0+(?=\d)/, "");

/** Copies one media file from the zip into R2 under a new key, checked as an upload is; null when it is refused. */
async function storeAttachment(
  env: Pick<Env, "MEDIA">,
  src: RandomAccess,
  entry: ZipEntryInfo,
  id: string,
): Promise<Omit<StoredAttachment, "id" | "description" | "focus" | "blurhash"> | null> {
  if (entry.size === 0 || entry.size > VIDEO_LIMIT) return null;
  if (entry.size <= IMAGE_LIMIT) {
    const file = new File([await readEntry(src, entry)], entry.name.split("/").pop() ?? "file");
    let x: Awaited<ReturnType<typeof inspectFile>>;
    try {
      x = await inspectFile(file);
    } catch {
      return null;
    }
    const key = uploadKey("attachment", x.sniffed.ext, id);
    await putInspected(env, key, file, x);
    return { key, contentType: x.sniffed.mime, size: x.size, type: x.sniffed.kind, meta: buildMeta(x.sniffed) };
  }
  // Large video or audio: streamed from the zip into R2, its type and size read from its first MB.
  const reader = (await openEntry(src, entry)).getReader();
  const head: Uint8Array[] = [];
  let got = 0;
  while (got < 1024 * 1024) {
    const { done, value } = await reader.read();
    if (done) break;
    head.push(value);
    got += value.length;
  }
  await reader.cancel().catch(() => {});
  const joined = new Uint8Array(got);
  let o = 0;
  for (const h of head) {
    joined.set(h, o);
    o += h.length;
  }
  const s = sniff(joined);
  if (!s || s.kind === "image" || (s.kind === "video" && (s.width ?? 0) * (s.height ?? 0) > MAX_VIDEO_PIXELS)) return null;
  const key = uploadKey("attachment", s.ext, id);
  const fixed = new FixedLengthStream(entry.size);
  await Promise.all([env.MEDIA.put(key, fixed.readable, { httpMetadata: { contentType: s.mime } }), (await openEntry(src, entry)).pipeTo(fixed.writable)]);
  return { key, contentType: s.mime, size: entry.size, type: s.kind, meta: buildMeta(s) };
}

// ---- likes and bookmarks ----

async function urisRound(db: DB, env: Pick<Env, "MEDIA">, imp: ArchiveImportRow, me: AccountRow, source: "likes" | "bookmarks"): Promise<RoundResult> {
  const [p] = parseCursor(imp.cursor);
  if (p >= (imp.parts[source]?.parts ?? 0)) return { progress: { phase: NEXT[source], cursor: "0:0" }, stmts: [], stored: [] };
  const raw = (await readPart(env, partKey(imp.id, source, p))).map(parseJson);
  const uris = raw.filter((u): u is string => typeof u === "string" && u.length <= 2048);
  const list = JSON.stringify([...new Set(uris)]);
  const mine = padId(me.id);
  const found = await db.all<{ id: string }>(sql`SELECT id FROM statuses WHERE uri IN (SELECT value FROM json_each(${list}))
    AND reblog_of_id IS NULL AND (account_id = ${mine} OR visibility IN ('public', 'unlisted'))`);
  const now = Date.now();
  const rows = JSON.stringify(found.map((r) => [padId(snowflake(now)), r.id]));
  const stmt =
    source === "likes"
      ? sql`INSERT OR IGNORE INTO favourites (id, account_id, status_id, uri, created_at)
          SELECT json_extract(value, '$[0]'), ${mine}, json_extract(value, '$[1]'), NULL, ${now} FROM json_each(${rows})`
      : sql`INSERT OR IGNORE INTO bookmarks (id, account_id, status_id, created_at)
          SELECT json_extract(value, '$[0]'), ${mine}, json_extract(value, '$[1]'), ${now} FROM json_each(${rows})`;
  const all = raw.length;
  return {
    progress: { cursor: `${p + 1}:0`, processed: all, imported: found.length, skipped: all - found.length },
    stmts: found.length ? [db.run(stmt)] : [],
    stored: [],
  };
}

// ---- threads ----

/**
 * Replies imported before their parent (or whose parent arrived on this server since) are linked to it; the parents'
 * replies_count follows by trigger (statuses_reply_linked, migrations/0026).
 */
function threadStatements(db: DB, accountId: string): Statement[] {
  const me = padId(accountId);
  return [
    db.run(sql`UPDATE statuses SET in_reply_to_id = x.pid, in_reply_to_account_id = x.paccount, conversation_id = coalesce(x.conv, statuses.conversation_id)
      FROM (SELECT i.status_id AS sid, ps.id AS pid, ps.account_id AS paccount, ps.conversation_id AS conv
            FROM archive_import_items i
            JOIN statuses ps ON ps.id = coalesce(
              (SELECT p.status_id FROM archive_import_items p WHERE p.account_id = i.account_id AND p.original_uri = i.in_reply_to_uri),
              (SELECT s.id FROM statuses s WHERE s.uri = i.in_reply_to_uri))
            WHERE i.account_id = ${me} AND i.in_reply_to_uri IS NOT NULL) x
      WHERE statuses.id = x.sid`),
    db.run(sql`UPDATE archive_import_items SET in_reply_to_uri = NULL WHERE account_id = ${me} AND in_reply_to_uri IS NOT NULL
      AND EXISTS (SELECT 1 FROM statuses s WHERE s.id = archive_import_items.status_id AND s.in_reply_to_id IS NOT NULL)`),
  ];
}
