// A route module's own Hono app. It is never asked to match a request: app.ts copies its routes into the root app
// (`app.route(path, group)`), whose router does the matching. So a group's router only has to accept routes, and
// keeps nothing: with Hono's default router every route was also added to a second, unused router at load.
//
// A route written with its guards (`r.get(path, requireUser("read"), handler)`) is added as one route whose handler runs
// the guards and the handler in turn, where Hono adds one route per function. The root router then holds one entry per
// endpoint (~400 with the middleware) instead of ~700, which it copies at load and builds into tries as requests
// arrive (src/lib/prefix-router.ts).
import type { Context, MiddlewareHandler, Next } from "hono";
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

type Fn = MiddlewareHandler<AppEnv>;

/**
 * Handlers run as Hono's compose runs the handlers of one route: each gets a `next` that runs the rest, a Response it
 * returns becomes the context's unless one was already set, and after the last one the outer `next` runs.
 */
export function chain(handlers: Fn[]): Fn {
  return (c: Context<AppEnv>, next: Next) => {
    const step = async (i: number): Promise<void> => {
      const handler = handlers[i];
      if (!handler) return next();
      const res = await handler(c, () => step(i + 1));
      if (res && !c.finalized) c.res = res;
    };
    return step(0);
  };
}

const METHODS = ["get", "post", "put", "delete", "options", "patch", "all"] as const;

export function routeGroup(): Hono<AppEnv> {
  const g = new Hono<AppEnv>({ router: acceptOnly });
  const loose = g as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const m of METHODS) {
    const add = loose[m]!;
    loose[m] = (first: unknown, ...rest: unknown[]) => (typeof first === "string" && rest.length > 1 ? add(first, chain(rest as Fn[])) : add(first, ...rest));
  }
  const on = loose.on!;
  loose.on = (method: unknown, path: unknown, ...handlers: unknown[]) =>
    handlers.length > 1 ? on(method, path, chain(handlers as Fn[])) : on(method, path, ...handlers);
  return g;
}
