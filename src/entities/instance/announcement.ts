// Announcement entity (docs.joinmastodon.org/entities/Announcement), for a signed-in reader (`read`, reactions' `me`)
// or for everyone (streaming: Mastodon renders it without an account). Everything a page needs is read in one batch.
import { sql } from "drizzle-orm";
import { type DB, runBatch } from "../../db/client";
import type { Config } from "../../env";
import { padId, unpadId } from "../../lib/text/ids";
import { accountUrl, isoTime, tagUrl } from "../urls";
import { emojiUrl, type MastodonCustomEmoji } from "./custom-emoji";
import { acctOf } from "../accounts/account";
import type { MastodonStatusTag } from "../statuses/status";
import type { AnnouncementRow } from "../../db/schema/index";

/** Reaction: `me` only for a signed-in reader, `url` and `static_url` only for a custom emoji. */
export interface MastodonAnnouncementReaction {
  name: string;
  count: number;
  me?: boolean;
  url?: string;
  static_url?: string;
}

/** The streaming `announcement.reaction` payload: a Reaction (without `me`) and the announcement's id. */
export interface MastodonAnnouncementReactionEvent extends Omit<MastodonAnnouncementReaction, "me"> {
  announcement_id: string;
}

/** Announcement::Account: an account the announcement mentions. */
export interface MastodonAnnouncementAccount {
  id: string;
  username: string;
  url: string;
  acct: string;
}

/**
 * Announcement. `published_at` is null only for one not yet published, which only staff's listing shows; `read` is
 * present for a signed-in reader. Tern links no statuses from an announcement (`statuses` is empty).
 */
export interface MastodonAnnouncement {
  id: string;
  content: string;
  starts_at: string | null;
  ends_at: string | null;
  all_day: boolean;
  published_at: string | null;
  updated_at: string;
  mentions: MastodonAnnouncementAccount[];
  statuses: { id: string; url: string }[];
  tags: MastodonStatusTag[];
  emojis: MastodonCustomEmoji[];
  reactions: MastodonAnnouncementReaction[];
  read?: boolean;
}

function linksOf(row: AnnouncementRow): { mentions: string[]; tags: string[] } {
  try {
    const l = JSON.parse(row.links) as { mentions?: unknown; tags?: unknown };
    return {
      mentions: Array.isArray(l.mentions) ? l.mentions.map(String) : [],
      tags: Array.isArray(l.tags) ? l.tags.map(String) : [],
    };
  } catch {
    return { mentions: [], tags: [] };
  }
}

interface ReactionRow {
  announcement_id: string;
  name: string;
  n: number;
  me: number;
}

interface EmojiRow {
  name: string;
  image_key: string | null;
  image_remote_url: string | null;
}

/**
 * The custom emojis of the reactions to the announcements in `ids` (a JSON list of padded ids), by reaction name: a
 * local shortcode, or `shortcode@domain` for a remote emoji. Disabled emojis have none.
 */
function reactionEmojisStatement(db: DB, ids: string) {
  return db.all<EmojiRow>(sql`WITH r AS (SELECT DISTINCT name FROM announcement_reactions WHERE announcement_id IN (SELECT value FROM json_each(${ids})))
    SELECT r.name, e.image_key, e.image_remote_url FROM r JOIN custom_emojis e ON e.shortcode = r.name AND e.domain IS NULL AND e.disabled = 0
    UNION ALL
    SELECT r.name, e.image_key, e.image_remote_url FROM r JOIN custom_emojis e
      ON e.shortcode = substr(r.name, 1, instr(r.name, '@') - 1) AND e.domain = substr(r.name, instr(r.name, '@') + 1) AND e.disabled = 0
    WHERE instr(r.name, '@') > 1`);
}

/** The emoji image of each reaction name that is a custom emoji. */
function emojiUrls(cfg: Config, rows: EmojiRow[]): Map<string, string> {
  return new Map(
    rows.flatMap((e) => {
      const url = emojiUrl(cfg, e);
      return url ? [[e.name, url] as const] : [];
    }),
  );
}

