// Fixtures for the status, interaction and poll tests: media rows, follows and blocks written directly, and the
// JOBS queue replaced by a recorder (fan-out is tested on its own; a job outliving its test breaks isolated storage).
import { env } from "cloudflare:test";
import { vi } from "vitest";
import { mediaAttachments } from "../../src/db/schema";
import { snowflake } from "../../src/lib/text/ids";
import type { JobMessage } from "../../src/effects/types";
import { unpack } from "./queues";
import { db } from "./helpers";

export const pad = (id: string) => id.padStart(20, "0");

export async function makeMedia(accountId: string, opts: { processing?: number; statusId?: string } = {}) {
  const id = snowflake();
  await db()
    .insert(mediaAttachments)
    .values({
      id,
      accountId,
      type: "image",
      fileKey: "test/x.png",
      contentType: "image/png",
      processing: opts.processing ?? 0,
      statusId: opts.statusId ?? null,
      createdAt: Date.now(),
    });
  return id;
}

export async function follow(followerId: string, targetId: string) {
  await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, 0, ?)")
    .bind(pad(snowflake()), pad(followerId), pad(targetId), Date.now())
    .run();
}

export async function block(accountId: string, targetId: string) {
  await env.DB.prepare("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)")
    .bind(pad(snowflake()), pad(accountId), pad(targetId), Date.now())
    .run();
}

export async function count(sqlText: string, ...binds: unknown[]): Promise<number> {
  const r = await env.DB.prepare(sqlText)
    .bind(...binds)
    .first<{ n: number }>();
  return Number(r?.n ?? 0);
}

/**
 * Records JOBS messages instead of queueing them, so no fan-out job (another module, tested on its own) outlives
 * the test that caused it. Call in beforeEach; returns the list of sent messages.
 */
export function captureJobs(): JobMessage[] {
  const sent: JobMessage[] = [];
  const jobs = env.JOBS as Queue<JobMessage>;
  vi.spyOn(jobs, "send").mockImplementation(async (m: JobMessage) => {
    sent.push(...unpack(m));
    return {} as QueueSendResponse;
  });
  vi.spyOn(jobs, "sendBatch").mockImplementation(async (ms: Iterable<MessageSendRequest<JobMessage>>) => {
    for (const m of ms) sent.push(...unpack(m.body));
    return {} as QueueSendBatchResponse;
  });
  return sent;
}
