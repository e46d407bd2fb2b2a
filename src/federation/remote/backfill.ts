// Conversation backfill: opening the context of a remote status (or of a local reply in a remote thread) fetches the
// thread's missing ancestors (walking inReplyTo up) and replies (each remote status's `replies` collection, first
// pages) through the SSRF-guarded fetch and the status resolver, within a fixed budget. The request waits at most
// REQUEST_BUDGET.ms; what is left is fetched by a `backfill_thread` JOBS effect with a larger budget. A thread is
// fetched again only after BACKFILL_COOLDOWN_MS (thread_backfills, claimed in one statement so concurrent openings
// fetch once). Statuses found this way are late: stored, never fanned out to home feeds (Resolution.late).
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { statuses } from "../../db/schema/index";
import type { StatusRow } from "../../entities/statuses/status";
import type { Config } from "../../env";
import { Effects } from "../../effects/collector";
import { padId, unpadId } from "../../lib/text/ids";
import { accountCanRead, statusReadableBy } from "../../policy/visibility";
import { signedFetchOptions } from "./fetch-options";
import { normalizeNote } from "./normalize";
import { idOf, readCollectionItems } from "./paged-collection";
import type { Resolution } from "./resolution";
import { fetchObject, newResolution, resolveStatus } from "./resolve-status";
import { fetchActivityJson } from "../../net/safe-fetch";
import { statusRows } from "../../db/table-rows";
import { valueList } from "../../db/id-list";

export interface BackfillBudget {
  /** Remote documents fetched (statuses and collection pages; authors are fetched by the resolver as needed). */
  fetches: number;
  /** Ancestors added above the highest one already known. */
  ancestors: number;
  /** Wall time, in milliseconds. */
  ms: number;
}

/** While a client waits for GET /api/v1/statuses/:id/context. */
export const REQUEST_BUDGET: BackfillBudget = { fetches: 10, ancestors: 20, ms: 3000 };
/** The background pass (JOBS effect `backfill_thread`). */
export const JOB_BUDGET: BackfillBudget = { fetches: 40, ancestors: 20, ms: 60_000 };
/** A thread is not fetched again within this time (Mastodon waits 15 minutes before fetching replies again). */
export const BACKFILL_COOLDOWN_MS = 15 * 60_000;
/** Pages of one `replies` collection read, and reply URIs taken from one status's collection. */
const MAX_REPLY_PAGES = 2;
const MAX_REPLIES_PER_STATUS = 40;
/** Statuses of the thread visited while looking for replies (known ones cost no fetch, but a read each). */
const MAX_VISITED = 200;

/**
 * Claims the thread of `statusId` for a backfill: ONE statement that checks the viewer may read the status, that its
 * thread involves a remote status, and that the thread was not fetched within the cooldown, and records the claim.
 */
export async function claimBackfill(db: DB, statusId: string, viewerId: string, now = Date.now()): Promise<boolean> {
  const rows = await db.all<{ conversation_id: string }>(sql`INSERT INTO thread_backfills (conversation_id, fetched_at)
    SELECT ${statuses.conversationId}, ${now} FROM ${statuses}
    WHERE ${statuses.id} = ${padId(statusId)} AND ${statuses.conversationId} IS NOT NULL AND ${statuses.reblogOfId} IS NULL
      AND ${statusReadableBy(viewerId)}
      AND (${statuses.local} = 0 OR EXISTS (SELECT 1 FROM statuses t WHERE t.conversation_id = ${statuses.conversationId} AND t.local = 0)
        OR EXISTS (SELECT 1 FROM archive_import_items a WHERE a.status_id = ${statuses.id} AND a.in_reply_to_uri IS NOT NULL))
    ON CONFLICT (conversation_id) DO UPDATE SET fetched_at = excluded.fetched_at WHERE thread_backfills.fetched_at < ${now - BACKFILL_COOLDOWN_MS}
    RETURNING conversation_id`);
  return rows.length > 0;
}

/**
 * GET /api/v1/statuses/:id/context for a signed-in viewer: backfills the thread within REQUEST_BUDGET and returns
 * when done or when the time is up, whichever comes first; what is left goes to a `backfill_thread` effect.
 */
