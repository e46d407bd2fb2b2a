// Outbound deliveries through the DELIVERY queue (security §3.3): the activity is stored once in activity_outbox,
// each target inbox (shared inboxes collapsed) gets a message holding ids only, the request is signed at send time
// (a Date older than an hour is refused by receivers), and Tern owns the retry schedule: n⁴ + 15 s (+ jitter),
// capped at 12 h per hop, 16 attempts (about two days). A host whose deliveries exhaust their retries on 7 distinct
// days is marked unavailable and skipped; any success clears its record. A per-host circuit (kept in D1, read in the
// same batch as the outbox row) opens after 10 consecutive salvageable failures: for 60 s messages to that host are
// re-queued for the rest of the cool-off without a request and without spending an attempt. Once it has re-opened (the
// host failed again after a cool-off), a held message spends an attempt (still without a request): held messages used
// to wait for free until one of them won the next request, one a minute, so for a host that never recovered each kept
// coming back (16 activities queued: 72 to 87 runs each for its 16 attempts; test/integration/delivery-faults.test.ts).
// One retry owner (src/effects/retry.ts): this module retries every failure of a delivery, its own code's included
// (those are not counted against the host); the queue's own retries are for an invocation that crashed, or could not
// re-send what failed: a pack's retries leave in one send after all of its deliveries settled, so a crash re-runs the
// pack without a second line of attempts for an inbox whose retry had already gone.
// Signatures double-knock (rfc9421.ts): the spec remembered for the host (`signature_specs`, read with the batch)
// first, else draft-cavage; a 400/401 is signed with the other spec and sent once more, and what worked is remembered.
import { eq, inArray, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { createDb, runBatch } from "../../db/client";
import { frozenSelect } from "../../db/frozen";
import { boundList, idsJson } from "../../db/id-list";
import { accountKeys, accounts, activityOutbox, deliveryCircuits, deliveryFailures, signatureSpecs, unavailableDomains } from "../../db/schema/index";
import type { Config, Env } from "../../env";
import { readConfig } from "../../env";
import { snowflake } from "../../lib/text/ids";
import { ensureActorKeys } from "../signing/actor-keys";
import { CIRCUIT_THRESHOLD, countCircuitFailure } from "./circuits";
import { suspendedCheck } from "./recipients";
import { baseFetchOptions } from "../remote/fetch-options";
import { knockOptions, primeSpec, signOutgoingRfc9421 } from "../signing/rfc9421";
import { FetchRefused, safeFetch } from "../../net/safe-fetch";
import { cavageDigest, signCavage } from "../signing/signatures";

/**
 * One activity to some inboxes. A new activity travels in packs of up to DELIVERY_PACK inboxes (`inboxes`): a queue
 * message is the billing unit (three operations: write, read, delete), and a boost to 120 follower hosts was 120
 * messages. A retry is one inbox (`inbox`), as it has its own attempt count and delay.
 */
export interface DeliveryMessage {
  outboxId: string;
  inbox?: string;
  inboxes?: string[];
  attempt: number;
  /** The instance origin (the queue has no request to read it from in local development). */
  origin: string;
}

/**
 * Inboxes per delivery message. The DELIVERY consumer takes one message per invocation (wrangler.toml), so a pack is
 * what one invocation signs and sends: ~0.8 ms of CPU an inbox (the signature and the fetch; `npm run bench:day`), so 8
 * keep an invocation near the free plan's 10 ms, while a boost to 120 follower hosts is 15 messages, not 120.
 */
export const DELIVERY_PACK = 8;

/** The inboxes a delivery message is for. */
export const inboxesOf = (m: DeliveryMessage): string[] => m.inboxes ?? (m.inbox ? [m.inbox] : []);

export const MAX_ATTEMPTS = 16;
const UNAVAILABLE_AFTER_DAYS = 7;
/** A pack's deliveries together get this long (each fetch's total, redirects and all, as safeFetch's default). */
const DELIVERY_TIMEOUT_MS = 30_000;

export function retryDelaySeconds(attempt: number, random = Math.random): number {
  const base = attempt ** 4 + 15;
  return Math.min(Math.round(base + random() * 0.5 * attempt ** 4 + random() * 10 * (attempt + 1)), 43_200);
}

/**
 * Stores the activity and enqueues it for each distinct inbox, DELIVERY_PACK inboxes a message, leaving out inboxes
 * on suspended domains (suspendedCheck: a domain block, or not allowed in limited federation) and on unavailable hosts.
 * The two checks and the store are ONE round trip (the stored row is deleted again, one more, in the rare case where
 * no inbox is left), then the queue's send.
 */
export async function deliverActivity(
  env: Env,
  db: DB,
  cfg: Config,
  signerAccountId: string,
  activity: Record<string, unknown>,
  inboxes: Iterable<string>,
): Promise<number> {
  const check = suspendedCheck(db, [...inboxes].filter(Boolean), cfg);
  if (!check.statement) return 0;
  const id = snowflake();
  const [blocked, unavailable] = (await runBatch(db, [
    check.statement,
    db.select({ d: unavailableDomains.domain }).from(unavailableDomains),
    db.insert(activityOutbox).values({ id, accountId: signerAccountId, json: JSON.stringify(activity), createdAt: Date.now() }),
  ])) as [{ domain: string; allow: number }[], { d: string }[]];
  const skip = new Set(unavailable.map((r) => r.d));
  const targets = check.keep(blocked).filter((i) => !skip.has(new URL(i).host));
  if (!targets.length) {
    await db.delete(activityOutbox).where(eq(activityOutbox.id, id));
    return 0;
  }
  const packs: DeliveryMessage[] = [];
  for (let i = 0; i < targets.length; i += DELIVERY_PACK)
    packs.push({ outboxId: id, inboxes: targets.slice(i, i + DELIVERY_PACK), attempt: 0, origin: cfg.origin });
  for (let i = 0; i < packs.length; i += 100) await env.DELIVERY.sendBatch(packs.slice(i, i + 100).map((body) => ({ body })));
  return targets.length;
}

/**
 * `ours`: our own code failed (a key that does not import, a signer), not the host: retried, not counted against it.
 * `openUntil`: the host's circuit is open; `stillDown` when it re-opened after a cool-off (the hold spends an attempt).
 */
type Outcome = "ok" | "drop" | { retryAfter?: number; ours?: true } | { openUntil: number; stillDown: boolean };

function classify(status: number, retryAfter: string | null): Outcome {
  if (status >= 200 && status < 300) return "ok";
  if (status === 429) {
    const s = Number(retryAfter);
    return { retryAfter: Number.isFinite(s) && s > 0 ? Math.min(s, 43_200) : undefined };
  }
  if (status === 401 || status === 408) return {};
  if ((status >= 400 && status < 500) || status === 501) return "drop"; // unsalvageable: no retry, no failure mark
  return {};
}

/** What a batch of deliveries needs, read once per queue batch (one D1 round trip, whatever the batch size). */
interface BatchState {
  /** Each activity, with its Digest header once a delivery made it (the pack's other inboxes reuse it). */
  outbox: Map<string, { accountId: string; json: string; digest?: Promise<string> }>;
  signers: Map<string, { uri: string; privateKeyPem: string | null }>;
  openUntil: Map<string, number>;
  /** Hosts whose circuit re-opened: more than CIRCUIT_THRESHOLD consecutive failures, one after a cool-off. */
  stillDown: Set<string>;
  /** Hosts with a failure record, an unavailable mark or a circuit row: only these need clearing on success. */
  dirtyHosts: Set<string>;
  /** Hosts with a remembered signature spec (double knocking). */
  specs: Map<string, string>;
}

// The batch state's statements, their text built once per isolate (db/frozen.ts): `ids` is the outbox ids (padded,
// as JSON), `hosts` the hosts (JSON).
const outboxRows = frozenSelect((db) =>
  db
    .select({ id: activityOutbox.id, accountId: activityOutbox.accountId, json: activityOutbox.json })
    .from(activityOutbox)
    .where(inArray(activityOutbox.id, boundList("ids"))),
);
const signerRows = frozenSelect((db) =>
  db
    .select({ id: accounts.id, uri: accounts.uri, privateKeyPem: accountKeys.privateKeyPem })
    .from(accounts)
    .leftJoin(accountKeys, eq(accountKeys.accountId, accounts.id))
    .where(inArray(accounts.id, sql`(SELECT ${activityOutbox.accountId} FROM ${activityOutbox} WHERE ${activityOutbox.id} IN ${boundList("ids")})`)),
);
const circuitRows = frozenSelect((db) =>
  db
    .select({ host: deliveryCircuits.host, openUntil: deliveryCircuits.openUntil, n: deliveryCircuits.consecutiveFailures })
    .from(deliveryCircuits)
    .where(inArray(deliveryCircuits.host, boundList("hosts"))),
);
const failureRows = frozenSelect((db) =>
  db
    .selectDistinct({ host: deliveryFailures.host })
    .from(deliveryFailures)
    .where(inArray(deliveryFailures.host, boundList("hosts"))),
);
const unavailableRows = frozenSelect((db) =>
  db
    .select({ host: unavailableDomains.domain })
    .from(unavailableDomains)
    .where(inArray(unavailableDomains.domain, boundList("hosts"))),
);
const specRows = frozenSelect((db) =>
  db
    .select({ host: signatureSpecs.host, spec: signatureSpecs.spec })
    .from(signatureSpecs)
    .where(inArray(signatureSpecs.host, boundList("hosts"))),
);

async function loadBatchState(db: DB, messages: DeliveryMessage[], hosts: string[]): Promise<BatchState> {
  const ids = { ids: idsJson([...new Set(messages.map((m) => m.outboxId))]) };
  const hs = { hosts: JSON.stringify(hosts) };
  const [rows, signers, circuits, failures, unavailable, specs] = await db.batch([
    outboxRows(db, ids),
    signerRows(db, ids),
    circuitRows(db, hs),
    failureRows(db, hs),
    unavailableRows(db, hs),
    specRows(db, hs),
  ]);
  const state: BatchState = { outbox: new Map(), signers: new Map(), openUntil: new Map(), stillDown: new Set(), dirtyHosts: new Set(), specs: new Map() };
  for (const s of specs) state.specs.set(s.host, s.spec);
  for (const r of rows) state.outbox.set(r.id, { accountId: r.accountId, json: r.json });
  for (const a of signers) state.signers.set(a.id, { uri: a.uri, privateKeyPem: a.privateKeyPem ?? null });
  for (const c of circuits) {
    state.dirtyHosts.add(c.host);
    if (c.openUntil != null) state.openUntil.set(c.host, c.openUntil);
    if (c.n > CIRCUIT_THRESHOLD) state.stillDown.add(c.host);
  }
  for (const f of failures) state.dirtyHosts.add(f.host);
  for (const u of unavailable) state.dirtyHosts.add(u.host);
  return state;
}

/** One delivery of a message: the activity to one inbox. */
type Delivery = Omit<DeliveryMessage, "inboxes"> & { inbox: string };

async function deliverOne(db: DB, cfg: Config, m: Delivery, host: string, state: BatchState, signal: AbortSignal): Promise<Outcome> {
  const row = state.outbox.get(m.outboxId);
  if (!row) return "drop";
  const openUntil = state.openUntil.get(host);
  if (openUntil != null && openUntil > Date.now()) return { openUntil, stillDown: state.stillDown.has(host) };
  const signer = state.signers.get(row.accountId);
  if (!signer) return "drop";
  // Keys are made on first need; a batch shares what it found, so the rare miss costs one lookup, not one per message.
  if (!signer.privateKeyPem) signer.privateKeyPem = (await ensureActorKeys(db, row.accountId)).privateKeyPem;
  const privateKeyPem = signer.privateKeyPem;
  // One hash of the body for the whole pack (this invocation's own promise, shared by its deliveries only).
  row.digest ??= cavageDigest(row.json);
  const digest = await row.digest;
  try {
    const res = await safeFetch(m.inbox, {
      ...baseFetchOptions(cfg),
      method: "POST",
      body: row.json,
      headers: { "content-type": "application/activity+json" },
      maxBytes: 64 * 1024,
      maxRedirects: 0,
      // Only the status and Retry-After decide the outcome: the body is cancelled, not read (no reader, no chunks:
      // fewer runtime objects for the collector to finalize, eight per pack).
      wantBody: false,
      signal,
      ...knockOptions(
        db,
        {
          "draft-cavage": (o) => signCavage(o, `${signer.uri}#main-key`, privateKeyPem, row.json, digest),
          rfc9421: (o) => signOutgoingRfc9421(o, `${signer.uri}#main-key`, privateKeyPem, row.json),
        },
        async (h) => primeSpec(h, state.specs.get(h)),
      ),
    });
    return classify(res.status, res.status === 429 ? res.headers.get("retry-after") : null);
  } catch (e) {
    if (e instanceof FetchRefused && /not allowed|own host|invalid|userinfo|scheme|control/.test(e.reason)) return "drop";
    if (e instanceof FetchRefused) return {}; // the network, the deadline, the host
    // Our own code (safeFetch wraps every network error): one signer's unusable key had opened the host's circuit,
    // holding every other signer's deliveries to a healthy host, and would have marked it unavailable.
    console.error("delivery failed in our code", host, e instanceof Error ? e.message : e);
    return { ours: true };
  }
}

async function recordFailure(db: DB, host: string): Promise<void> {
  const day = new Date().toISOString().slice(0, 10);
  await db.insert(deliveryFailures).values({ host, day }).onConflictDoNothing();
  const [row] = await db.select({ n: sql<number>`count(*)` }).from(deliveryFailures).where(eq(deliveryFailures.host, host));
  const n = row?.n ?? 0; // count(*) always answers one row
  if (Number(n) >= UNAVAILABLE_AFTER_DAYS) {
    await db.insert(unavailableDomains).values({ domain: host, createdAt: Date.now() }).onConflictDoNothing();
  }
}

export async function handleDeliveries(batch: MessageBatch<DeliveryMessage>, env: Env, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<void> {
  const db = createDb(env.DB);
  const hostOf = (inbox: string): string | null => {
    try {
      return new URL(inbox).host;
    } catch {
      return null;
    }
  };
  // Each inbox's host read once (a URL is a runtime object: one per inbox, not one per use).
  const deliveries = batch.messages.flatMap((msg) =>
    inboxesOf(msg.body).map((inbox) => ({
      m: { outboxId: msg.body.outboxId, inbox, attempt: msg.body.attempt, origin: msg.body.origin } as Delivery,
      host: hostOf(inbox),
    })),
  );
  const hosts = [...new Set(deliveries.map((d) => d.host).filter((h): h is string => !!h))];
  const state = await loadBatchState(
    db,
    batch.messages.map((msg) => msg.body),
    hosts,
  );
  // One deadline for the pack's fetches (they start together), its timer cleared when the pack is done: a timer per
  // fetch would hold its signal for the whole 30 s after the delivery ended.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  // Each inbox's outcome is handled on its own (a retry is a message of its own); what goes back is sent once all of
  // them settled, then the messages are acked. What is written about a host after its request (circuit counts, failure
  // days, a success clearing them) is best effort: a D1 error there must not make the queue run the pack again.
  const retries: MessageSendRequest<DeliveryMessage>[] = [];
  const noted = (what: string, host: string) => (e: unknown) => console.error(`delivery: could not ${what}`, host, e instanceof Error ? e.message : e);
  let settled: PromiseSettledResult<void>[];
  try {
    settled = await Promise.allSettled(
      deliveries.map(async ({ m, host }) => {
        const cfg = readConfig(env, m.origin);
        if (!host) return;
        const outcome = await deliverOne(db, cfg, m, host, state, deadline.signal);
        if (outcome === "ok") {
          // A success clears the host's record; most hosts have none, so most successes cost no round trip.
          if (state.dirtyHosts.delete(host)) {
            await db
              .batch([
                db.delete(deliveryFailures).where(eq(deliveryFailures.host, host)),
                db.delete(unavailableDomains).where(eq(unavailableDomains.domain, host)),
                db.delete(deliveryCircuits).where(eq(deliveryCircuits.host, host)),
              ])
              .catch(noted("clear the record of", host));
          }
        } else if (outcome === "drop") {
          // unsalvageable: neither retried nor counted against the host
        } else if ("openUntil" in outcome) {
          const rest = Math.max(1, Math.ceil((outcome.openUntil - Date.now()) / 1000));
          if (!outcome.stillDown) retries.push({ body: { ...m }, delaySeconds: rest });
          else if (m.attempt + 1 < MAX_ATTEMPTS)
            retries.push({ body: { ...m, attempt: m.attempt + 1 }, delaySeconds: Math.max(rest, retryDelaySeconds(m.attempt + 1)) });
          else await recordFailure(db, host).catch(noted("record a failure day of", host));
        } else {
          if (!outcome.ours) {
            state.dirtyHosts.add(host);
            await countCircuitFailure(db, host).catch(noted("count a failure of", host));
          }
          if (m.attempt + 1 < MAX_ATTEMPTS)
            retries.push({ body: { ...m, attempt: m.attempt + 1 }, delaySeconds: outcome.retryAfter ?? retryDelaySeconds(m.attempt + 1) });
          else if (!outcome.ours) await recordFailure(db, host).catch(noted("record a failure day of", host));
          else console.error("delivery given up after", MAX_ATTEMPTS, "attempts", host);
        }
      }),
    );
  } finally {
    clearTimeout(timer);
  }
  // A delivery that threw (D1 failing to make a signer's key): the invocation crashed, and the queue's own retry runs
  // the pack again. Nothing of it was re-sent, so no inbox has a line of attempts already under way.
  const crashed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (crashed) throw crashed.reason;
  const [one] = retries;
  if (retries.length === 1 && one) await env.DELIVERY.send(one.body, { delaySeconds: one.delaySeconds });
  else for (let i = 0; i < retries.length; i += 100) await env.DELIVERY.sendBatch(retries.slice(i, i + 100));
  for (const msg of batch.messages) msg.ack();
}
