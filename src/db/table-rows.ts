// Whole rows of the tables read most often (accounts above all: ~45 columns), their SELECT … FROM built once per
// isolate (frozen.ts); each call builds only its WHERE, ORDER BY and LIMIT. `accountRows(db, { where, limit })` reads
// as `db.select().from(accounts).where(where).limit(limit)` did, awaited or in a batch.
import { eq, sql } from "drizzle-orm";
import type { DB } from "./client";
import { accounts, statuses } from "./schema";
import { frozenHead, frozenSelect } from "./frozen";

export const accountRows = frozenHead((db) => db.select().from(accounts));
export const statusRows = frozenHead((db) => db.select().from(statuses));

const statusByUriRows = frozenSelect((db) =>
  db
    .select()
    .from(statuses)
    .where(eq(statuses.uri, sql.placeholder("uri")))
    .limit(1),
);

/** The stored status whose ActivityPub id is `uri` (zero or one row), awaited or in a batch: every inbox activity about a status reads it. */
export const statusRowByUri = (db: DB, uri: string) => statusByUriRows(db, { uri });
