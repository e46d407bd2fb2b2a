// What every interaction on a status shares (favourite, reblog, bookmark, pin, conversation mute): doing one needs
// the status to be visible (security B15: 404 otherwise); undoing one's own works even after access was lost (spec).
// The status is loaded once with its viewer relations (one batch), the write is one batch, and the response is
// rendered from the loaded bundle with the change applied in memory.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { loadStatusBundle, renderStatusFrom, type StatusBundle, type StatusRow } from "../../entities/status";
import type { Config } from "../../env";
import { notFound } from "../../lib/errors";
import { padId } from "../../lib/ids";

export type Json = Record<string, unknown>;

interface Loaded {
  b: StatusBundle;
  /** The status the action applies to: the original when the id is a reblog. */
  target: StatusRow;
}

export async function loadVisible(db: DB, cfg: Config, id: string, viewerId: string): Promise<Loaded> {
  const b = await loadStatusBundle(db, [id], viewerId);
  const s = b.statuses.get(id);
  if (!s || !renderStatusFrom(cfg, b, id)) throw notFound();
  const target = b.statuses.get(s.reblogOfId ?? id);
  if (!target) throw notFound();
  return { b, target };
}

export function bump(b: StatusBundle, id: string, patch: Partial<StatusRow>) {
  const s = b.statuses.get(id);
  if (s) b.statuses.set(id, { ...s, ...patch });
}

export function render(cfg: Config, b: StatusBundle, id: string): Json {
  const r = renderStatusFrom(cfg, b, id);
  if (!r) throw notFound();
  return r;
}

/**
 * Renders a status the viewer had interacted with but may no longer see (author blocked them, follow ended): the
 * undo response still describes the status, as Mastodon's does.
 */
export function renderAnyway(cfg: Config, b: StatusBundle, id: string): Json {
  const visible = renderStatusFrom(cfg, b, id);
  if (visible) return visible;
  const s = b.statuses.get(id);
  if (!s) throw notFound();
  const v = b.viewer.id!;
  for (const sid of [id, s.reblogOfId].filter(Boolean) as string[]) {
    const row = b.statuses.get(sid);
    if (!row) continue;
    b.viewer.blockedBy.delete(row.accountId);
    if (!b.mentionIds.has(sid)) b.mentionIds.set(sid, new Set());
    b.mentionIds.get(sid)!.add(v);
  }
  return renderStatusFrom(cfg, b, id) ?? { id };
}

export const targetOf = (id: string) => sql`coalesce((SELECT reblog_of_id FROM statuses WHERE id = ${padId(id)}), ${padId(id)})`;
