// The one road effects leave by: the JOBS queue. All the effects of one action travel as ONE message when they fit
// (a queue operation is the billing unit, and an action's effects are usually two or three), except that each journal
// row's effects (./commit.ts) travel in a message of their own, as the consumer claims a row whole (what was recorded
// after that row's batch rides along as the message's `extra`, run whoever holds the row); the consumer runs them one
// by one and retries only those that fail (src/background/effects-runner.ts, ./retry.ts).
//
// A send that fails (the binding throws, or does not answer within QUEUE_SEND_TIMEOUT_MS) loses nothing: the messages
// it did not send are written to D1 (`pending_effects`, ./pending.ts) and the every-minute cron sends them again. The
// write they follow from has committed, so the request still answers as it would have.
import type { Effects } from "./collector";
import { releaseJournal } from "./journal";
import { packGroups, packMessage } from "./pack";
import { keepPending } from "./pending";
import type { Effect, JobMessage } from "./types";

const MAX_BATCH = 100; // Queue.sendBatch takes at most 100 messages.
/** How long a queue send may take before its messages are kept in D1 instead (a send that never answers). */
const SEND_TIMEOUT_MS = 5_000;

/** Where effects leave to: the JOBS queue, and D1 for what the queue did not take. */
export interface EffectsOut {
  JOBS: Queue<JobMessage>;
  DB: D1Database;
  QUEUE_SEND_TIMEOUT_MS?: string;
}

export function packEffects(effects: Effect[], origin = "", attempt = 0): JobMessage[] {
  return packGroups(effects).map((list) => packMessage(list, origin, attempt));
}

/**
 * Sends (and empties) what the collector holds: what runs now, then each delayed group with its delay. What the queue
 * does not take is kept in D1; this throws only when that fails too (then nothing was recorded anywhere).
 */
export async function sendEffects(out: EffectsOut, fx: Effects): Promise<void> {
  await sendGroup(out, fx, fx.drain());
  for (const group of fx.drainLater()) await sendGroup(out, fx, group.effects, group.seconds);
}

/**
 * Sends one group of a collector's effects; each message names the journal rows that keep its effects (./commit.ts).
 * When the queue refuses them, what a journal row keeps is not kept twice: that row is marked for the next cron run
 * instead, and only the effects no journal keeps are written to D1.
 */
async function sendGroup(out: EffectsOut, fx: Effects, effects: Effect[], delaySeconds?: number): Promise<void> {
  if (!effects.length) return;
  // One message per journal row (a row is claimed whole: ./journal.ts), and the effects no row keeps in their own.
  const runs: { journal: string | null; effects: Effect[] }[] = [];
  for (const e of effects) {
    const journal = fx.journalIds([e])[0] ?? null;
    const last = runs[runs.length - 1];
    if (last && last.journal === journal) last.effects.push(e);
    else runs.push({ journal, effects: [e] });
  }
  const messages = withExtras(runs).flatMap((r) => {
    const packs = packGroups(r.effects).map((list) => packMessage(list, fx.origin, 0, r.journal ? [r.journal] : []));
    const only = packs[0];
    if (r.extra.length && only?.type === "effects") only.extra = r.extra;
    return packs;
  });
  await sendMessages(out, messages, delaySeconds, async (unsent) => {
    const journal = unsent.flatMap((m) => (m.type === "effects" ? (m.journal ?? []) : []));
    const rest = unsent.flatMap((m) => (m.type === "effects" ? [...m.effects, ...(m.extra ?? [])] : [m])).filter((e) => !fx.journalIds([e]).length);
    await keepPending(out.DB, packEffects(rest, fx.origin), delaySeconds ?? 0);
    await releaseJournal(out.DB, journal);
  });
}

/**
 * The effects no journal row keeps (recorded after a write's batch) ride in the message of the journal row just before
 * them as its `extra`, when that row's effects make one message and the two fit in one: a write and what followed from its
 * batch cost one queue operation, not two.
 */
function withExtras(runs: { journal: string | null; effects: Effect[] }[]): { journal: string | null; effects: Effect[]; extra: Effect[] }[] {
  const out = runs.map((r) => ({ ...r, extra: [] as Effect[] }));
  for (let i = 0; i < out.length; i++) {
    const r = out[i]!;
    if (r.journal) continue;
    // The row before it: its effects still run first, as they were recorded.
    const host = out[i - 1];
    if (!host?.journal || !fits(host.effects, [...host.extra, ...r.effects])) continue;
    host.extra.push(...r.effects);
    out.splice(i--, 1);
  }
  return out;
}

const fits = (effects: Effect[], extra: Effect[]) => packGroups([...effects, ...extra]).length === 1;

/** Sends effects that failed once more, as one pack carrying their attempt count, after `delaySeconds`. */
export async function sendRetry(out: EffectsOut, origin: string, effects: Effect[], attempt: number, delaySeconds: number): Promise<void> {
  await sendMessages(out, packEffects(effects, origin, attempt), delaySeconds);
}

/**
 * Sends messages in chunks of MAX_BATCH; the chunks the queue did not take are kept in D1 (./pending.ts), or handed to
 * `keep` when the caller keeps them its own way.
 */
export async function sendMessages(
  out: EffectsOut,
  messages: JobMessage[],
  delaySeconds?: number,
  keep: (unsent: JobMessage[]) => Promise<void> = (unsent) => keepPending(out.DB, unsent, delaySeconds ?? 0),
): Promise<void> {
  const opts = delaySeconds ? { delaySeconds } : undefined;
  for (let i = 0; i < messages.length; i += MAX_BATCH) {
    const chunk = messages.slice(i, i + MAX_BATCH);
    try {
      await withTimeout(
        chunk.length === 1 ? out.JOBS.send(chunk[0] as JobMessage, opts) : out.JOBS.sendBatch(chunk.map((body) => ({ body, ...opts }))),
        sendTimeoutMs(out),
      );
    } catch (e) {
      console.error("queue send failed, effects kept in D1", e instanceof Error ? e.message : e);
      await keep(messages.slice(i));
      return;
    }
  }
}

const sendTimeoutMs = (out: EffectsOut) => {
  const n = Number(out.QUEUE_SEND_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : SEND_TIMEOUT_MS;
};

/** The send's promise, or a rejection after `ms` (the send may still complete: effects run twice change nothing twice). */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer = 0;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms) as unknown as number;
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
