// Rows an account owns (lists, filters, imports, notifications …): addressed by their id AND their owner, so another
// account's row is the same 404 as a missing one (B14).
import { and, eq, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { notFound } from "../lib/http/errors";
import type { DB } from "./client";

/** A table whose rows have an `id` and an owning `accountId`. */
export type OwnedTable = SQLiteTable & { id: SQLiteColumn; accountId: SQLiteColumn };

/** The condition "row `id`, owned by `accountId`". */
export function ownedBy(table: OwnedTable, id: string | number, accountId: string): SQL {
  return and(eq(table.id, id), eq(table.accountId, accountId)) as SQL;
}

/** The owner's row `id`; 404 when there is none. */
export async function ownRow<T extends OwnedTable>(db: DB, table: T, id: string, accountId: string): Promise<T["$inferSelect"]> {
  const [row] = await db
    .select()
    .from(table as OwnedTable)
    .where(ownedBy(table, id, accountId))
    .limit(1);
  if (!row) throw notFound();
  return row as T["$inferSelect"];
}

/** Deletes the owner's row `id`; false when there was none. */
export async function deleteOwnRow(db: DB, table: OwnedTable, id: string | number, accountId: string): Promise<boolean> {
  const gone = await db
    .delete(table)
    .where(ownedBy(table, id, accountId))
    .returning({ id: table.id });
  return gone.length > 0;
}
