// Processes a verified inbound activity stored in inbox_items (JOBS message "inbox"). Filled in by the inbound work.
import type { DB } from "../db/client";
import type { Env } from "../env";

export async function processInboxItem(db: DB, env: Env, itemId: string, origin: string): Promise<void> {
  void db;
  void env;
  void itemId;
  void origin;
}
