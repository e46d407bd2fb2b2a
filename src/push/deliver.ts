// Sends one push (a PushJob, from the JOBS queue, never inside a request): loads the subscription, the notification
// and the VAPID key in one D1 batch, re-checks that the subscription still wants it, encrypts (aes128gcm for
// `standard` subscriptions, else Mastodon's legacy aesgcm), signs with VAPID and POSTs through the SSRF guard.
//
// The push service's answer is read as Mastodon's Web::PushNotificationWorker reads it: 2xx is done; a 4xx other than
// 408 and 429 means the subscription is dead (404/410 above all) and it is deleted; 408, 429, any other status and
// network failures (refused, DNS, a timeout, a thrown fetch) throw PushRetry, with Retry-After honoured.
//
// This module owns a push's retries (src/effects/retry.ts): MAX_PUSH_ATTEMPTS tries with backoff. Failures of one push
// service count on a circuit shared with deliveries (`push:host` in delivery_circuits): after CIRCUIT_THRESHOLD in a
// row, pushes to that host spend their attempt without a request for the cool-off. A subscription whose pushes have
// failed, with no success between, for FAILING_SUBSCRIPTION_MS is deleted, as a dead one is.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, deliveryCircuits, instanceSettings, notifications, statuses, webPushSubscriptions } from "../db/schema";
import { renderAccount } from "../entities/accounts/account";
import type { Config, Env } from "../env";
import { countCircuitFailure } from "../federation/outbound/circuits";
import { FetchRefused, safeFetch } from "../net/safe-fetch";
import { padId } from "../lib/text/ids";
import { SETTING } from "../services/instance/instance";
import { unseal } from "../services/auth/tokens";
import { base64url, utf8 } from "./base64";
import { encryptAes128gcm, encryptAesgcm } from "./encrypt";
import { checkPushEndpoint } from "./endpoint";
import { loadVapidKeys, vapidJwt, vapidRowQuery, type VapidKeys } from "./keys";
import { renderPushMessage } from "./payload";
import { deleteSubscriptionById, PUSHABLE } from "./subscriptions";
import { PushRetry, type PushJob } from "./types";
import { accountRows } from "../db/table-rows";

/** How long a push service keeps an undelivered message (Mastodon: 48 hours). */
export const PUSH_TTL_SECONDS = 48 * 3600;
export const PUSH_URGENCY = "normal";
/** Tries per push: the first and five retries, as Mastodon's worker (sidekiq retry: 5). */
export const MAX_PUSH_ATTEMPTS = 6;
/** Cloudflare Queues accept delays up to 12 hours. */
const MAX_DELAY_SECONDS = 12 * 3600;
/** A subscription whose pushes have all failed for this long is deleted (its push service or device is gone). */
export const FAILING_SUBSCRIPTION_MS = 3 * 24 * 3600 * 1000;
/** How long a push may take, redirects and all (a push service that does not answer); PUSH_TIMEOUT_MS overrides. */
const PUSH_TIMEOUT_MS = 15_000;

interface SubscriptionContext {
  id: string;
  endpoint: string;
  key_p256dh: string;
  key_auth: string;
  standard: number;
  token_sealed: string | null;
  locale: string | null;
  pushable: number;
  failing_since: number | null;
  /** The push service's circuit (`push:host` in delivery_circuits), if it has one. */
  circuit_host: string | null;
  circuit_failures: number | null;
  circuit_open_until: number | null;
}

/** The endpoint's host as SQL (lower case, after the scheme, before the path): the circuit's key without a round trip. */
const ENDPOINT_REST = sql`substr(s.endpoint, instr(s.endpoint, '://') + 3)`;
const ENDPOINT_HOST = sql`lower(CASE WHEN instr(${ENDPOINT_REST}, '/') > 0 THEN substr(${ENDPOINT_REST}, 1, instr(${ENDPOINT_REST}, '/') - 1) ELSE ${ENDPOINT_REST} END)`;

