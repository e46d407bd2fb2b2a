// Web Push: one subscription per access token (Mastodon's Web::PushSubscription), and the VAPID key pair the server
// signs with when the operator has not configured one (src/push/keys.ts).
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, json, ms } from "../types";

export type PushPolicy = "all" | "followed" | "follower" | "none";

export const webPushSubscriptions = lazyTable(() =>
  sqliteTable(
    "web_push_subscriptions",
    {
      id: id("id").primaryKey(),
      // Revoking or deleting the token deletes the subscription (triggers in migrations/0002_push.sql).
      accessTokenId: id("access_token_id").notNull(),
      userId: id("user_id").notNull(),
      accountId: id("account_id").notNull(), // the recipient whose notifications are pushed
      endpoint: text("endpoint").notNull(),
      keyP256dh: text("key_p256dh").notNull(), // base64url, 65-byte uncompressed P-256 point
      keyAuth: text("key_auth").notNull(), // base64url, 16 bytes
      standard: bool("standard").notNull().default(false), // RFC 8291 aes128gcm + `vapid` auth; else legacy aesgcm
      alerts: json<Record<string, boolean>>()("alerts").notNull(),
      policy: text("policy").$type<PushPolicy>().notNull().default("all"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
      // Since when its pushes have failed without a success between (null: the last push got through). One failing for
      // three days is deleted (src/push/deliver.ts).
      failingSince: ms("failing_since"),
    },
    (t) => [uniqueIndex("web_push_subscriptions_token").on(t.accessTokenId), index("web_push_subscriptions_account").on(t.accountId)],
  ),
);

/** At most one row (id = 1): the generated VAPID pair. The private scalar is sealed under SECRET_KEY_BASE. */
export const vapidKeys = lazyTable(() =>
  sqliteTable("vapid_keys", {
    id: integer("id").primaryKey(),
    publicKey: text("public_key").notNull(),
    privateKeySealed: text("private_key_sealed").notNull(),
    createdAt: ms("created_at").notNull(),
  }),
);