export async function backfillForContext(db: DB, cfg: Config, fx: Effects, statusId: string, viewerId: string | null): Promise<void> {
  if (!viewerId) return;
  if (!(await claimBackfill(db, statusId, viewerId))) return;
  // Effects of this pass are handed on only if it finished in time: a pass cut short may still record some after the
  // response went, and the background pass redoes what it was doing.
  const own = new Effects(fx.origin);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), REQUEST_BUDGET.ms);
  });
  const work = backfillThread(db, cfg, own, statusId, REQUEST_BUDGET).catch((e) => {
    console.warn("backfill failed", statusId, e instanceof Error ? e.message : e);
    return { complete: false };
  });
  const outcome = await Promise.race([work, late]);
  if (timer !== undefined) clearTimeout(timer);
  fx.adopt(own);
  if (outcome === "late" || !outcome.complete) fx.add({ type: "backfill_thread", statusId });
}

interface Pass {
  r: Resolution;
  deadline: number;
}

const outOfBudget = (p: Pass) => p.r.budget <= 0 || Date.now() >= p.deadline;

/**
 * Fetches what the thread of `statusId` lacks, within `budget`. `complete` is false when the budget ran out with
 * parts of the thread not looked at.
 */
export async function backfillThread(db: DB, cfg: Config, fx: Effects, statusId: string, budget: BackfillBudget): Promise<{ complete: boolean }> {
  const r = newResolution(db, cfg, fx);
  r.budget = budget.fetches;
  r.late = true;
  r.docs = new Map();
  const p: Pass = { r, deadline: Date.now() + budget.ms };
  const start = await statusById(db, statusId);
  if (!start || start.reblogOfId) return { complete: true };
  const root = await walkAncestors(p, start, budget.ancestors);
  if (!root) return { complete: false };
  const complete = await walkReplies(p, root);
  // The root's conversation counts as fetched too: opening the context of any status of it waits for the cooldown.
  if (root.conversationId && root.conversationId !== start.conversationId) {
    await db.run(sql`INSERT INTO thread_backfills (conversation_id, fetched_at) VALUES (${padId(root.conversationId)}, ${Date.now()})
      ON CONFLICT (conversation_id) DO UPDATE SET fetched_at = excluded.fetched_at`);
  }
  return { complete };
}

async function statusById(db: DB, id: string): Promise<StatusRow | null> {
  const [row] = await statusRows(db, { where: eq(statuses.id, id), limit: 1 });
  return row ?? null;
}

/** The highest known ancestor of `id` (itself when it has no known parent), up to 40 levels. */
async function topKnown(db: DB, id: string): Promise<StatusRow | null> {
  const rows = await db.all<{ id: string }>(sql`WITH RECURSIVE anc(id, depth) AS (
      SELECT ${padId(id)}, 0
      UNION ALL
      SELECT s.in_reply_to_id, anc.depth + 1 FROM anc CROSS JOIN statuses s ON s.id = anc.id
        WHERE s.in_reply_to_id IS NOT NULL AND anc.depth < 40
    )
    SELECT anc.id AS id FROM anc CROSS JOIN statuses ON statuses.id = anc.id ORDER BY anc.depth DESC LIMIT 1`);
  const top = rows[0];
  return top ? statusById(db, unpadId(String(top.id))) : null;
}

/** The document of a remote status: fetched in this pass already, or fetched now (trusted only at its own id). */
async function statusDoc(p: Pass, s: StatusRow): Promise<Record<string, unknown> | null> {
  const known = p.r.docs?.get(s.uri);
  if (known) return known;
  if (outOfBudget(p)) return null;
  try {
    return await fetchObject(p.r, s.uri);
  } catch (e) {
    console.warn("backfill: status fetch failed", s.uri.slice(0, 200), e instanceof Error ? e.message : e);
    return null;
  }
}

/**
 * Walks up from `start` to the root of its thread: while the highest known status is remote and names a parent (or is
 * an imported local status whose parent on another server was not known at the import), the parent is resolved (the resolver fetches a few more levels itself) and the orphan linked to it. Returns the root
 * reached, or null when the budget ran out on the way.
 */
