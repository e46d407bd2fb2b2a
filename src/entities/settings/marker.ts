// Marker entity (docs.joinmastodon.org/entities/Marker): the read positions of the home and notifications timelines,
// keyed by timeline; only the timelines asked for (GET) or saved (POST) that have a position appear.
import type { markers } from "../../db/schema/index";
import { isoTime } from "../urls";

export type MarkerRow = typeof markers.$inferSelect;

/** One timeline's position; `version` counts changes of last_read_id (Mastodon's lock_version). */
export interface MastodonMarkerItem {
  last_read_id: string;
  version: number;
  updated_at: string;
}

/** Marker: markers.timeline holds "home" or "notifications" (the markers service validates it). */
export type MastodonMarker = Partial<Record<"home" | "notifications", MastodonMarkerItem>>;

export function renderMarkers(rows: MarkerRow[]): MastodonMarker {
  const out: Record<string, MastodonMarkerItem> = {};
  for (const m of rows) out[m.timeline] = { last_read_id: m.lastReadId, version: m.version, updated_at: isoTime(m.updatedAt) };
  return out;
}
