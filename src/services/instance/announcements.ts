// Announcements: staff write them (create, edit, publish, unpublish, delete: every change logged), every local user
// reads the published ones, dismisses them and reacts with an emoji (Mastodon's announcements, announcement_mutes and
// announcement_reactions). Open streams hear of each change through an `announcement` effect (src/background/effects-runner.ts).
import { and, eq, sql } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";
import { type DB, runBatch, type Statement } from "../../db/client";
import { announcementDismissals, announcementReactions, announcements } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { Config } from "../../env";
import { notFound, unprocessable } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { cleanText, extractEntities, normalizeTag } from "../../lib/text/text";
import { logFor, type Staff } from "../admin/log";
import { mentionedAccountsQuery, mentionKeys, renderContent } from "../statuses/post-status";
import type { AnnouncementRow } from "../../db/schema";

export interface AnnouncementInput {
  text?: string;
  startsAt?: number | null;
  endsAt?: number | null;
  allDay?: boolean;
  published?: boolean;
}

/** Mastodon's ReactionValidator::LIMIT: distinct reactions per announcement. */
export const REACTION_LIMIT = 8;
const TEXT_LIMIT = 10_000;

/** Text → content and what it links, as a status renders it (mentions of known accounts, hashtags, URLs). */
async function renderText(db: DB, cfg: Config, text: string): Promise<{ content: string; links: string }> {
  const entities = extractEntities(text);
  const keys = mentionKeys(entities, cfg);
  const found = keys.length ? await mentionedAccountsQuery(db, keys) : [];
  const { content, mentioned } = renderContent(cfg, text, found);
  const tags = [...new Set(entities.flatMap((e) => (e.kind === "hashtag" ? [normalizeTag(e.name)] : [])))];
  return { content, links: JSON.stringify({ mentions: mentioned.map((a) => a.id), tags }) };
}

function checkInput(input: AnnouncementInput, existing?: AnnouncementRow): void {
  const text = input.text ?? existing?.text ?? "";
  if (!text.trim()) throw unprocessable("Validation failed: Text can't be blank");
  if (text.length > TEXT_LIMIT) throw unprocessable(`Validation failed: Text is too long (maximum is ${TEXT_LIMIT} characters)`);
  const starts = input.startsAt !== undefined ? input.startsAt : (existing?.startsAt ?? null);
  const ends = input.endsAt !== undefined ? input.endsAt : (existing?.endsAt ?? null);
  if ((starts === null) !== (ends === null)) throw unprocessable("Validation failed: Starts at and ends at must both be set, or neither");
  if (starts !== null && ends !== null && ends <= starts) throw unprocessable("Validation failed: Ends at must be after starts at");
}

const log = logFor("Announcement");

