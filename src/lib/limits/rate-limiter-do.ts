// Rate-limit counters in Durable Objects (fixed windows). A window opens at a counter's first hit and lasts the rule's
// period (a key's budget is a full period from its first use). The DO's input gate serialises requests, so
// read-increment-write needs no extra locking. Expired windows are overwritten by the next hit or pruned when the
// object writes; there is no cleanup alarm, which also keeps alarms from firing into unrelated tests under
// vitest-pool-workers' isolated storage.
//
// Two shapes:
// - `hit`: one object per (rule, key) holding one window (sign-in, sign-up, media uploads, inbox hosts);
// - `count`: one object per subject (`acct:<account id>`, `ip:<address or /64>`) holding every counter of that
//   subject (the general API budgets, the per-token budget, paging, the per-account action families), so a request
//   counts all of its budgets in ONE call. See src/http/rate-limit.ts.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";

export interface RateHit {
  allowed: boolean;
  count: number;
  limit: number;
  resetAt: number; // ms
}

interface Window {
  start: number;
  end: number;
  count: number;
}

export interface CounterSpec {
  /** Counter name within the subject: "api", "tok:<token id>", "paging", "statuses" ... */
  name: string;
  limit: number;
  periodSeconds: number;
  /** Counted only when every earlier counter of the call allowed the request (an action behind the general budget). */
  gated?: boolean;
  /**
   * Hits an isolate already let through on its own (src/http/rate-limit.ts, the general budgets): added as they
   * are, whatever the limit, before this request's own hit is judged.
   */
  admitted?: number;
  /** False: only report `admitted` (a batch sent after the responses); no hit of its own is judged. */
  probe?: boolean;
}

export interface CounterHit {
  name: string;
  limit: number;
  /** Hits in the window after this call (a refused hit is not added). */
  count: number;
  resetAt: number; // ms, end of the window
  allowed: boolean;
  /** False when the hit was refused or skipped (a gated counter after a refusal): nothing to undo. */
  counted: boolean;
}

type Counters = Record<string, { end: number; count: number }>;

export class RateLimiter extends DurableObject<Env> {
  private counters: Counters | null = null;

  /** Counts `n` hits (a caller that counted some on its own first reports them together: enforceRateLimitCountedHere). */
  async hit(limit: number, periodSeconds: number, n = 1): Promise<RateHit> {
    const periodMs = Math.max(1, Math.floor(periodSeconds)) * 1000;
    const hits = Math.max(1, Math.floor(n));
    const now = Date.now();
    const cur = await this.ctx.storage.get<Window>("w");
    const fresh = !cur || now >= cur.end;
    const w: Window = fresh ? { start: now, end: now + periodMs, count: hits } : { ...cur, count: cur.count + hits };
    await this.ctx.storage.put("w", w);
    return { allowed: w.count <= limit, count: w.count, limit, resetAt: w.end };
  }

  /**
   * Counts one hit on each counter, in order. A counter at its limit refuses without counting. The write is not
   * awaited for confirmation (allowUnconfirmed): the answer does not wait for storage, and a lost write costs at
   * most the last hits of a window.
   */
  async count(specs: CounterSpec[]): Promise<CounterHit[]> {
    const now = Date.now();
    const all = await this.load();
    for (const [k, w] of Object.entries(all)) if (now >= w.end) delete all[k];
    const out: CounterHit[] = [];
    let refused = false;
    for (const s of specs) {
      const periodMs = Math.max(1, Math.floor(s.periodSeconds)) * 1000;
      const w = all[s.name] ?? { end: now + periodMs, count: 0 };
      const admitted = Math.max(0, Math.floor(s.admitted ?? 0));
      if (admitted) {
        w.count += admitted;
        all[s.name] = w;
      }
      if (s.probe === false) {
        out.push({ name: s.name, limit: s.limit, count: w.count, resetAt: w.end, allowed: w.count < s.limit, counted: false });
        continue;
      }
      if (s.gated && refused) {
        out.push({ name: s.name, limit: s.limit, count: w.count, resetAt: w.end, allowed: false, counted: false });
        continue;
      }
      const allowed = w.count < s.limit;
      if (allowed) {
        w.count++;
        all[s.name] = w;
      } else refused = true;
      out.push({ name: s.name, limit: s.limit, count: w.count, resetAt: w.end, allowed, counted: allowed });
    }
    await this.ctx.storage.put("c", all, { allowUnconfirmed: true });
    return out;
  }

  /** Takes back one counted hit (an action that did not happen), if its window is still the current one. */
  async undo(name: string, resetAt: number): Promise<void> {
    const all = await this.load();
    const w = all[name];
    if (!w || w.end !== resetAt || w.count <= 0) return;
    w.count--;
    await this.ctx.storage.put("c", all, { allowUnconfirmed: true });
  }

  private async load(): Promise<Counters> {
    this.counters ??= (await this.ctx.storage.get<Counters>("c")) ?? {};
    return this.counters;
  }
}
