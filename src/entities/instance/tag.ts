// Tag and FeaturedTag entities. `name` is what the author typed (display name); the URL uses the normalised name.
import type { tags } from "../../db/schema/index";
import type { Config } from "../../env";
import { tagUrl } from "../urls";

export type TagRow = typeof tags.$inferSelect;

export interface TagHistoryDay {
  day: string; // unix seconds of 00:00 UTC
  uses: string;
  accounts: string;
}

const DAY_MS = 86_400_000;

/** Seven days of history, newest first; days without use are zeros. `counts` is keyed by the day's first ms. */
export function historyDays(counts: Map<number, { uses: number; accounts: number }> | undefined, now = Date.now()): TagHistoryDay[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const out: TagHistoryDay[] = [];
  for (let i = 0; i < 7; i++) {
    const day = today - i * DAY_MS;
    const c = counts?.get(day);
    out.push({ day: String(day / 1000), uses: String(c?.uses ?? 0), accounts: String(c?.accounts ?? 0) });
  }
  return out;
}

export interface TagViewerState {
  following?: boolean;
  featuring?: boolean;
}

/** Tag (docs.joinmastodon.org/entities/Tag); `following` and `featuring` only for a signed-in viewer. */
export interface MastodonTag {
  id: string;
  name: string;
  url: string;
  history: TagHistoryDay[];
  following?: boolean;
  featuring?: boolean;
}

/** FeaturedTag (docs.joinmastodon.org/entities/FeaturedTag); its count is a string, as Mastodon renders it. */
export interface MastodonFeaturedTag {
  id: string;
  name: string;
  url: string;
  statuses_count: string;
  last_status_at: string | null;
}

export function renderTag(cfg: Config, t: Pick<TagRow, "id" | "name" | "displayName">, history: TagHistoryDay[], viewer?: TagViewerState): MastodonTag {
  const out: MastodonTag = {
    id: t.id,
    name: t.displayName || t.name,
    url: tagUrl(cfg, t.name),
    history,
  };
  if (viewer) {
    out.following = viewer.following ?? false;
    if (viewer.featuring !== undefined) out.featuring = viewer.featuring;
  }
  return out;
}

/** FeaturedTag: a tag on a profile, with the owner's use of it. */
export function renderFeaturedTag(
  cfg: Config,
  ft: { id: string; name: string; displayName: string; statusesCount: number; lastStatusAt: number | null },
  username: string,
): MastodonFeaturedTag {
  return {
    id: ft.id,
    name: ft.displayName || ft.name,
    url: `${cfg.origin}/@${username}/tagged/${encodeURIComponent(ft.name)}`,
    statuses_count: String(ft.statusesCount),
    last_status_at: ft.lastStatusAt ? new Date(ft.lastStatusAt).toISOString().slice(0, 10) : null,
  };
}

/**
 * FeaturedTag as an account's profile lists it (GET /api/v1/accounts/:id/featured_tags): a remote account's tag links
 * to the tag's page here, a local one to the profile's tagged statuses. Its `statuses_count` is a number (Mastodon's,
 * and renderFeaturedTag's, is a string); kept as it was answered.
 */
export interface MastodonProfileFeaturedTag extends Omit<MastodonFeaturedTag, "statuses_count"> {
  statuses_count: number;
}

export function renderProfileFeaturedTag(
  cfg: Config,
  ft: { id: string; name: string; tagName: string; statusesCount: number | null; lastStatusAt: number | null },
  owner: { domain: string | null; username: string },
): MastodonProfileFeaturedTag {
  return {
    id: ft.id,
    name: ft.name,
    url: owner.domain ? tagUrl(cfg, ft.tagName) : `${cfg.origin}/@${owner.username}/tagged/${encodeURIComponent(ft.tagName)}`,
    statuses_count: Number(ft.statusesCount ?? 0),
    last_status_at: ft.lastStatusAt ? new Date(ft.lastStatusAt).toISOString().slice(0, 10) : null,
  };
}