export async function getAnnouncement(db: DB, id: string): Promise<AnnouncementRow> {
  const [row] = await db.select().from(announcements).where(eq(announcements.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

export async function createAnnouncement(db: DB, fx: Effects, cfg: Config, staff: Staff, input: AnnouncementInput): Promise<AnnouncementRow> {
  checkInput(input);
  const now = Date.now();
  const text = cleanText(input.text ?? "");
  const { content, links } = await renderText(db, cfg, text);
  const published = input.published ?? false;
  const row: AnnouncementRow = {
    id: snowflake(now),
    text,
    content,
    links,
    published,
    allDay: input.allDay ?? false,
    startsAt: input.startsAt ?? null,
    endsAt: input.endsAt ?? null,
    publishedAt: published ? now : null,
    createdAt: now,
    updatedAt: now,
  };
  await commit(db, fx, [db.insert(announcements).values(row), log(db, staff, "create", row.id, now)], (fx) => {
    if (published) fx.add({ type: "announcement", event: "announcement", announcementId: row.id });
  });
  return row;
}

export async function updateAnnouncement(db: DB, fx: Effects, cfg: Config, staff: Staff, id: string, input: AnnouncementInput): Promise<AnnouncementRow> {
  const existing = await getAnnouncement(db, id);
  checkInput(input, existing);
  const now = Date.now();
  const text = input.text !== undefined ? cleanText(input.text) : existing.text;
  const rendered = input.text !== undefined ? await renderText(db, cfg, text) : { content: existing.content, links: existing.links };
  const published = input.published ?? existing.published;
  const row: AnnouncementRow = {
    ...existing,
    text,
    ...rendered,
    published,
    allDay: input.allDay ?? existing.allDay,
    startsAt: input.startsAt !== undefined ? input.startsAt : existing.startsAt,
    endsAt: input.endsAt !== undefined ? input.endsAt : existing.endsAt,
    publishedAt: published ? (existing.publishedAt ?? now) : null,
    updatedAt: now,
  };
  await commit(db, fx, [db.update(announcements).set(row).where(eq(announcements.id, id)), log(db, staff, "update", id, now)], (fx) => {
    // Mastodon republishes an edited published announcement; an unpublished one leaves the open clients.
    if (published) fx.add({ type: "announcement", event: "announcement", announcementId: id });
    else if (existing.published) fx.add({ type: "announcement", event: "announcement.delete", announcementId: id });
  });
  return row;
}

export async function publishAnnouncement(db: DB, fx: Effects, cfg: Config, staff: Staff, id: string, publish: boolean): Promise<AnnouncementRow> {
  const existing = await getAnnouncement(db, id);
  if (existing.published === publish) return existing;
  return updateAnnouncement(db, fx, cfg, staff, id, { published: publish });
}

export async function deleteAnnouncement(db: DB, fx: Effects, staff: Staff, id: string): Promise<void> {
  const existing = await getAnnouncement(db, id);
  const now = Date.now();
  await commit(
    db,
    fx,
    [
      db.delete(announcementReactions).where(eq(announcementReactions.announcementId, id)),
      db.delete(announcementDismissals).where(eq(announcementDismissals.announcementId, id)),
      log(db, staff, "destroy", id, now),
      db.delete(announcements).where(eq(announcements.id, id)),
    ],
    (fx) => {
      if (existing.published) fx.add({ type: "announcement", event: "announcement.delete", announcementId: id });
    },
  );
}

// ---- the user side ----

async function publishedAnnouncement(db: DB, id: string): Promise<AnnouncementRow> {
  const row = await getAnnouncement(db, id);
  if (!row.published) throw notFound();
  return row;
}

/** Dismissing is idempotent (Mastodon: announcement_mutes). */
export async function dismissAnnouncement(db: DB, accountId: string, id: string): Promise<void> {
  await publishedAnnouncement(db, id);
  await db.insert(announcementDismissals).values({ accountId, announcementId: id, createdAt: Date.now() }).onConflictDoNothing();
}

/**
 * A reaction's name: a Unicode emoji (one emoji sequence: pictographs, flags, keycaps, with their modifiers and
 * joiners), the shortcode of an enabled local custom emoji, or `shortcode@domain` for an enabled remote one this server
 * knows (Mastodon takes local ones only; the `@domain` form is glitch-soc's and Misskey's, so reactions can use the
 * emojis users see on remote posts). Colons around it are dropped. Returns the name to store, or throws 422.
 */
async function reactionName(db: DB, raw: string): Promise<string> {
  const name = raw.trim();
  if (name.length > 0 && name.length <= 32 && unicodeEmoji().test(name) && /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u.test(name)) return name;
  const m = /^:?([A-Za-z0-9_]{2,64})(?:@([A-Za-z0-9.-]{1,253}(?::\d{1,5})?))?:?$/.exec(name);
  if (m) {
    const [, shortcode, domain] = m;
    const rows = await db.all<{ shortcode: string; domain: string | null }>(
      sql`SELECT shortcode, domain FROM custom_emojis WHERE shortcode = ${shortcode} AND domain IS ${domain?.toLowerCase() ?? null} AND disabled = 0 LIMIT 1`,
    );
    const e = rows[0];
    if (e) return e.domain ? `${e.shortcode}@${e.domain}` : e.shortcode;
  }
  throw unprocessable("Validation failed: Name is not a recognized emoji");
}

const unicodeEmoji = lazy(
  () => /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Modifier}|\u200D|\uFE0E|\uFE0F|\u20E3|[#*0-9]|[\u{E0020}-\u{E007F}])+$/u,
);

export async function addReaction(db: DB, fx: Effects, accountId: string, id: string, raw: string): Promise<void> {
  await publishedAnnouncement(db, id);
  const name = await reactionName(db, raw);
  const p = padId(id);
  // The insert itself enforces the limit: a name new to the announcement is refused once it has 8 others.
  const stmts: Statement[] = [
    db.all(sql`INSERT INTO announcement_reactions (account_id, announcement_id, name, created_at)
      SELECT ${padId(accountId)}, ${p}, ${name}, ${Date.now()}
      WHERE EXISTS (SELECT 1 FROM announcement_reactions WHERE announcement_id = ${p} AND name = ${name})
         OR (SELECT count(DISTINCT name) FROM announcement_reactions WHERE announcement_id = ${p}) < ${REACTION_LIMIT}
      ON CONFLICT DO NOTHING
      RETURNING name`),
    db.all(sql`SELECT 1 AS mine FROM announcement_reactions WHERE announcement_id = ${p} AND name = ${name} AND account_id = ${padId(accountId)}`),
  ];
  const [inserted, mine] = (await runBatch(db, stmts)) as unknown[][];
  if (!inserted?.length && !mine?.length) throw unprocessable("Validation failed: Maximum number of different reactions reached");
  // Recorded after the batch: only a reaction it added is streamed; it travels by the send only (src/effects/commit.ts).
  if (inserted?.length) fx.add({ type: "announcement", event: "announcement.reaction", announcementId: id, name });
}

export async function removeReaction(db: DB, fx: Effects, accountId: string, id: string, raw: string): Promise<void> {
  await publishedAnnouncement(db, id);
  const name = raw
    .trim()
    .replace(/^:|:$/g, "")
    .replace(/@.*$/, (d) => d.toLowerCase());
  const gone = await db
    .delete(announcementReactions)
    .where(
      and(
        eq(announcementReactions.announcementId, id),
        eq(announcementReactions.accountId, accountId),
        sql`${announcementReactions.name} IN (${raw.trim()}, ${name})`,
      ),
    )
    .returning({ name: announcementReactions.name });
  // Recorded after the delete: the reactions it removed; they travel by the send only (src/effects/commit.ts).
  for (const g of gone) fx.add({ type: "announcement", event: "announcement.reaction", announcementId: id, name: g.name });
}
