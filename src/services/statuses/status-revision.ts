// Edits of one status serialise without a lock (D1 has no interactive transactions; Mastodon takes a row lock). An
// edit reads the status, builds its writes, and commits them in ONE batch whose first statement moves the status
// from the `edited_at` the edit read to a later one (a compare-and-set: `WHERE id = ? AND edited_at IS <read>`) and
// whose second aborts the whole batch when that moved no row. An edit that lost a race to another therefore writes
// nothing (no history entry, no second copy of the original, no notification) and is read and applied again on the
// state that won, a bounded number of times. Used by the REST edit (edit-status.ts) and Update{Note} received
// (federation/remote/remote-statuses.ts), which keep the same history: the original first (written once, by whichever edit
// wins first), then one entry per applied edit, ordered by id = snowflake(edited_at), edited_at rising strictly.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { frozenSql } from "../../db/frozen";
import type { StatusRow } from "../../entities/statuses/status";
import { padId, snowflake } from "../../lib/text/ids";

/** Tries per edit: ten edits sent at once all apply, one more each round (each failure means another edit won). */
export const EDIT_ATTEMPTS = 10;

/** In the error of a batch aborted by `abortUnlessOneChanged` (SQLite names the bad JSON path in its message). */
const CONFLICT_MARK = "tern: status edited concurrently";

const abortUnlessOne = frozenSql(() => sql`SELECT json_extract('{}', CASE WHEN changes() = 1 THEN '$' ELSE ${sql.raw(`'${CONFLICT_MARK}'`)} END) AS ok`);

/**
 * Fails (and so rolls back its whole batch) unless the statement just before it in the batch changed exactly one row.
 * D1 runs a batch's statements in order on one connection, so `changes()` is that statement's count (triggers' rows
 * are not counted). Reads and writes no row.
 */
export const abortUnlessOneChanged = (db: DB) => db.run(abortUnlessOne(db, {}));

/** Whether `e` is a batch refused by `abortUnlessOneChanged`. */
export function isEditConflict(e: unknown): boolean {
  for (let x = e, depth = 0; x && depth < 5; x = (x as { cause?: unknown }).cause, depth++) {
    if (String((x as Error).message ?? x).includes(CONFLICT_MARK)) return true;
  }
  return false;
}

/** The `edited_at` an edit writes: later than the creation and than the edit it applies on, even within one ms. */
export const nextEditedAt = (s: Pick<StatusRow, "createdAt" | "editedAt">, at: number): number =>
  Math.max(at, s.createdAt + 1, (s.editedAt ?? s.createdAt) + 1);

/** The condition of the first statement of an edit's batch: the status is still as the edit read it. */
export const stillAsRead = (s: Pick<StatusRow, "editedAt">) => sql`edited_at IS ${s.editedAt ?? null}`;

/**
 * Runs `attempt` (attempt n reads, builds and commits) until it commits, up to EDIT_ATTEMPTS times. An attempt records
 * its effects once its batch committed, so a refused one has recorded none. After the last refusal, throws
 * `exhausted(error)`.
 */
export async function retryEdit<T>(attempt: (n: number) => Promise<T>, exhausted: (e: unknown) => unknown): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (e) {
      if (!isEditConflict(e)) throw e;
      if (n >= EDIT_ATTEMPTS) throw exhausted(e);
    }
    // A few ms apart, so that edits that lost together do not meet again.
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4 * n)));
  }
}

const insertOriginal = frozenSql(
  () => sql`INSERT INTO status_edits (id, status_id, account_id, text, content, spoiler_text, sensitive, media_ids, poll_options, created_at)
    SELECT ${sql.placeholder("id")}, ${sql.placeholder("statusId")}, ${sql.placeholder("accountId")}, ${sql.placeholder("text")},
      ${sql.placeholder("content")}, ${sql.placeholder("spoilerText")}, ${sql.placeholder("sensitive")}, ${sql.placeholder("mediaIds")},
      ${sql.placeholder("pollOptions")}, ${sql.placeholder("createdAt")}
    WHERE NOT EXISTS (SELECT 1 FROM status_edits WHERE status_id = ${sql.placeholder("statusId")})`,
);

/**
 * The status as first written, kept as the first entry of its history: written by an edit's batch only while the
 * status has no history yet (one probe of `status_edits_status`), so every edit may carry it and the original is
 * stored once. Its id is a snowflake of the creation time, before any edit's.
 */
export function originalVersionStatement(db: DB, s: StatusRow, pollOptions: string[] | null) {
  return db.run(
    insertOriginal(db, {
      id: padId(snowflake(s.createdAt)),
      statusId: padId(s.id),
      accountId: padId(s.accountId),
      text: s.text,
      content: s.content,
      spoilerText: s.spoilerText,
      sensitive: s.sensitive ? 1 : 0,
      mediaIds: JSON.stringify(s.mediaIds ?? []),
      pollOptions: pollOptions ? JSON.stringify(pollOptions) : null,
      createdAt: s.createdAt,
    }),
  );
}
