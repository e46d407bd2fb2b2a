// Worker entry: HTTP (Hono), Queue consumers, cron, and the Durable Object classes.
import { buildApp } from "./app";
import type { Env } from "./env";
import { handleJobs } from "./services/job-runner";
import { runScheduled } from "./services/scheduled";
import { handleDeliveries } from "./federation/delivery";
import { createDb } from "./db/client";
import { storeDeadLetters } from "./services/dead-letters";

export { HomeFeed } from "./timelines/home-feed-do";
export { Streaming } from "./streaming/streaming-do";
export { RateLimiter } from "./lib/rate-limiter-do";

const app = buildApp();

export default {
  fetch: app.fetch,
  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) {
    if (batch.queue.startsWith("tern-jobs")) return handleJobs(batch as MessageBatch<any>, env, ctx);
    if (batch.queue.startsWith("tern-delivery")) return handleDeliveries(batch as MessageBatch<any>, env);
    // Dead letters: stored for staff (dead_letters table); an admin view of them comes with the admin API.
    console.warn("dead letters", batch.queue, batch.messages.length);
    return storeDeadLetters(createDb(env.DB), batch);
  },
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
