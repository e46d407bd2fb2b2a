// Worker entry: HTTP (Hono), Queue consumers, cron, and the Durable Object classes.
import { buildApp } from "./app";
import { runCronTrigger } from "./background/cron";
import { handleQueue } from "./background/queues";
import type { Env } from "./env";

export { HomeFeed } from "./timelines/home-feed-do";
export { Streaming } from "./streaming/streaming-do";
export { RateLimiter } from "./lib/limits/rate-limiter-do";

const app = buildApp();

export default {
  fetch: app.fetch,
  queue: (batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext) => handleQueue(batch, env),
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(runCronTrigger(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
