import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, json, ms } from "../types";

/** Key/value settings an admin can change at run time (title, description, ...), over the env defaults. */
export const instanceSettings = lazyTable(() =>
  sqliteTable("instance_settings", {
    key: text("key").primaryKey(),
    value: text("value").notNull(),
  }),
);

export const rules = lazyTable(() =>
  sqliteTable("rules", {
    id: id("id").primaryKey(),
    text: text("text").notNull(),
    hint: text("hint").notNull().default(""),
    priority: integer("priority").notNull().default(0),
    createdAt: ms("created_at").notNull(),
  }),
);

export const customEmojis = lazyTable(() =>
  sqliteTable(
    "custom_emojis",
    {
      id: id("id").primaryKey(),
      shortcode: text("shortcode").notNull(),
      domain: text("domain"),
      imageKey: text("image_key"),
      imageRemoteUrl: text("image_remote_url"),
      /** A remote emoji's image: NULL when it is to be fetched into R2, else when that was queued (0055). */
      imageCachedAt: ms("image_cached_at"),
      uri: text("uri"),
      visibleInPicker: bool("visible_in_picker").notNull().default(true),
      disabled: bool("disabled").notNull().default(false),
      category: text("category"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("custom_emojis_shortcode_domain").on(t.shortcode, t.domain), index("custom_emojis_local").on(t.shortcode).where(sql`domain IS NULL`)],
  ),
);

export const reports = lazyTable(() =>
  sqliteTable(
    "reports",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(), // reporter
      targetAccountId: id("target_account_id").notNull(),
      statusIds: json<string[]>()("status_ids").notNull(),
      ruleIds: json<string[]>()("rule_ids").notNull(),
      /** Collections of the reported account named in the report (Mastodon 4.6; migrations/0057). */
      collectionIds: json<string[]>()("collection_ids").notNull().default(sql`'[]'`),
      comment: text("comment").notNull().default(""),
      category: text("category").notNull().default("other"), // spam | legal | violation | other
      forward: bool("forward").notNull().default(false),
      actionTakenAt: ms("action_taken_at"),
      assignedAccountId: id("assigned_account_id"),
      uri: text("uri"),
      // migrations/0020_admin_reports_trends.sql: who resolved it (cleared on reopen)
      actionTakenByAccountId: id("action_taken_by_account_id"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [
      index("reports_target").on(t.targetAccountId),
      index("reports_action_taken").on(t.actionTakenAt, t.id),
      index("reports_account").on(t.accountId, t.id),
    ],
  ),
);

/** Instance-level domain blocks (admin). Enforcement lives in policy/visibility and federation. */
export const domainBlocks = lazyTable(() =>
  sqliteTable(
    "domain_blocks",
    {
      id: id("id").primaryKey(),
      domain: text("domain").notNull(),
      severity: text("severity").notNull().default("silence"), // silence | suspend | noop
      rejectMedia: bool("reject_media").notNull().default(false),
      rejectReports: bool("reject_reports").notNull().default(false),
      privateComment: text("private_comment"),
      publicComment: text("public_comment"),
      obfuscate: bool("obfuscate").notNull().default(false),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("domain_blocks_domain").on(t.domain)],
  ),
);

export const domainAllows = lazyTable(() =>
  sqliteTable(
    "domain_allows",
    {
      id: id("id").primaryKey(),
      domain: text("domain").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("domain_allows_domain").on(t.domain)],
  ),
);

export const adminActionLogs = lazyTable(() =>
  sqliteTable("admin_action_logs", {
    id: id("id").primaryKey(),
    accountId: id("account_id").notNull(),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: id("target_id"),
    /** What the target was called when the row was written (migrations/0046): a handle, a domain, a name. */
    humanIdentifier: text("human_identifier"),
    createdAt: ms("created_at").notNull(),
  }),
);

/** Known remote domains (instance peers), filled as federation meets them. */
export const instances = lazyTable(() =>
  sqliteTable("instances", {
    domain: text("domain").primaryKey(),
    firstSeenAt: ms("first_seen_at").notNull(),
  }),
);

// ---- admin access blocks (migrations/0019_admin_blocks.sql; src/services/admin/blocks/email-blocks.ts, admin-ip-blocks.ts) ----

/** Sign-up blocks by canonical e-mail: SHA-256 hex of the address lower-cased, dots and +tag cut from the local part. */
export const canonicalEmailBlocks = lazyTable(() =>
  sqliteTable(
    "canonical_email_blocks",
    {
      id: id("id").primaryKey(),
      canonicalEmailHash: text("canonical_email_hash").notNull(),
      referenceAccountId: id("reference_account_id"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("canonical_email_blocks_hash").on(t.canonicalEmailHash)],
  ),
);

/** Sign-up blocks by e-mail domain (subdomains included). */
export const emailDomainBlocks = lazyTable(() =>
  sqliteTable(
    "email_domain_blocks",
    {
      id: id("id").primaryKey(),
      domain: text("domain").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("email_domain_blocks_domain").on(t.domain)],
  ),
);

/** IP rules: `ip` is the masked network in CIDR form; severity sign_up_requires_approval | sign_up_block | no_access. */
export const ipBlocks = lazyTable(() =>
  sqliteTable(
    "ip_blocks",
    {
      id: id("id").primaryKey(),
      ip: text("ip").notNull(),
      severity: text("severity").notNull(),
      comment: text("comment").notNull().default(""),
      expiresAt: ms("expires_at"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [uniqueIndex("ip_blocks_ip").on(t.ip)],
  ),
);

export type RuleRow = typeof rules.$inferSelect;
export type ReportRow = typeof reports.$inferSelect;
export type DomainBlockRow = typeof domainBlocks.$inferSelect;
export type DomainAllowRow = typeof domainAllows.$inferSelect;
export type CanonicalEmailBlockRow = typeof canonicalEmailBlocks.$inferSelect;
export type EmailDomainBlockRow = typeof emailDomainBlocks.$inferSelect;
export type IpBlockRow = typeof ipBlocks.$inferSelect;
