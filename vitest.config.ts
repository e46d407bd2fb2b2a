import path from "node:path";
import { defineWorkersConfig, readD1Migrations } from "@cloudflare/vitest-pool-workers/config";

export default defineWorkersConfig(async () => {
  const migrations = await readD1Migrations(path.join(__dirname, "migrations"));
  return {
    test: {
      include: ["test/integration/**/*.test.ts", "test/unit/**/*.test.ts"],
      setupFiles: ["./test/integration/apply-migrations.ts"],
      poolOptions: {
        workers: {
          singleWorker: true,
          isolatedStorage: true,
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            bindings: {
              TEST_MIGRATIONS: migrations,
              REGISTRATIONS_MODE: "open",
              SETUP_TOKEN: "test-setup-token",
              SECRET_KEY_BASE: "test-pepper",
            },
          },
        },
      },
    },
  };
});
