import type { Context } from "hono";
import type { DB } from "./db/client";
import type { Config, Env } from "./env";
import type { Effects } from "./effects/collector";
import type { D1Count } from "./lib/limits/d1-counter";
import type { Viewer } from "./oauth/viewer";

export interface AppVariables {
  db: DB;
  config: Config;
  viewer: Viewer | null;
  invalidToken: boolean;
  d1: D1Count;
  /** The request's D1 session (src/db/session.ts); `db` runs over it. Its bookmark is sent back after the handler. */
  d1Session: D1DatabaseSession;
  /** What the request's actions cause after their writes; sent once the handler has returned (app.ts). */
  fx: Effects;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
export type Ctx = Context<AppEnv>;