/** The streaming `announcement.reaction` payload (Mastodon's ReactionSerializer plus the announcement id): the name's count, and its image for a custom emoji. */
export async function renderReactionEvent(db: DB, cfg: Config, announcementId: string, name: string): Promise<MastodonAnnouncementReactionEvent> {
  const p = padId(announcementId);
  const [[count], emojis] = (await runBatch(db, [
    db.all(sql`SELECT count(*) AS n FROM announcement_reactions WHERE announcement_id = ${p} AND name = ${name}`),
    reactionEmojisStatement(db, JSON.stringify([p])),
  ])) as [{ n: number }[], EmojiRow[]];
  const url = emojiUrls(cfg, emojis).get(name);
  return { name, count: Number(count?.n ?? 0), ...(url ? { url, static_url: url } : {}), announcement_id: announcementId };
}

interface MentionRow {
  id: string;
  username: string;
  domain: string | null;
  url: string | null;
  uri: string;
}

/** Renders announcements in order; `viewerId` null renders them for everyone (no `read`, no `me`). */
export async function renderAnnouncements(db: DB, cfg: Config, rows: AnnouncementRow[], viewerId: string | null): Promise<MastodonAnnouncement[]> {
  if (!rows.length) return [];
  const ids = JSON.stringify(rows.map((r) => padId(r.id)));
  const mentionIds = JSON.stringify([...new Set(rows.flatMap((r) => linksOf(r).mentions))].map(padId));
  const v = viewerId ? padId(viewerId) : "";
  const [reactions, dismissed, emojis, mentioned] = (await runBatch(db, [
    db.all(sql`SELECT announcement_id, name, count(*) AS n, max(account_id = ${v}) AS me, min(created_at) AS first
      FROM announcement_reactions WHERE announcement_id IN (SELECT value FROM json_each(${ids}))
      GROUP BY announcement_id, name ORDER BY first`),
    db.all(sql`SELECT announcement_id FROM announcement_dismissals WHERE account_id = ${v} AND announcement_id IN (SELECT value FROM json_each(${ids}))`),
    reactionEmojisStatement(db, ids),
    db.all(sql`SELECT id, username, domain, url, uri FROM accounts WHERE id IN (SELECT value FROM json_each(${mentionIds})) AND suspended_at IS NULL`),
  ])) as [ReactionRow[], { announcement_id: string }[], EmojiRow[], MentionRow[]];
  const read = new Set(dismissed.map((d) => unpadId(String(d.announcement_id))));
  const reactionUrl = emojiUrls(cfg, emojis);
  const byAnnouncement = new Map<string, MastodonAnnouncementReaction[]>();
  for (const r of reactions) {
    const id = unpadId(String(r.announcement_id));
    const url = reactionUrl.get(r.name);
    const reaction: MastodonAnnouncementReaction = { name: r.name, count: Number(r.n) };
    if (viewerId) reaction.me = Number(r.me) === 1;
    if (url) Object.assign(reaction, { url, static_url: url });
    const list = byAnnouncement.get(id) ?? [];
    list.push(reaction);
    byAnnouncement.set(id, list);
  }
  const accounts = new Map(mentioned.map((a) => [unpadId(String(a.id)), a]));
  return rows.map((row) => {
    const links = linksOf(row);
    const out: MastodonAnnouncement = {
      id: row.id,
      content: row.content,
      starts_at: isoTime(row.startsAt),
      ends_at: isoTime(row.endsAt),
      all_day: row.allDay,
      published_at: isoTime(row.publishedAt),
      updated_at: isoTime(row.updatedAt),
      mentions: links.mentions.flatMap((id) => {
        const a = accounts.get(id);
        return a ? [{ id, username: a.username, url: a.url ?? (a.domain ? a.uri : accountUrl(cfg, a.username)), acct: acctOf(a) }] : [];
      }),
      statuses: [],
      tags: links.tags.map((name) => ({ name, url: tagUrl(cfg, name) })),
      emojis: [],
      reactions: byAnnouncement.get(row.id) ?? [],
    };
    if (viewerId) out.read = read.has(row.id);
    return out;
  });
}
