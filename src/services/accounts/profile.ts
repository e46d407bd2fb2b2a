// update_credentials: profile text, flags, fields, pictures and posting defaults. The account and user rows are
// written (and read back) in one batch; unlocking also authorizes every pending follow request in that batch.
import { eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { DB } from "../../db/client";
import { accounts, users, type ProfileField, type StoredEmoji, type UserSettings } from "../../db/schema";
import type { Config, Env } from "../../env";
import { validationFailed } from "../../lib/http/errors";
import { cleanText, profileLinks, renderPlainText } from "../../lib/text/text";
import { deleteStored, storeUpload } from "../../media/store";
import type { UserViewer } from "../../db/viewer";
import type { AccountRow, UserRow } from "../../db/schema";
import { acceptRequest, pendingRequestsTo } from "../relationships/follows";
import { accountEmojisSql, accountShortcodes } from "../statuses/custom-emojis";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";

export const MAX_DISPLAY_NAME = 30;
export const MAX_NOTE = 500;
export const MAX_FIELDS = 4;
export const MAX_FIELD_NAME = 255;
export const MAX_FIELD_VALUE = 255;

export interface ProfileUpdate {
  displayName?: string;
  note?: string;
  locked?: boolean;
  bot?: boolean;
  discoverable?: boolean;
  indexable?: boolean;
  hideCollections?: boolean;
  fields?: { name: string; value: string }[];
  privacy?: "public" | "unlisted" | "private";
  sensitive?: boolean;
  language?: string | null;
  avatar?: File;
  header?: File;
  /** DELETE /api/v1/profile/avatar and /header: back to the default picture. */
  removeAvatar?: boolean;
  removeHeader?: boolean;
}

/** Mastodon counts characters (code points), not UTF-16 units. */
const chars = (s: string) => Array.from(s).length;

function tooLong(what: string, max: number) {
  return validationFailed(`${what} is too long (maximum is ${max} characters)`);
}

function validate(u: ProfileUpdate): void {
  if (u.displayName !== undefined && chars(u.displayName) > MAX_DISPLAY_NAME) throw tooLong("Display name", MAX_DISPLAY_NAME);
  if (u.note !== undefined && chars(u.note) > MAX_NOTE) throw tooLong("Note", MAX_NOTE);
  if (u.fields) {
    if (u.fields.length > MAX_FIELDS) throw validationFailed(`Fields is too long (maximum is ${MAX_FIELDS} fields)`);
    for (const f of u.fields) {
      if (chars(f.name) > MAX_FIELD_NAME) throw tooLong("Field name", MAX_FIELD_NAME);
      if (chars(f.value) > MAX_FIELD_VALUE) throw tooLong("Field value", MAX_FIELD_VALUE);
    }
  }
}

export interface UpdatedProfile {
  account: AccountRow;
  user: UserRow;
  followRequestsCount: number;
}

export async function updateProfile(
  db: DB,
  fx: Effects,
  cfg: Config,
  env: Pick<Env, "MEDIA">,
  viewer: UserViewer,
  input: ProfileUpdate,
): Promise<UpdatedProfile> {
  const u: ProfileUpdate = {
    ...input,
    displayName: input.displayName === undefined ? undefined : cleanText(input.displayName).trim(),
    note: input.note === undefined ? undefined : cleanText(input.note).trim(),
    // Clients send every row of the form; rows left blank are not fields.
    fields: input.fields?.map((f) => ({ name: cleanText(f.name).trim(), value: cleanText(f.value).trim() })).filter((f) => f.name !== "" || f.value !== ""),
  };
  validate(u);
  const a = viewer.account;
  const now = Date.now();
  const set: Partial<typeof accounts.$inferInsert> = { updatedAt: now };
  if (u.displayName !== undefined) set.displayName = u.displayName;
  if (u.note !== undefined) {
    set.noteSource = u.note;
    set.note = renderPlainText(u.note, profileLinks(cfg.origin));
  }
  if (u.locked !== undefined) set.locked = u.locked;
  if (u.bot !== undefined) set.actorType = u.bot ? "Service" : "Person";
  if (u.discoverable !== undefined) set.discoverable = u.discoverable;
  if (u.indexable !== undefined) set.indexable = u.indexable;
  if (u.hideCollections !== undefined) set.hideCollections = u.hideCollections;
  if (u.fields) {
    const before = new Map(a.fields.map((f) => [`${f.name}\u0000${f.value}`, f.verified_at]));
    set.fields = u.fields.map((f): ProfileField => ({ name: f.name, value: f.value, verified_at: before.get(`${f.name}\u0000${f.value}`) ?? null }));
  }
  // The local custom emojis the name, note and fields use, resolved in the same statement (services/statuses/custom-emojis.ts).
  if (set.displayName !== undefined || set.noteSource !== undefined || set.fields) {
    const codes = accountShortcodes(set.displayName ?? a.displayName, set.noteSource ?? a.noteSource, set.fields ?? a.fields);
    // drizzle takes SQL for any column of an update; the row type just does not say so.
    set.emojis = accountEmojisSql(codes, null) as unknown as StoredEmoji[];
  }
  // Pictures are stored first; their old objects are deleted only once the row points at the new ones.
  const replaced: (string | null)[] = [];
  if (u.avatar) {
    set.avatarKey = (await storeUpload(env, cfg, u.avatar, "avatar")).key;
    replaced.push(a.avatarKey);
  }
  if (u.header) {
    set.headerKey = (await storeUpload(env, cfg, u.header, "header")).key;
    replaced.push(a.headerKey);
  }
  if (u.removeAvatar && !u.avatar) {
    set.avatarKey = null;
    replaced.push(a.avatarKey);
  }
  if (u.removeHeader && !u.header) {
    set.headerKey = null;
    replaced.push(a.headerKey);
  }

  const settings: UserSettings = { ...(viewer.user.settings ?? {}) };
  let settingsChanged = false;
  if (u.privacy !== undefined) {
    settings["posting:default:visibility"] = u.privacy;
    settingsChanged = true;
  }
  if (u.sensitive !== undefined) {
    settings["posting:default:sensitive"] = u.sensitive;
    settingsChanged = true;
  }
  if (u.language !== undefined) {
    settings["posting:default:language"] = u.language;
    settingsChanged = true;
  }

  // Authorizing first lets the returned account row carry the new follower count (triggers run per statement).
  const unlocking = a.locked && u.locked === false;
  const accepted = unlocking ? (await pendingRequestsTo(db, a.id)).map((r) => acceptRequest(db, r, true)) : [];
  const authorize = accepted.flatMap((ch) => ch.stmts);
  const stmts: BatchItem<"sqlite">[] = [...authorize, db.update(accounts).set(set).where(eq(accounts.id, a.id)).returning()];
  if (settingsChanged) stmts.push(db.update(users).set({ settings, updatedAt: now }).where(eq(users.id, viewer.user.id)).returning());
  const res = (await commit(db, fx, stmts, (fx) => {
    for (const ch of accepted) ch.effects(fx);
    fx.federate({ kind: "update_actor", accountId: a.id });
  })) as unknown[];
  const base = authorize.length;
  const account = (res[base] as AccountRow[])[0] ?? a;
  const user = settingsChanged ? ((res[base + 1] as UserRow[])[0] ?? viewer.user) : viewer.user;

  await deleteStored(env, replaced);
  return { account, user, followRequestsCount: unlocking ? 0 : viewer.followRequestsCount };
}
