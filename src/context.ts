import type { Context } from "hono";
import type { DB } from "./db/client";
import type { Config, Env } from "./env";
import type { D1Count } from "./lib/d1-counter";
import type { Viewer } from "./oauth/viewer";

export interface AppVariables {
  db: DB;
  config: Config;
  viewer: Viewer | null;
  invalidToken: boolean;
  d1: D1Count;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
export type Ctx = Context<AppEnv>;
