// One Durable Object per (rule, key): a fixed window counter in DO storage. A window opens at the first hit and lasts
// the rule's period (a key's budget is a full period from its first use). The DO's input gate serialises requests,
// so read-increment-write needs no extra locking. An expired window is simply overwritten by the next hit; there is
// no cleanup alarm (one small key per DO), which also keeps alarms from firing into unrelated tests under
// vitest-pool-workers' isolated storage.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

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

export class RateLimiter extends DurableObject<Env> {
  async hit(limit: number, periodSeconds: number): Promise<RateHit> {
    const periodMs = Math.max(1, Math.floor(periodSeconds)) * 1000;
    const now = Date.now();
    const cur = await this.ctx.storage.get<Window>("w");
    const fresh = !cur || now >= cur.end;
    const w: Window = fresh ? { start: now, end: now + periodMs, count: 1 } : { ...cur, count: cur.count + 1 };
    await this.ctx.storage.put("w", w);
    return { allowed: w.count <= limit, count: w.count, limit, resetAt: w.end };
  }
}
