// Push subscriptions (Mastodon's Web::PushSubscription): one per access token. A new subscription replaces the
// token's old one; revoking or deleting the token removes it (triggers in migrations/0002_push.sql). Each call is one
// D1 round trip, the VAPID key row read in the same batch for `server_key`.
import { eq, sql } from "drizzle-orm";
import { type DB, idList } from "../db/client";
import { webPushSubscriptions } from "../db/schema";
import type { Config, Env } from "../env";
import { validationFailed } from "../lib/http/errors";
import { snowflake, unpadId } from "../lib/text/ids";
import { FetchRefused } from "../net/safe-fetch";
import { base64url } from "./base64";
import { parseClientKeys } from "./encrypt";
import { checkPushEndpoint } from "./endpoint";
import { vapidPublicKey, vapidRowQuery } from "./keys";
import { type Alerts, alertsFrom, type MastodonWebPushSubscription, renderPushSubscription } from "../entities/settings/push-subscription";
import type { PushJob, PushPolicy } from "./types";

export interface SubscriptionOwner {
  tokenId: string;
  userId: string;
  accountId: string;
}

export interface SubscriptionData {
  alerts: Alerts;
  policy: PushPolicy;
}

export interface NewSubscription extends SubscriptionData {
  endpoint: string;
  p256dh: string;
  auth: string;
  standard: boolean;
}

/** Validates the endpoint (SSRF guard, https) and the keys; 422 when either cannot be used. */
async function validated(cfg: Config, s: NewSubscription): Promise<{ endpoint: string; p256dh: string; auth: string }> {
  let endpoint: URL;
  try {
    endpoint = checkPushEndpoint(s.endpoint, cfg);
  } catch (e) {
    if (e instanceof FetchRefused) throw validationFailed(`Endpoint is not a usable push URL (${e.reason})`);
    throw e;
  }
  const keys = await parseClientKeys({ p256dh: s.p256dh, auth: s.auth });
  if (!keys) throw validationFailed("Subscription keys are invalid (p256dh must be a P-256 public key, auth 16 bytes)");
  return { endpoint: storedEndpoint(s.endpoint, endpoint), p256dh: base64url(keys.publicKey), auth: base64url(keys.auth) };
}

/**
 * The endpoint kept (and shown back) as the client sent it, as Mastodon stores it, when parsing changed nothing but the
 * root path's "/" (`https://push.example` → `https://push.example/`); any other difference (case, default port,
 * escapes) keeps the parsed form, whose host the delivery circuit reads in SQL.
 */
function storedEndpoint(raw: string, parsed: URL): string {
  const href = parsed.toString();
  return href === `${raw}/` && parsed.pathname === "/" && !parsed.search && !parsed.hash ? raw : href;
}

/** POST: replaces the token's subscription with a new one (new id, as Mastodon destroys and creates). */
export async function createSubscription(db: DB, env: Env, cfg: Config, owner: SubscriptionOwner, s: NewSubscription): Promise<MastodonWebPushSubscription> {
  const v = await validated(cfg, s);
  const now = Date.now();
  const [, inserted, key] = await db.batch([
    db.delete(webPushSubscriptions).where(eq(webPushSubscriptions.accessTokenId, owner.tokenId)),
    db
      .insert(webPushSubscriptions)
      .values({
        id: snowflake(now),
        accessTokenId: owner.tokenId,
        userId: owner.userId,
        accountId: owner.accountId,
        endpoint: v.endpoint,
        keyP256dh: v.p256dh,
        keyAuth: v.auth,
        standard: s.standard,
        alerts: alertsFrom(s.alerts),
        policy: s.policy,
        createdAt: now,
        updatedAt: now,
      })
      .returning(),
    vapidRowQuery(db),
  ]);
  // A plain insert (no conflict clause) returns the one row it wrote.
  return renderPushSubscription(inserted[0]!, await vapidPublicKey(db, env, key[0] ?? null));
}

