// users.last_active_at drives the cron that drops feeds of inactive users. Written at most once an hour per user and
// after the response (waitUntil, on the raw binding so the request's D1 round-trip count stays honest).
import { padId } from "../lib/text/ids";
import type { UserViewer } from "../db/viewer";

export const ACTIVITY_RESOLUTION_MS = 60 * 60 * 1000;

/** `c`: the request's D1 binding and execution context (Hono's Context has both). */
export function touchLastActive(c: { env: { DB: D1Database }; executionCtx: Pick<ExecutionContext, "waitUntil"> }, v: UserViewer): void {
  const now = Date.now();
  const last = v.user.lastActiveAt;
  if (last && now - last < ACTIVITY_RESOLUTION_MS) return;
  const write = c.env.DB.prepare("UPDATE users SET last_active_at = ?1 WHERE id = ?2 AND (last_active_at IS NULL OR last_active_at < ?3)")
    .bind(now, padId(v.user.id), now - ACTIVITY_RESOLUTION_MS)
    .run()
    .catch((e) => console.warn("last_active_at update failed", String(e)));
  try {
    c.executionCtx.waitUntil(write);
  } catch {
    // No execution context (unit use): the write still runs.
  }
}
