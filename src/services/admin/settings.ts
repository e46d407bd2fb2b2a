// Server settings (Mastodon's Admin::SettingsController and Form::AdminSettings): title, short and long description,
// contact e-mail, registrations mode and message, and the thumbnail. Stored in instance_settings (keys in
// SETTING, src/services/instance/instance.ts) over the env defaults: a blank value removes the key, so the env default shows
// again. The thumbnail is an image in R2 under a server-made key. Every save writes one admin_action_logs row
// (target Form::AdminSettings) in the batch that writes the keys; the instance documents see the change through the
// triggers of migration 0021.
import { inArray, sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { runBatch } from "../../db/client";
import { settingStatement } from "../../db/setting-statement";
import { instanceSettings } from "../../db/schema";
import type { Env } from "../../env";
import { validationFailed } from "../../lib/http/errors";
import { AVATAR_LIMIT, inspectFile, putInspected, randomKeyPart } from "../../media/store";
import { adminLogStatement, type Staff } from "./log";
import { SETTING } from "../instance/instance";

export const REGISTRATIONS_MODES = ["open", "approval", "closed"] as const;

/** Form field → settings key and length cap. */
/** The text settings: the key each is stored under and its longest value. */
export const TEXT_FIELDS = {
  title: { key: SETTING.title, max: 200 },
  short_description: { key: SETTING.shortDescription, max: 500 },
  description: { key: SETTING.description, max: 10_000 },
  contact_email: { key: SETTING.contactEmail, max: 320 },
  registrations_message: { key: SETTING.registrationsMessage, max: 1000 },
} as const;

export type SettingsField = keyof typeof TEXT_FIELDS | "registrations_mode" | "trendable_by_default";

export type SettingsInput = Partial<Record<SettingsField, string>>;

const logRow = (db: DB, staff: Staff, now: number) => adminLogStatement(db, staff, "update", "Form::AdminSettings", null, now);

/** Writes the given fields (missing ones are unchanged; blank ones fall back to the env default). */
export async function updateSettings(db: DB, staff: Staff, input: SettingsInput): Promise<void> {
  const set: [string, string][] = [];
  const cleared: string[] = [];
  for (const [field, { key, max }] of Object.entries(TEXT_FIELDS)) {
    const raw = input[field as keyof typeof TEXT_FIELDS];
    if (raw === undefined) continue;
    const v = raw.trim();
    if (v.length > max) throw validationFailed(`${field.replace(/_/g, " ")} is too long (maximum is ${max} characters)`);
    if (field === "contact_email" && v && !/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(v)) throw validationFailed("Contact e-mail is invalid");
    if (v) set.push([key, v]);
    else cleared.push(key);
  }
  if (input.registrations_mode !== undefined && input.registrations_mode !== "") {
    if (!(REGISTRATIONS_MODES as readonly string[]).includes(input.registrations_mode))
      throw validationFailed("Registrations mode is not included in the list");
    set.push([SETTING.registrationsMode, input.registrations_mode]);
  }
  // Mastodon's "Allow trends without prior review": "1" or "0" (the checkbox's hidden companion sends "0").
  if (input.trendable_by_default !== undefined) set.push([SETTING.trendableByDefault, input.trendable_by_default === "1" ? "1" : "0"]);
  const now = Date.now();
  const stmts: Statement[] = set.map(([k, v]) => settingStatement(db, k, v));
  if (cleared.length) stmts.push(db.delete(instanceSettings).where(inArray(instanceSettings.key, cleared)));
  stmts.push(logRow(db, staff, now));
  await runBatch(db, stmts);
}

/** Stores a new thumbnail (a still or animated image of at most 8 MB, told by its bytes) and drops the old one. */
export async function setThumbnail(db: DB, env: Pick<Env, "MEDIA">, staff: Staff, file: File | null): Promise<string> {
  if (!file || typeof file === "string" || file.size === 0) throw validationFailed("Thumbnail can't be blank");
  const x = await inspectFile(file, { imagesOnly: true, imageLimit: AVATAR_LIMIT });
  const key = `site_uploads/${randomKeyPart()}/thumbnail.${x.sniffed.ext}`;
  await putInspected(env, key, file, x);
  const old = await oldThumbnail(db);
  const now = Date.now();
  await runBatch(db, [settingStatement(db, SETTING.thumbnail, key), logRow(db, staff, now)]);
  if (old) await env.MEDIA.delete(old);
  return key;
}

export async function removeThumbnail(db: DB, env: Pick<Env, "MEDIA">, staff: Staff): Promise<void> {
  const old = await oldThumbnail(db);
  if (!old) return;
  const now = Date.now();
  await runBatch(db, [db.delete(instanceSettings).where(sql`${instanceSettings.key} = ${SETTING.thumbnail}`), logRow(db, staff, now)]);
  await env.MEDIA.delete(old);
}

async function oldThumbnail(db: DB): Promise<string | null> {
  const rows = await db.all<{ value: string }>(sql`SELECT value FROM instance_settings WHERE key = ${SETTING.thumbnail}`);
  return rows[0]?.value ?? null;
}
