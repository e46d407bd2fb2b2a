// The single-use links mails carry: migrations/0047_mail.sql (src/services/auth/email-links.ts).
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, ms } from "../types";

export type EmailLinkPurpose = "confirm" | "reconfirm" | "reset_password";

/** One link: the SHA-256 of its token, for whom, to which address, until when. Deleted when used or replaced. */
export const emailLinks = lazyTable(() =>
  sqliteTable(
    "email_links",
    {
      id: id("id").primaryKey(),
      userId: id("user_id").notNull(),
      purpose: text("purpose").$type<EmailLinkPurpose>().notNull(),
      tokenHash: text("token_hash").notNull(),
      email: text("email").notNull(),
      expiresAt: integer("expires_at").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [
      uniqueIndex("email_links_token_hash").on(t.tokenHash),
      index("email_links_user").on(t.userId, t.purpose),
      index("email_links_expires_at").on(t.expiresAt),
    ],
  ),
);
