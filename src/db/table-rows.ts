// Whole rows of the tables read most often (accounts above all: ~45 columns), their SELECT … FROM built once per
// isolate (frozen.ts); each call builds only its WHERE, ORDER BY and LIMIT. `accountRows(db, { where, limit })` reads
// as `db.select().from(accounts).where(where).limit(limit)` did, awaited or in a batch.
import { accounts, inboxItems, statuses } from "./schema";
import { frozenHead } from "./frozen";

export const accountRows = frozenHead((db) => db.select().from(accounts));
export const statusRows = frozenHead((db) => db.select().from(statuses));
export const inboxItemRows = frozenHead((db) => db.select().from(inboxItems));
