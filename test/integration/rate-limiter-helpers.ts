// The rate limiter's Durable Objects as the tests read and set them: one object per subject (`acct:<id>`,
// `ip:<address>`, `token:<id>`), its counters stored under "c" by name.
import { env, runInDurableObject } from "cloudflare:test";
import type { RateLimiter } from "../../src/lib/limits/rate-limiter-do";

export type Counters = Record<string, { end: number; count: number }>;

export function limiter(subject: string) {
  const ns = env.RATE_LIMITER as unknown as DurableObjectNamespace<RateLimiter>;
  return ns.get(ns.idFromName(subject));
}

/** The counters of a subject's object, as stored. */
export async function readCounters(subject: string): Promise<Counters> {
  return runInDurableObject(limiter(subject), async (_obj, state) => (await state.storage.get<Counters>("c")) ?? {});
}
