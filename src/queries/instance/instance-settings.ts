// The instance's settings as stored (instance_settings: the admin settings page writes them; missing keys fall back to
// the env's configuration), read by the instance documents, sign-up and the pages.
import type { DB } from "../../db/client";
import { instanceSettings } from "../../db/schema";
import type { Config, RegistrationsMode } from "../../env";

/**
 * Keys of instance_settings this module reads (the admin helper writes them). Missing keys fall back to env config.
 * Timestamps of long texts are stored under `<key>_updated_at` (ms).
 */
export const SETTING = {
  title: "site_title",
  shortDescription: "site_short_description",
  description: "site_description",
  extendedDescription: "site_extended_description",
  contactEmail: "site_contact_email",
  privacyPolicy: "site_privacy_policy",
  termsOfService: "site_terms_of_service",
  registrationsMessage: "registrations_message",
  statusPageUrl: "status_page_url",
  /** all | users | disabled (Mastodon's show_domain_blocks). */
  showDomainBlocks: "show_domain_blocks",
  /** open | approval | closed, over REGISTRATIONS_MODE (the admin settings page writes it). */
  registrationsMode: "registrations_mode",
  /** "1": trends need no prior review (Mastodon's trendable_by_default; absent or "0": review required, its default). */
  trendableByDefault: "trendable_by_default",
  /** R2 key of the instance thumbnail (the admin settings page uploads it). */
  thumbnail: "site_thumbnail",
} as const;

export type Settings = Record<string, string>;

/** The registrations mode: the admin setting when one is stored, else the env's. */
export function registrationsMode(cfg: Config, s: Settings): RegistrationsMode {
  const v = s[SETTING.registrationsMode];
  return v === "open" || v === "approval" || v === "closed" ? v : cfg.registrations;
}

export function settingsQuery(db: DB) {
  return db.select({ key: instanceSettings.key, value: instanceSettings.value }).from(instanceSettings);
}

export function toSettings(rows: { key: string; value: string }[]): Settings {
  const out: Settings = {};
  for (const r of rows) out[r.key] = r.value;
  return out;
}