/** Everything one push needs, in one round trip; null when the subscription or the notification is gone. */
async function loadContext(db: DB, job: PushJob) {
  const nid = padId(job.notificationId);
  const [subs, notes, senders, targets, key, contact] = await db.batch([
    db.all<SubscriptionContext>(sql`SELECT s.id AS id, s.endpoint AS endpoint, s.key_p256dh AS key_p256dh,
        s.key_auth AS key_auth, s.standard AS standard, tok.sealed AS token_sealed, u.locale AS locale,
        CASE WHEN ${PUSHABLE} THEN 1 ELSE 0 END AS pushable, s.failing_since AS failing_since,
        c.host AS circuit_host, c.consecutive_failures AS circuit_failures, c.open_until AS circuit_open_until
      FROM web_push_subscriptions s
      JOIN notifications n ON n.id = ${nid} AND n.account_id = s.account_id
      LEFT JOIN delivery_circuits c ON c.host = 'push:' || ${ENDPOINT_HOST}
      LEFT JOIN oauth_access_tokens tok ON tok.id = s.access_token_id
      LEFT JOIN users u ON u.id = s.user_id
      WHERE s.id = ${padId(job.subscriptionId)}`),
    db.select().from(notifications).where(eq(notifications.id, job.notificationId)).limit(1),
    accountRows(db, { where: sql`${accounts.id} = (SELECT from_account_id FROM notifications WHERE id = ${nid})`, limit: 1 }),
    db
      .select({ spoilerText: statuses.spoilerText, content: statuses.content })
      .from(statuses)
      .where(sql`${statuses.id} = (SELECT status_id FROM notifications WHERE id = ${nid})`)
      .limit(1),
    vapidRowQuery(db),
    db.select({ value: instanceSettings.value }).from(instanceSettings).where(eq(instanceSettings.key, SETTING.contactEmail)).limit(1),
  ]);
  const sub = subs[0];
  const notification = notes[0];
  const sender = senders[0];
  if (!sub || !notification || !sender) return null;
  return { sub, notification, sender, target: targets[0] ?? null, vapidRow: key[0] ?? null, contactEmail: contact[0]?.value ?? null };
}

/** Retry-After as seconds (delta or HTTP date), else null. */
export function retryAfterSeconds(h: string | null, now = Date.now()): number | null {
  if (!h) return null;
  const v = h.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - now) / 1000)) : null;
}

/** Sidekiq-like backoff by attempt: 16 s, 31 s, 96 s, 271 s, 640 s ... (plus a little jitter), capped. */
export function pushBackoffSeconds(attempt: number): number {
  const n = attempt + 1;
  return Math.min(MAX_DELAY_SECONDS, n ** 4 + 15 + Math.floor(Math.random() * 10 * n));
}

function retry(job: PushJob, reason: string, retryAfter: number | null = null): PushRetry {
  const delay = retryAfter === null ? pushBackoffSeconds(job.attempt ?? 0) : retryAfter;
  return new PushRetry(Math.min(MAX_DELAY_SECONDS, Math.max(1, delay)), reason);
}

/**
 * What the consumer does with a PushRetry: the same job one attempt later and the delay to send it with, or null when
 * the push has been tried MAX_PUSH_ATTEMPTS times and is dropped.
 */
export function retryPushJob(job: PushJob, err: PushRetry): { job: PushJob; delaySeconds: number } | null {
  const attempt = (job.attempt ?? 0) + 1;
  if (attempt >= MAX_PUSH_ATTEMPTS) return null;
  return { job: { ...job, attempt }, delaySeconds: err.delaySeconds };
}

/** VAPID `sub`: the instance's contact address (Mastodon), else its URL. */
function vapidSubject(cfg: Config, contactEmail: string | null): string {
  const email = (contactEmail ?? cfg.contactEmail).trim();
  return email && !/[\s<>]/.test(email) ? `mailto:${email}` : cfg.origin;
}

export interface PushRequest {
  body: Uint8Array;
  headers: Record<string, string>;
}

/** The encrypted body and the headers of one push (Mastodon's standard and legacy requests). */
export async function buildPushRequest(
  sub: { endpoint: string; p256dh: string; auth: string; standard: boolean },
  message: Uint8Array,
  keys: VapidKeys,
  subject: string,
): Promise<PushRequest> {
  const jwt = await vapidJwt(keys, new URL(sub.endpoint).origin, subject);
  const common = { "content-type": "application/octet-stream", ttl: String(PUSH_TTL_SECONDS), urgency: PUSH_URGENCY };
  const clientKeys = { p256dh: sub.p256dh, auth: sub.auth };
  if (sub.standard) {
    const body = await encryptAes128gcm(clientKeys, message);
    return { body, headers: { ...common, "content-encoding": "aes128gcm", authorization: `vapid t=${jwt}, k=${keys.publicKey}` } };
  }
  const { body, salt, serverPublicKey } = await encryptAesgcm(clientKeys, message);
  return {
    body,
    headers: {
      ...common,
      "content-encoding": "aesgcm",
      encryption: `salt=${base64url(salt)}`,
      "crypto-key": `dh=${base64url(serverPublicKey)};p256ecdsa=${keys.publicKey}`,
      authorization: `WebPush ${jwt}`,
    },
  };
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return "?";
  }
};

/**
 * Encrypts and sends one push. Returns when it was delivered or has nothing to do (subscription or notification
 * gone, alert off, policy refuses, endpoint no longer acceptable); deletes the subscription when the push service
 * says it is gone; throws PushRetry when it should be tried again later.
 */
