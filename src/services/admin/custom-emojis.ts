// Staff management of custom emojis (Mastodon's Admin::CustomEmojisController, CustomEmoji#copy!, Form::CustomEmojiBatch):
// upload a local emoji into R2, set its category, show or hide it in the picker, enable, disable, delete, and copy a
// remote emoji to a local one. Mastodon's limits: a local image is PNG, GIF or WebP (told by its bytes, never by the
// name or the declared type) of at most 256 KB; the shortcode is [a-zA-Z0-9_]{2,}. Every change and its
// admin_action_logs row are one batch; the instance documents see the change through the triggers of migration 0021
// (and the cache through src/services/instance/instance-cache.ts).
import { and, eq, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { customEmojis } from "../../db/schema";
import type { Config, Env } from "../../env";
import { baseFetchOptions } from "../../federation/remote/fetch-options";
import { FetchRefused, safeFetch } from "../../net/safe-fetch";
import { notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { randomKeyPart } from "../../media/store";
import { sniff } from "../../media/sniff";
import { SHORTCODE } from "../statuses/custom-emojis";
import { logFor, type Staff } from "./log";

export type CustomEmojiRow = typeof customEmojis.$inferSelect;

/** Mastodon's CustomEmoji::LOCAL_LIMIT. */
export const EMOJI_SIZE_LIMIT = 256 * 1024;
/** Mastodon's CustomEmoji::IMAGE_MIME_TYPES. */
export const EMOJI_TYPES = ["image/png", "image/gif", "image/webp"];
export const CATEGORY_MAX = 64;

const log = logFor("CustomEmoji");

export async function getCustomEmoji(db: DB, id: string): Promise<CustomEmojiRow> {
  const [row] = await db.select().from(customEmojis).where(eq(customEmojis.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

export interface EmojiFilter {
  remote: boolean;
  /** Shortcode prefix. */
  query?: string;
  /** Only this domain (remote). */
  domain?: string;
}

/** One page of emojis for the admin list, by shortcode then domain; `after` is the last shortcode shown. */
export async function adminCustomEmojis(db: DB, f: EmojiFilter, limit: number, offset: number): Promise<CustomEmojiRow[]> {
  const conds: SQL[] = [f.remote ? isNotNull(customEmojis.domain) : isNull(customEmojis.domain)];
  const q = f.query?.trim();
  if (q) conds.push(sql`${customEmojis.shortcode} LIKE ${`${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} ESCAPE '\\'`);
  if (f.remote && f.domain?.trim()) conds.push(eq(customEmojis.domain, f.domain.trim().toLowerCase()));
  return db
    .select()
    .from(customEmojis)
    .where(and(...conds))
    .orderBy(customEmojis.shortcode, customEmojis.domain)
    .limit(limit)
    .offset(offset);
}

function checkShortcode(raw: string | undefined): string {
  const shortcode = raw?.trim().replace(/^:|:$/g, "") ?? "";
  if (!shortcode) throw validationFailed("Shortcode can't be blank");
  if (!SHORTCODE.test(shortcode)) throw validationFailed("Shortcode must be at least 2 characters and only contain alphanumeric characters and underscores");
  return shortcode;
}

function checkCategory(raw: string | undefined): string | null {
  const c = raw?.trim() ?? "";
  if (c.length > CATEGORY_MAX) throw validationFailed(`Category is too long (maximum is ${CATEGORY_MAX} characters)`);
  return c || null;
}

/** The image's real type and extension from its bytes, or a 422. */
function checkImage(bytes: Uint8Array): { mime: string; ext: string } {
  if (bytes.length === 0) throw validationFailed("Image can't be blank");
  if (bytes.length > EMOJI_SIZE_LIMIT) throw validationFailed("Image file size must be less than 256 KB");
  const s = sniff(bytes);
  if (!s || !EMOJI_TYPES.includes(s.mime)) throw validationFailed("Image content type is invalid (PNG, GIF or WebP)");
  return { mime: s.mime, ext: s.ext };
}

/**
 * Inserts a local emoji unless a local one with that shortcode exists (the unique index does not cover NULL domains,
 * so the insert checks itself), with its log row in the same batch. The R2 object is removed when it was not taken.
 */
async function insertLocal(
  db: DB,
  env: Pick<Env, "MEDIA">,
  staff: Staff,
  action: string,
  shortcode: string,
  category: string | null,
  bytes: Uint8Array,
  mime: string,
  ext: string,
) {
  const now = Date.now();
  const id = snowflake(now);
  const key = `custom_emojis/${randomKeyPart()}/${shortcode.toLowerCase()}.${ext}`;
  await env.MEDIA.put(key, bytes, { httpMetadata: { contentType: mime } });
  const [inserted] = await db.batch([
    db.all<{ id: string }>(sql`INSERT INTO custom_emojis (id, shortcode, domain, image_key, visible_in_picker, disabled, category, created_at)
      SELECT ${padId(id)}, ${shortcode}, NULL, ${key}, 1, 0, ${category}, ${now}
      WHERE NOT EXISTS (SELECT 1 FROM custom_emojis WHERE domain IS NULL AND shortcode = ${shortcode})
      RETURNING id`),
    db.run(sql`INSERT INTO admin_action_logs (id, account_id, action, target_type, target_id, human_identifier, created_at)
      SELECT ${padId(snowflake(now))}, ${padId(staff.accountId)}, ${action}, 'CustomEmoji', ${padId(id)}, ${shortcode}, ${now}
      WHERE EXISTS (SELECT 1 FROM custom_emojis WHERE id = ${padId(id)})`),
  ]);
  if (!inserted.length) {
    await env.MEDIA.delete(key);
    throw validationFailed("Shortcode has already been taken");
  }
  return getCustomEmoji(db, id);
}

export interface EmojiUpload {
  shortcode?: string;
  category?: string;
  image: File | null;
}

export async function createCustomEmoji(db: DB, env: Pick<Env, "MEDIA">, staff: Staff, input: EmojiUpload): Promise<CustomEmojiRow> {
  const shortcode = checkShortcode(input.shortcode);
  const category = checkCategory(input.category);
  if (!input.image || typeof input.image === "string") throw validationFailed("Image can't be blank");
  if (input.image.size > EMOJI_SIZE_LIMIT) throw validationFailed("Image file size must be less than 256 KB");
  const bytes = new Uint8Array(await input.image.arrayBuffer());
  const { mime, ext } = checkImage(bytes);
  return insertLocal(db, env, staff, "create", shortcode, category, bytes, mime, ext);
}

/**
 * CustomEmoji#copy!: a local emoji with the remote one's shortcode and image. Tern links remote images where they
 * live, so the image is fetched now (through the SSRF guard, at most 256 KB) and checked like an upload.
 */
export async function copyCustomEmoji(db: DB, env: Pick<Env, "MEDIA">, cfg: Config, staff: Staff, id: string): Promise<CustomEmojiRow> {
  const remote = await getCustomEmoji(db, id);
  if (!remote.domain || !remote.imageRemoteUrl) throw validationFailed("Only a remote emoji can be copied");
  let bytes: Uint8Array;
  try {
    const res = await safeFetch(remote.imageRemoteUrl, { ...baseFetchOptions(cfg), maxBytes: EMOJI_SIZE_LIMIT, timeoutMs: 10_000 });
    if (res.status !== 200) throw new FetchRefused(`HTTP ${res.status}`);
    bytes = res.body;
  } catch (e) {
    if (!(e instanceof FetchRefused)) throw e;
    throw validationFailed(`The image could not be fetched (${e.message})`);
  }
  const { mime, ext } = checkImage(bytes);
  return insertLocal(db, env, staff, "copy", remote.shortcode, remote.category, bytes, mime, ext);
}

export interface EmojiChange {
  /** undefined: unchanged; "" clears it. */
  category?: string;
  visibleInPicker?: boolean;
  disabled?: boolean;
}

/** Category, picker visibility, enabled or disabled (remote emojis can be disabled too, as in Mastodon). */
export async function updateCustomEmoji(db: DB, staff: Staff, id: string, input: EmojiChange): Promise<CustomEmojiRow> {
  const row = await getCustomEmoji(db, id);
  const next = {
    category: input.category === undefined ? row.category : checkCategory(input.category),
    visibleInPicker: input.visibleInPicker ?? row.visibleInPicker,
    disabled: input.disabled ?? row.disabled,
  };
  const action = input.disabled !== undefined && input.disabled !== row.disabled ? (input.disabled ? "disable" : "enable") : "update";
  const now = Date.now();
  await db.batch([db.update(customEmojis).set(next).where(eq(customEmojis.id, id)), log(db, staff, action, id, now)]);
  return { ...row, ...next };
}

/** Removes the emoji (and a local one's image). Statuses keep their shortcodes; they render as text from then on. */
export async function deleteCustomEmoji(db: DB, env: Pick<Env, "MEDIA">, staff: Staff, id: string): Promise<CustomEmojiRow> {
  const row = await getCustomEmoji(db, id);
  const now = Date.now();
  await db.batch([log(db, staff, "destroy", id, now), db.delete(customEmojis).where(eq(customEmojis.id, id))]);
  if (!row.domain && row.imageKey) await env.MEDIA.delete(row.imageKey);
  return row;
}
