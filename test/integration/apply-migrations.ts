import { applyD1Migrations, env } from "cloudflare:test";
import { afterEach, beforeEach } from "vitest";
import { installFetchMock } from "../support/fetch-mock";
import { restoreTestStorage, saveTestStorage } from "../support/test-storage";
import { installQueueCapture } from "./queues";

// Outbound fetches go through the test's fetchMock when a file turns it on (test/support/fetch-mock.ts).
installFetchMock();

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Each test starts from the state the file's setup left: what it writes to D1 and R2 is undone when it ends
// (test/support/test-storage.ts). Registered first, so the restore runs after the file's own afterEach hooks.
beforeEach(() => saveTestStorage());
afterEach(() => restoreTestStorage());

// Queue messages are captured per test and run inside it (see queues.ts).
beforeEach(() => installQueueCapture());
