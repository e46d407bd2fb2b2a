// A route module's routes, kept as a list until app.ts adds them to the root app, which matches every request.
//
// Each module used to build its own Hono app, whose routes Hono's `app.route()` copied into the root (through one more
// app per mount); ~130 Hono apps and ~800 route records were made at every isolate's script startup only to be read
// once. A group has Hono's methods for declaring routes (the same signatures and types, so a handler's context is typed
// as before) and only records what they are given. A route written with its guards
// (`r.get(path, requireUser("read"), handler)`) is recorded as one route whose handler runs the guards and the handler
// in turn (`chain`), where Hono adds one route per function, so the root router holds one entry per endpoint
// (~400 with the middleware) instead of ~700.
import type { Context, Hono, MiddlewareHandler, Next } from "hono";
import { mergePath } from "hono/utils/url";
import type { AppEnv } from "./context";

type Fn = MiddlewareHandler<AppEnv>;
type App = Hono<AppEnv>;

/** One route: its method (`ALL` for middleware), its path within the group, and its one handler. */
export interface GroupRoute {
  method: string;
  path: string;
  handler: Fn;
}

/**
 * Handlers run as Hono's compose runs the handlers of one route: each gets a `next` that runs the rest, a Response it
 * returns becomes the context's unless one was already set, and after the last one the outer `next` runs. Not Hono's
 * `compose` itself: it sets the request's route index per handler, and that index picks the path parameters
 * `c.req.param()` reads, which here belong to the one route the chain is.
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

class Group {
  readonly routes: GroupRoute[] = [];

  add(method: string, path: string, handlers: Fn[]): this {
    if (typeof path !== "string" || !handlers.length) throw new Error(`a route needs a path and a handler (${method} ${String(path)})`);
    // mergePath("/", path): the path as Hono records it (`*` → `/*`).
    this.routes.push({ method, path: mergePath("/", path), handler: handlers.length > 1 ? chain(handlers) : handlers[0]! });
    return this;
  }

  on(methods: string | string[], paths: string | string[], ...handlers: Fn[]): this {
    for (const p of [paths].flat()) for (const m of [methods].flat()) this.add(m.toUpperCase(), p, handlers);
    return this;
  }

  use(first: string | Fn, ...handlers: Fn[]): this {
    if (typeof first === "string") return this.add("ALL", first, handlers);
    return this.add("ALL", "*", [first, ...handlers]);
  }

  /** Another group's routes under `prefix`, as Hono's `route()` mounts a sub-app. */
  route(prefix: string, group: RouteGroup): this {
    for (const r of group.routes) this.routes.push({ ...r, path: mergePath(prefix, r.path) });
    return this;
  }
}

for (const [name, method] of [
  ["get", "GET"],
  ["post", "POST"],
  ["put", "PUT"],
  ["patch", "PATCH"],
  ["delete", "DELETE"],
  ["options", "OPTIONS"],
  ["all", "ALL"],
] as const) {
  Object.defineProperty(Group.prototype, name, {
    value(this: Group, path: string, ...handlers: Fn[]) {
      return this.add(method, path, handlers);
    },
  });
}

/**
 * Hono's route-declaring methods, typed as Hono types them (path parameters, validated input). They return the group
 * itself: chain calls only through these methods and `route`.
 */
export interface RouteGroup extends Pick<App, "get" | "post" | "put" | "patch" | "delete" | "options" | "all" | "on" | "use"> {
  readonly routes: readonly GroupRoute[];
  route(prefix: string, group: RouteGroup): RouteGroup;
}

export function routeGroup(): RouteGroup {
  return new Group() as unknown as RouteGroup;
}

/** Adds a group's routes to the root app under `prefix`. */
export function mount(app: App, prefix: string, group: RouteGroup): void {
  for (const r of group.routes) app.on(r.method, mergePath(prefix, r.path), r.handler);
}
