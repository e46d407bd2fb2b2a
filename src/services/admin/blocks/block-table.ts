// What the admin block tables share (domain blocks and allows, canonical e-mail and e-mail domain blocks, IP rules):
// rows keyed by a snowflake `id`, listed newest first by keyset (Mastodon's admin lists), one row by id (404 when
// absent), and every create and delete written with its audit-log row in one batch.
import { eq } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DB } from "../../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../../db/keyset";
import { normalizeDomain } from "../../../lib/text/domain-name";
import { notFound, validationFailed } from "../../../lib/http/errors";
import { snowflake } from "../../../lib/text/ids";
import type { Page } from "../../../lib/http/pagination";
import { adminLogStatement, type LogTarget, type Staff } from "../log";
import type { Effects } from "../../../effects/collector";
import { commit } from "../../../effects/commit";

/** Whether a write failed on a unique index. */
export const isUnique = (e: unknown) => String(e).includes("UNIQUE");

/** A `.catch` for a write that may hit a unique index: that failure becomes 422 `message`, any other is thrown again. */
export const takenAs = (message: string) => (e: unknown) => {
  if (isUnique(e)) throw validationFailed(message);
  throw e;
};

/** The domain a block or allow names, normalized; 422 when blank or not a domain name. */
export function requiredDomain(raw: string | undefined): string {
  if (!raw?.trim()) throw validationFailed("Domain can't be blank");
  const domain = normalizeDomain(raw);
  if (!domain) throw validationFailed("Domain is invalid");
  return domain;
}

/** A new row of `fields` with a snowflake id and creation time of now. */
export function newRow<F extends object>(fields: F): F & { id: string; createdAt: number } {
  const now = Date.now();
  return { id: snowflake(now), ...fields, createdAt: now };
}

export function adminBlockTable<T extends SQLiteTable & { id: SQLiteColumn }>(table: T, targetType: LogTarget) {
  type Row = T["$inferSelect"];
  const t = table as SQLiteTable & { id: SQLiteColumn };
  const get = async (db: DB, id: string): Promise<Row> => {
    const [row] = await db.select().from(t).where(eq(t.id, id)).limit(1);
    if (!row) throw notFound();
    return row as Row;
  };
  return {
    page: async (db: DB, page: Page): Promise<Row[]> => {
      const rows = await db.select().from(t).where(cursorWhere(t.id, page)).orderBy(cursorOrder(t.id, page)).limit(page.limit);
      return inPageOrder(rows as Row[], page);
    },
    get,
    /**
     * Inserts `row` and its "create" log row; the caller handles a unique-index failure. `fx`, `record`: the effects
     * that follow, committed with them (src/effects/commit.ts).
     */
    insert: (db: DB, staff: Staff, row: Row & { id: string; createdAt: number }, fx?: Effects, record?: (fx: Effects) => void) => {
      const stmts = [db.insert(t).values(row), adminLogStatement(db, staff, "create", targetType, row.id, row.createdAt)] as const;
      return fx && record ? commit(db, fx, stmts, record) : db.batch(stmts);
    },
    /** 404 unless the row exists, then deletes it and logs "destroy". */
    remove: async (db: DB, staff: Staff, id: string): Promise<void> => {
      await get(db, id);
      const now = Date.now();
      await db.batch([adminLogStatement(db, staff, "destroy", targetType, id, now), db.delete(t).where(eq(t.id, id))]);
    },
  };
}
