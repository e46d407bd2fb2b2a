import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { capturedMail } from "./test/support/captured-mail.ts";
import { declineWebSocketCompression, fileConcurrency, keepLoopbackConnectionsOpen } from "./test/support/vitest-pool-tuning.ts";

// Each test file runs in its own workerd (vitest's pool workers, one Miniflare each, not reused across files); at most
// fileConcurrency() at a time (TERN_VITEST_FILES, default: twice the core count, 2..6). See test/support/vitest-pool-tuning.ts.
if (process.env.TERN_WS_DEFLATE !== "1") declineWebSocketCompression();
keepLoopbackConnectionsOpen();

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // Deliver queue batches at once so tests wait for jobs as briefly as possible.
          queueConsumers: {
            "tern-jobs": { maxBatchTimeout: 0.05 },
            "tern-delivery": { maxBatchTimeout: 0.05 },
          },
          // What the EMAIL binding (wrangler.toml [[send_email]]) captured, read back in node (test/support/captured-mail.ts).
          serviceBindings: { CAPTURED_MAIL: capturedMail },
          bindings: {
            TEST_MIGRATIONS: migrations,
            REGISTRATIONS_MODE: "open",
            SETUP_TOKEN: "test-setup-token",
            SECRET_KEY_BASE: "test-pepper",
            // Tests write rows directly and run in one isolate: the instance documents check D1 on every read
            // (test/integration/instance-cache.test.ts turns the in-memory cache on where it tests it).
            INSTANCE_CACHE_SECONDS: "0",
            // An incoming activity goes to the (captured) JOBS queue rather than running after the response, so the
            // tests run it when they choose (test/integration/inbox-after-response.test.ts runs it the production way).
            EFFECTS_AFTER_RESPONSE: "queue",
            // Tests fill the RateLimiter object's counters directly: every request asks it, as before the isolate
            // counted the general budgets itself (test/integration/ratelimit-local.test.ts tests the default of 10).
            RATE_LIMIT_REPORT_EVERY: "1",
            // Remote media stays hot-linked unless a test turns the cache on (test/integration/remote-media-cache.test.ts):
            // the fake remote servers of the other tests serve no files, and their job lists count effects.
            REMOTE_MEDIA_CACHE: "false",
          },
        },
      }),
    ],
    test: {
      include: ["test/integration/**/*.test.ts", "test/unit/**/*.test.ts"],
      setupFiles: ["./test/integration/apply-migrations.ts"],
      // Password hashing is PBKDF2 at 100,000 iterations (as in production); tests that sign in many times need room
      // on a 2-core machine. A timed-out test also leaves storage half-written, which fails the whole file.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      maxWorkers: fileConcurrency(),
    },
  };
});