/** GET: the token's subscription, or null. */
export async function findSubscription(db: DB, env: Env, tokenId: string): Promise<MastodonWebPushSubscription | null> {
  const [rows, key] = await db.batch([
    db.select().from(webPushSubscriptions).where(eq(webPushSubscriptions.accessTokenId, tokenId)).limit(1),
    vapidRowQuery(db),
  ]);
  return rows[0] ? renderPushSubscription(rows[0], await vapidPublicKey(db, env, key[0] ?? null)) : null;
}

/** PUT: replaces the alerts and policy (only the data part can change, as in Mastodon); null when there is none. */
export async function updateSubscription(db: DB, env: Env, tokenId: string, data: SubscriptionData): Promise<MastodonWebPushSubscription | null> {
  const [rows, key] = await db.batch([
    db
      .update(webPushSubscriptions)
      .set({ alerts: data.alerts, policy: data.policy, updatedAt: Date.now() })
      .where(eq(webPushSubscriptions.accessTokenId, tokenId))
      .returning(),
    vapidRowQuery(db),
  ]);
  return rows[0] ? renderPushSubscription(rows[0], await vapidPublicKey(db, env, key[0] ?? null)) : null;
}

/** DELETE: removes the token's subscription, if any. */
export async function deleteSubscription(db: DB, tokenId: string): Promise<void> {
  await db.delete(webPushSubscriptions).where(eq(webPushSubscriptions.accessTokenId, tokenId));
}

/** Removes one subscription (the push service said it is gone). */
export function deleteSubscriptionById(db: DB, id: string) {
  return db.delete(webPushSubscriptions).where(eq(webPushSubscriptions.id, id));
}

/**
 * SQL: does subscription `s` want notification `n` pushed? The alert for the notification's type must be on, and the
 * policy must admit the sender (Mastodon's policy_allows_notification?): `followed` = the recipient follows the
 * sender, `follower` = the sender follows the recipient, `none` = nobody. Its token must still be live.
 */
export const PUSHABLE = sql`json_extract(s.alerts, '$."' || n.type || '"') = 1 AND n.filtered = 0
  AND EXISTS (SELECT 1 FROM oauth_access_tokens t WHERE t.id = s.access_token_id AND t.revoked_at IS NULL)
  AND (s.policy = 'all'
    OR (s.policy = 'followed' AND EXISTS (SELECT 1 FROM follows f WHERE f.account_id = n.account_id AND f.target_account_id = n.from_account_id))
    OR (s.policy = 'follower' AND EXISTS (SELECT 1 FROM follows f WHERE f.account_id = n.from_account_id AND f.target_account_id = n.account_id)))`;

/** A recipient has one subscription per signed-in app; this bounds the fan-out of one notification. */
const MAX_SUBSCRIPTIONS_PER_NOTIFICATION = 50;

/**
 * The pushes some notifications cause, in one query: one row per subscription of each recipient that wants it (none
 * for a skipped notification), at most MAX_SUBSCRIPTIONS_PER_NOTIFICATION per notification. A statement, so the
 * caller can batch it with the other reads of the same notifications (src/background/effects-runner.ts notifyAll).
 */
export function pushTargetsStatement(db: DB, notificationIds: string[]) {
  return db.all<{ id: string; nid: string }>(sql`SELECT id, nid FROM (
      SELECT s.id AS id, n.id AS nid, row_number() OVER (PARTITION BY n.id ORDER BY s.id) AS k FROM notifications n
      JOIN web_push_subscriptions s ON s.account_id = n.account_id
      WHERE n.id IN ${idList(notificationIds)} AND ${PUSHABLE})
    WHERE k <= ${sql.raw(String(MAX_SUBSCRIPTIONS_PER_NOTIFICATION))} ORDER BY nid, id`);
}

/** One push job per row of pushTargetsStatement. */
export function pushJobsOf(rows: readonly { id: string; nid: string }[]): PushJob[] {
  return rows.map((r) => ({ type: "push", subscriptionId: unpadId(String(r.id)), notificationId: unpadId(String(r.nid)) }));
}
