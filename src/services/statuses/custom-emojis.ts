// Custom emojis on statuses and accounts, as Mastodon keeps them (CustomEmoji, ActivityPub::Activity::Create
// #process_emoji, ProcessAccountService#process_emoji): the Emoji tags of remote objects are stored per domain, and
// what a text shows is the emojis whose `:shortcode:` it contains (CustomEmoji.from_text), of the author's domain, or
// local ones (domain NULL, not disabled) for local authors.
//
// Costs: nothing here adds a D1 round trip. Remote emojis are upserted by ONE statement in the batch that writes the
// status or account; a status stores the shortcodes it uses (`statuses.emoji_shortcodes`) and the status bundle finds
// their emojis with one more statement in its batch; an account stores its emojis resolved (`accounts.emojis`, by a
// subquery in the statement that writes the profile), so rendering an account reads nothing.
import { type SQL, sql } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";
import type { DB, Statement } from "../../db/client";
import type { StoredEmoji } from "../../db/schema";
import { blockingDomains } from "../../lib/text/domain-name";
import { padId, snowflake } from "../../lib/text/ids";
import { valueList } from "../../db/id-list";

/** Emoji tags taken from one remote object, and shortcodes kept for one text (Mastodon has no cap; a hostile peer would). */
export const MAX_EMOJIS_PER_OBJECT = 50;
/** Mastodon's SHORTCODE_RE_FRAGMENT (`[a-zA-Z0-9_]{2,}`), with a length cap. */
export const SHORTCODE = /^[a-zA-Z0-9_]{2,64}$/;
// Mastodon's CustomEmoji::SCAN_RE: `:code:` not glued to a letter, digit or colon on either side (Ruby's ^ and $ are
// line anchors, hence the m flag).
const scanRe = lazy(() => /(?<=[^\p{L}\p{N}:]|^):([a-zA-Z0-9_]{2,64}):(?=[^\p{L}\p{N}:]|$)/gmu);

/** The distinct shortcodes written as `:code:` in the texts, in order of first use, at most MAX_EMOJIS_PER_OBJECT. */
export function shortcodesIn(...texts: (string | null | undefined)[]): string[] {
  const out = new Set<string>();
  for (const t of texts) {
    if (!t?.includes(":")) continue;
    for (const m of t.matchAll(scanRe())) {
      out.add(m[1]!);
      if (out.size >= MAX_EMOJIS_PER_OBJECT) return [...out];
    }
  }
  return [...out];
}

/** What a status row keeps: the shortcodes, or null when there are none. */
export function statusShortcodes(...texts: (string | null | undefined)[]): string[] | null {
  const codes = shortcodesIn(...texts);
  return codes.length ? codes : null;
}

export interface RemoteEmoji {
  shortcode: string;
  url: string;
  uri: string | null;
}

/**
 * One statement storing the Emoji tags of an object from `domain`: new shortcodes are inserted, known ones take the
 * new image URL (Mastodon re-downloads on a new URL or a newer `updated`; Tern links the image where it lives, so a
 * new URL is the only change that matters). Emojis an admin disabled stay disabled. Nothing is stored from a domain
 * whose media is rejected (Mastodon's skip_download?). Null when there is nothing to store.
 */
export function upsertRemoteEmojisStatement(db: DB, domain: string, emojis: RemoteEmoji[], now = Date.now()): Statement | null {
  const seen = new Set<string>();
  const rows: [string, string, string, string | null][] = [];
  for (const e of emojis) {
    if (!SHORTCODE.test(e.shortcode) || seen.has(e.shortcode)) continue;
    seen.add(e.shortcode);
    rows.push([padId(snowflake(now)), e.shortcode, e.url, e.uri]);
    if (rows.length >= MAX_EMOJIS_PER_OBJECT) break;
  }
  if (!rows.length) return null;
  return db.run(sql`INSERT INTO custom_emojis (id, shortcode, domain, image_remote_url, uri, visible_in_picker, disabled, created_at)
    SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), ${domain.toLowerCase()}, json_extract(j.value, '$[2]'),
      json_extract(j.value, '$[3]'), 1, 0, ${now}
    FROM json_each(${JSON.stringify(rows)}) j
    WHERE NOT EXISTS (SELECT 1 FROM domain_blocks WHERE reject_media = 1 AND domain IN ${valueList(blockingDomains(domain))})
    ON CONFLICT (shortcode, domain) DO UPDATE SET image_remote_url = excluded.image_remote_url, uri = excluded.uri,
      image_key = CASE WHEN custom_emojis.image_remote_url IS excluded.image_remote_url THEN custom_emojis.image_key ELSE NULL END,
      image_cached_at = CASE WHEN custom_emojis.image_remote_url IS excluded.image_remote_url THEN custom_emojis.image_cached_at ELSE NULL END
    WHERE custom_emojis.image_remote_url IS NOT excluded.image_remote_url OR custom_emojis.uri IS NOT excluded.uri`);
}

/**
 * The value of `accounts.emojis` for a profile whose texts use `shortcodes`: a subquery over custom_emojis (of
 * `domain`, NULL for local accounts; enabled ones only), to put in the statement that writes the profile. It sees
 * emojis upserted earlier in the same batch.
 */
export function accountEmojisSql(shortcodes: string[], domain: string | null): SQL {
  return sql`(SELECT json_group_array(json_object('id', id, 'shortcode', shortcode, 'image_key', image_key, 'image_remote_url', image_remote_url,
      'visible_in_picker', visible_in_picker, 'uri', uri))
    FROM (SELECT e.id, e.shortcode, e.image_key, e.image_remote_url, e.visible_in_picker, e.uri FROM json_each(${JSON.stringify(shortcodes)}) j
      JOIN custom_emojis e ON e.shortcode = j.value AND e.domain IS ${domain} AND e.disabled = 0 ORDER BY j.key))`;
}

/** The shortcodes of an account's name, note and fields (Mastodon's Account#emojis: note, display name, field names and values). */
export function accountShortcodes(displayName: string, note: string, fields: { name: string; value: string }[]): string[] {
  return shortcodesIn(note, displayName, ...fields.flatMap((f) => [f.name, f.value]));
}

/** A row of the status bundle's emoji statement. */
export interface StatusEmojiRow extends StoredEmoji {
  status_id: string;
}

/**
 * The emojis of the statuses in `ids` (a subquery of padded status ids): for each status the enabled emojis of its
 * author's domain (local ones for a local author) named in its `emoji_shortcodes`, in text order.
 */
export function statusEmojisStatement(db: DB, ids: SQL) {
  return db.all<StatusEmojiRow>(sql`SELECT s.id AS status_id, e.id, e.shortcode, e.image_key, e.image_remote_url, e.visible_in_picker, e.uri
    FROM statuses s JOIN accounts a ON a.id = s.account_id, json_each(s.emoji_shortcodes) j
    JOIN custom_emojis e ON e.shortcode = j.value AND e.domain IS a.domain AND e.disabled = 0
    WHERE s.id IN ${ids} AND s.emoji_shortcodes IS NOT NULL
    ORDER BY s.id, j.key`);
}

/** Local, enabled emojis among `shortcodes` (a local status just written, rendered without reading it back). */
export function localEmojisStatement(db: DB, shortcodes: string[]) {
  return db.all<StoredEmoji>(sql`SELECT e.id, e.shortcode, e.image_key, e.image_remote_url, e.visible_in_picker, e.uri
    FROM json_each(${JSON.stringify(shortcodes)}) j JOIN custom_emojis e ON e.shortcode = j.value AND e.domain IS NULL AND e.disabled = 0
    ORDER BY j.key`);
}
