// Route groups (src/route-group.ts): a route written with its guards is one route whose handler runs them in turn,
// as Hono's compose runs the handlers of a route; these check that a Hono app serves it the same way.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/context";
import { mount, routeGroup } from "../../src/route-group";

function appWith(build: (r: ReturnType<typeof routeGroup>) => void, prefix = "/api") {
  const r = routeGroup();
  build(r);
  const app = new Hono<AppEnv>();
  mount(app, prefix, r);
  return app;
}

describe("route groups", () => {
  it("runs guards then the handler, with the route's path parameters", async () => {
    const seen: string[] = [];
    const app = appWith((r) =>
      r.get(
        "/things/:id",
        async (_c, next) => {
          seen.push("guard");
          await next();
          seen.push("after");
        },
        (c) => {
          seen.push("handler");
          return c.text(`thing ${c.req.param("id")}`);
        },
      ),
    );
    const res = await app.request("/api/things/42");
    expect(await res.text()).toBe("thing 42");
    expect(seen).toEqual(["guard", "handler", "after"]);
    expect(app.routes.filter((x) => x.path === "/api/things/:id")).toHaveLength(1);
  });

  it("answers with a guard's response and never reaches the handler", async () => {
    let reached = false;
    const app = appWith((r) =>
      r.post(
        "/x",
        (c) => c.json({ error: "no" }, 403),
        (c) => {
          reached = true;
          return c.text("yes");
        },
      ),
    );
    const res = await app.request("/api/x", { method: "POST" });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "no" });
    expect(reached).toBe(false);
  });

  it("lets a guard change the handler's response after next(), and passes errors to the app's handler", async () => {
    const app = appWith((r) => {
      r.get(
        "/h",
        async (c, next) => {
          await next();
          c.header("X-Guarded", "1");
        },
        (c) => c.text("ok"),
      );
      r.get(
        "/boom",
        async (_c, next) => next(),
        () => {
          throw new Error("boom");
        },
      );
    });
    app.onError((err, c) => c.text(`caught ${err.message}`, 500));
    const res = await app.request("/api/h");
    expect(res.headers.get("X-Guarded")).toBe("1");
    expect(await res.text()).toBe("ok");
    const boom = await app.request("/api/boom");
    expect(boom.status).toBe(500);
    expect(await boom.text()).toBe("caught boom");
  });

  it("mounts nested groups and middleware under their prefixes, methods from on()", async () => {
    const inner = routeGroup();
    inner.on(["GET", "HEAD"], "/leaf", (c) => c.text("leaf"));
    const app = appWith((r) => {
      r.use("*", async (c, next) => {
        await next();
        c.header("X-Mw", "yes");
      });
      r.route("/inner", inner);
    });
    const res = await app.request("/api/inner/leaf");
    expect(await res.text()).toBe("leaf");
    expect(res.headers.get("X-Mw")).toBe("yes");
    expect((await app.request("/api/inner/leaf", { method: "HEAD" })).status).toBe(200);
    expect((await app.request("/api/inner/leaf", { method: "POST" })).status).toBe(404);
  });
});
