// What every interaction on a status shares (favourite, reblog, bookmark, pin, conversation mute): doing one needs
// the status to be visible (security B15: 404 otherwise); undoing one's own works even after access was lost (spec).
// The status is loaded once with its viewer relations (one batch), the write is one batch, and the response is
// rendered from the loaded bundle with the change applied in memory (the counts and the viewer's own flags).
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { loadStatusBundle, renderStatusFrom, type MastodonStatus, type StatusBundle, type StatusRow } from "../../entities/statuses/status";
import type { Config } from "../../env";
import { notFound } from "../../lib/http/errors";
import { padId } from "../../lib/text/ids";

/** What an interaction answers: the Status it applied to. */
export type Json = MastodonStatus;

/** What an undo answers: the Status; only its id when its author is suspended (nothing of theirs is shown). */
export type UndoneStatus = MastodonStatus | { id: string };

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
 * Renders a status the viewer had interacted with and just undid, though they may no longer see it (its author
 * blocked them, a follow ended): the undo response still describes the status, as Mastodon's does. The renderer is
 * told so (`access: "own-interaction"`); the bundle is not touched.
 */
export function renderAnyway(cfg: Config, b: StatusBundle, id: string): UndoneStatus {
  if (!b.statuses.has(id)) throw notFound();
  return renderStatusFrom(cfg, b, id, { access: "own-interaction" }) ?? { id };
}

export const targetOf = (id: string) => sql`coalesce((SELECT reblog_of_id FROM statuses WHERE id = ${padId(id)}), ${padId(id)})`;
