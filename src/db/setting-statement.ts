import { instanceSettings } from "./schema";
import type { DB, Statement } from "./client";

/**
 * The statement that sets one `instance_settings` row (insert or replace its value): the admin settings and the cron's
 * cursors (the poll watermark, the preview-card prune) all write their keys through it.
 */
export function settingStatement(db: DB, key: string, value: string): Statement {
  return db.insert(instanceSettings).values({ key, value }).onConflictDoUpdate({ target: instanceSettings.key, set: { value } });
}
