// JOBS queue consumer: one handler per message type. A failing message is retried on its own (the queue's
// max_retries, then the dead-letter queue); the others in the batch are acknowledged.
import { createDb, type DB } from "../db/client";
import type { Env } from "../env";
import { fanOut, unfanOut } from "../timelines/fanout";
import { mergeIntoHome, unmergeFromHome } from "../timelines/feed-merge";
import { regenerateHomeFeed } from "../timelines/regenerate";
import type { JobMessage } from "./jobs";
import { processInboxItem } from "../federation/inbox-process";
import { runFederate } from "../federation/outbound";
import { fetchFeaturedCollection } from "../federation/featured-collection";

export async function runJob(db: DB, env: Env, job: JobMessage): Promise<void> {
  switch (job.type) {
    case "fanout": {
      const { next } = await fanOut(db, job.statusId, job.cursor);
      if (next) await env.JOBS.send({ type: "fanout", statusId: job.statusId, cursor: next });
      return;
    }
    case "unfanout":
      return unfanOut(db, job.statusId);
    case "merge_feed":
      return mergeIntoHome(db, job.accountId, job.targetAccountId);
    case "unmerge_feed":
      return unmergeFromHome(db, job.accountId, job.targetAccountId);
    case "regenerate_feed":
      return regenerateHomeFeed(db, job.accountId);
    case "inbox":
      return processInboxItem(db, env, job.itemId, job.origin);
    case "federate":
      return runFederate(db, env, job.origin, job.action);
    case "fetch_featured":
      return fetchFeaturedCollection(db, env, job.accountId, job.origin);
    default:
      console.warn("unknown job", JSON.stringify(job).slice(0, 200));
  }
}

export async function handleJobs(batch: MessageBatch<JobMessage>, env: Env, ctx: ExecutionContext): Promise<void> {
  const db = createDb(env.DB);
  for (const m of batch.messages) {
    try {
      await runJob(db, env, m.body);
      m.ack();
    } catch (e) {
      console.error("job failed", m.body?.type, e instanceof Error ? e.message : e);
      m.retry({ delaySeconds: Math.min(600, 5 * 2 ** Math.min(m.attempts, 7)) });
    }
  }
  void ctx;
}
