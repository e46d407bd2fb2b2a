import { applyD1Migrations, env } from "cloudflare:test";
import { beforeEach } from "vitest";
import { installQueueCapture } from "./queues";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Queue messages are captured per test and run inside it (see queues.ts).
beforeEach(() => installQueueCapture());
