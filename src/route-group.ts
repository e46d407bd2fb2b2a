// A route module's own Hono app. It is never asked to match a request: app.ts copies its routes into the root app
// (`app.route(path, group)`), whose router does the matching. So a group's router only has to accept routes, and
// keeps nothing: with Hono's default router every route was also added to a second, unused router at load
// (~700 routes; part of the script startup bench/startup.mjs measures).
import { Hono } from "hono";
import type { Router } from "hono/router";
import type { AppEnv } from "./context";

const acceptOnly: Router<never> = {
  name: "AcceptOnlyRouter",
  add() {},
  match() {
    throw new Error("a route group is mounted on the root app, never served alone");
  },
};

export function routeGroup(): Hono<AppEnv> {
  return new Hono<AppEnv>({ router: acceptOnly });
}