export async function deliverPush(db: DB, env: Env, cfg: Config, job: PushJob): Promise<void> {
  const ctx = await loadContext(db, job);
  if (!ctx?.sub.pushable) return;
  const { sub } = ctx;
  try {
    checkPushEndpoint(sub.endpoint, cfg);
  } catch (e) {
    if (!(e instanceof FetchRefused)) throw e;
    console.warn("push endpoint refused, subscription removed", hostOf(sub.endpoint), e.reason);
    await deleteSubscriptionById(db, sub.id);
    return;
  }
  const host = hostOf(sub.endpoint);
  // The service's circuit is open: this attempt is spent without a request, and the next waits for the cool-off.
  if (sub.circuit_host === `push:${host}` && sub.circuit_open_until !== null && sub.circuit_open_until > Date.now()) {
    throw retry(job, "push service's circuit open", Math.ceil((sub.circuit_open_until - Date.now()) / 1000) + pushBackoffSeconds(job.attempt ?? 0));
  }
  const keys = await loadVapidKeys(db, env, ctx.vapidRow);
  const accessToken = ctx.sub.token_sealed ? ((await unseal(env.SECRET_KEY_BASE ?? "", ctx.sub.token_sealed)) ?? "") : "";
  const sender = ctx.sender;
  const message = await renderPushMessage({
    accessToken,
    locale: sub.locale || "en",
    notificationId: job.notificationId,
    type: ctx.notification.type,
    name: sender.displayName || sender.username,
    icon: renderAccount(cfg, sender).avatar_static,
    spoilerText: ctx.target?.spoilerText ?? "",
    html: ctx.target ? ctx.target.content : sender.note,
  });
  const req = await buildPushRequest(
    { endpoint: sub.endpoint, p256dh: sub.key_p256dh, auth: sub.key_auth, standard: !!sub.standard },
    utf8(message),
    keys,
    vapidSubject(cfg, ctx.contactEmail),
  );
  let status: number;
  let retryAfter: string | null;
  try {
    const res = await safeFetch(sub.endpoint, {
      method: "POST",
      body: req.body,
      headers: req.headers,
      ownHosts: [cfg.domain],
      allowLoopback: cfg.allowLoopbackFetch,
      maxBytes: 64 * 1024,
      timeoutMs: Number(env.PUSH_TIMEOUT_MS) || PUSH_TIMEOUT_MS,
    });
    status = res.status;
    retryAfter = res.headers.get("retry-after");
  } catch (e) {
    if (e instanceof FetchRefused && !(e.reason === "timed out" || e.reason.startsWith("network error"))) {
      // A redirect to a refused address, too many redirects, an oversized answer: nothing a retry would change.
      console.warn("push not delivered", hostOf(sub.endpoint), e.reason);
      return;
    }
    // Refused, DNS, a timeout, or a fetch that threw anything else: the push service could not be reached.
    return failed(db, job, sub, host, retry(job, e instanceof FetchRefused ? e.reason : `fetch failed: ${e instanceof Error ? e.message : e}`));
  }
  if (status >= 200 && status < 300) return succeeded(db, sub, host);
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    await deleteSubscriptionById(db, sub.id);
    return;
  }
  return failed(db, job, sub, host, retry(job, `push service answered ${status}`, retryAfterSeconds(retryAfter)));
}

/** A delivered push clears its subscription's failure mark and its service's circuit, when they have one. */
async function succeeded(db: DB, sub: SubscriptionContext, host: string): Promise<void> {
  const stmts = [];
  if (sub.failing_since !== null) stmts.push(db.update(webPushSubscriptions).set({ failingSince: null }).where(eq(webPushSubscriptions.id, sub.id)));
  if (sub.circuit_host === `push:${host}` && (sub.circuit_failures ?? 0) > 0)
    stmts.push(db.delete(deliveryCircuits).where(eq(deliveryCircuits.host, `push:${host}`)));
  const [first, ...rest] = stmts;
  if (first) await db.batch([first, ...rest]);
}

/**
 * A push that could not be delivered: counted on its service's circuit and its subscription's failure mark, then
 * thrown to be tried again; a subscription failing for FAILING_SUBSCRIPTION_MS is deleted instead.
 */
async function failed(db: DB, job: PushJob, sub: SubscriptionContext, host: string, err: PushRetry): Promise<never | undefined> {
  const now = Date.now();
  if (sub.failing_since !== null && now - sub.failing_since >= FAILING_SUBSCRIPTION_MS) {
    console.warn("push subscription failing for days, removed", host);
    await db.batch([deleteSubscriptionById(db, sub.id), countCircuitFailure(db, `push:${host}`)]);
    return;
  }
  await db.batch([
    db
      .update(webPushSubscriptions)
      .set({ failingSince: sql`coalesce(${webPushSubscriptions.failingSince}, ${now})` })
      .where(eq(webPushSubscriptions.id, sub.id)),
    countCircuitFailure(db, `push:${host}`),
  ]);
  console.warn("push failed", host, `attempt ${(job.attempt ?? 0) + 1}:`, err.message);
  throw err;
}