async function walkAncestors(p: Pass, start: StatusRow, maxAncestors: number): Promise<StatusRow | null> {
  const { db } = p.r;
  let top = await topKnown(db, start.id);
  for (let added = 0; top && added < maxAncestors; added++) {
    let parentUri: string | null;
    if (top.local) {
      // A local status names a parent not linked yet only when it came from an imported archive.
      parentUri = await importedParentUri(db, top.id);
      if (!parentUri) return top;
      if (outOfBudget(p)) return null;
    } else {
      if (outOfBudget(p) && !p.r.docs?.has(top.uri)) return null;
      const doc = await statusDoc(p, top);
      if (!doc) return top;
      const note = normalizeNote(doc);
      if (!note || note.id !== top.uri || !note.inReplyTo || note.inReplyTo === top.uri) return top;
      parentUri = note.inReplyTo;
    }
    const parent = await resolveStatus(p.r, parentUri);
    if (!parent || parent.reblogOfId || parent.id === top.id) return outOfBudget(p) ? null : top;
    // As ingestNote: a reply to a local status its author may not see is not threaded.
    if (parent.local && !(await accountCanRead(db, top.accountId, parent.id))) return top;
    if (top.inReplyToId == null) await linkReply(db, top, parent);
    if (top.local) await db.run(sql`UPDATE archive_import_items SET in_reply_to_uri = NULL WHERE status_id = ${padId(top.id)} AND in_reply_to_uri IS NOT NULL`);
    top = await topKnown(db, parent.id);
  }
  return top;
}

/** The parent URI an imported status still waits for (src/services/data/import-archive*.ts), if any. */
async function importedParentUri(db: DB, statusId: string): Promise<string | null> {
  const [row] = await db.all<{ uri: string }>(
    sql`SELECT in_reply_to_uri AS uri FROM archive_import_items WHERE status_id = ${padId(statusId)} AND in_reply_to_uri IS NOT NULL LIMIT 1`,
  );
  return row?.uri ?? null;
}

/** Threads a reply stored before its parent was known (the counter follows by trigger, 0026_relays_backfill.sql). */
async function linkReply(db: DB, child: StatusRow, parent: StatusRow): Promise<void> {
  const inReplyToAccountId = parent.accountId === child.accountId && parent.inReplyToAccountId ? parent.inReplyToAccountId : parent.accountId;
  // The conversation stays: a mute of it, or a conversation row, keeps meaning what it meant.
  await db.run(sql`UPDATE statuses SET in_reply_to_id = ${padId(parent.id)}, in_reply_to_account_id = ${padId(inReplyToAccountId)}
    WHERE id = ${padId(child.id)} AND in_reply_to_id IS NULL`);
}

/**
 * Breadth first from the root: each remote status's `replies` collection is read and unknown replies resolved; known
 * replies (remote or local) are visited in turn. True when the whole thread was looked at.
 */
async function walkReplies(p: Pass, root: StatusRow): Promise<boolean> {
  const { db } = p.r;
  const queue: StatusRow[] = [root];
  const visited = new Set<string>();
  while (queue.length) {
    if (visited.size >= MAX_VISITED) return true;
    const s = queue.shift() as StatusRow;
    if (visited.has(s.id)) continue;
    if (!s.local) {
      if (outOfBudget(p)) return false;
      const doc = await statusDoc(p, s);
      for (const uri of doc ? await replyUris(p, doc, s.uri) : []) {
        if (outOfBudget(p)) return false;
        await resolveStatus(p.r, uri);
      }
    }
    visited.add(s.id);
    const children = await statusRows(db, {
      where: sql`${statuses.inReplyToId} = ${padId(s.id)} AND ${statuses.reblogOfId} IS NULL`,
      limit: MAX_REPLIES_PER_STATUS * 2,
    });
    queue.push(...children.filter((c) => !visited.has(c.id)));
  }
  return true;
}

type Obj = Record<string, unknown>;

/** A status's `replies` collection through src/federation/remote/paged-collection.ts, each page fetched counted against the budget. */
async function replyUris(p: Pass, doc: Obj, statusUri: string): Promise<string[]> {
  const items = await readCollectionItems(doc.replies, {
    owner: statusUri,
    label: "backfill replies",
    maxFetches: 1 + MAX_REPLY_PAGES,
    maxItems: MAX_REPLIES_PER_STATUS,
    fetch: async (url) => {
      if (outOfBudget(p)) return null;
      p.r.budget--;
      try {
        return (await fetchActivityJson(url, await signedFetchOptions(p.r.db, p.r.cfg))).json;
      } catch (e) {
        console.warn("backfill: replies fetch failed", url.slice(0, 200), e instanceof Error ? e.message : e);
        return null;
      }
    },
  });
  const uris = (items ?? []).map(idOf);
  const wanted = [...new Set(uris)].filter((u): u is string => !!u && u !== statusUri && /^https?:\/\//.test(u)).slice(0, MAX_REPLIES_PER_STATUS);
  if (!wanted.length) return [];
  const known = await p.r.db
    .select({ uri: statuses.uri })
    .from(statuses)
    .where(sql`${statuses.uri} IN ${valueList(wanted)}`);
  const have = new Set(known.map((k) => k.uri));
  return wanted.filter((u) => !have.has(u));
}
