// One HomeFeed object per account (idFromName(accountId)) serialises feed regeneration: the first home timeline
// request after the feed was dropped starts the rebuild, later ones only learn that it is running (HTTP 206) or done.
// The rebuild runs in an alarm, so it outlives the request and is retried by the runtime if it fails.
import { DurableObject } from "cloudflare:workers";
import { createDb } from "../db/client";
import type { Env } from "../env";
import { regenerateHomeFeed } from "./regenerate";

interface RegenerationState {
  accountId: string;
  /** The drop being repaired: a later drop (new dropped_at) starts a new rebuild. */
  droppedAt: number;
  done: boolean;
}

export type RegenerationStatus = "running" | "done";

export class HomeFeed extends DurableObject<Env> {
  async regenerate(accountId: string, droppedAt: number): Promise<RegenerationStatus> {
    const st = await this.ctx.storage.get<RegenerationState>("regeneration");
    if (st && st.droppedAt === droppedAt) return st.done ? "done" : "running";
    await this.ctx.storage.put("regeneration", { accountId, droppedAt, done: false } satisfies RegenerationState);
    await this.ctx.storage.setAlarm(Date.now());
    return "running";
  }

  async alarm(): Promise<void> {
    const st = await this.ctx.storage.get<RegenerationState>("regeneration");
    if (!st || st.done) return;
    await regenerateHomeFeed(createDb(this.env.DB), st.accountId);
    await this.ctx.storage.put("regeneration", { ...st, done: true });
  }
}

/** Starts (once) or checks the regeneration of `accountId`'s home feed. */
export function startRegeneration(env: Env, accountId: string, droppedAt: number): Promise<RegenerationStatus> {
  const stub = env.HOME_FEED.get(env.HOME_FEED.idFromName(accountId)) as unknown as DurableObjectStub<HomeFeed>;
  return stub.regenerate(accountId, droppedAt) as Promise<RegenerationStatus>;
}
