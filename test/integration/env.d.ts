import type { D1Migration } from "cloudflare:test";
import type { Env } from "../../src/env";

// `env` of cloudflare:test (and cloudflare:workers) is Cloudflare.Env: Tern's bindings, and the migrations the setup
// file applies (vitest.config.ts).
declare global {
  namespace Cloudflare {
    interface Env extends TernEnv {
      TEST_MIGRATIONS: D1Migration[];
      /** The mail miniflare captured (test/support/captured-mail.ts): GET ?to=<address>&since=<ms> → CapturedMail[]. */
      CAPTURED_MAIL: Fetcher;
    }
  }
}
type TernEnv = Env;
