import { SELF, env } from "cloudflare:test";
import { expect, it } from "vitest";

it("answers unknown API routes with a JSON 404", async () => {
  const res = await SELF.fetch("http://tern.test/api/v1/nope");
  expect(res.status).toBe(404);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(await res.json()).toEqual({ error: "Record not found" });
});

it("has the counter triggers", async () => {
  const r = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type='trigger' ORDER BY name").all();
  expect(r.results.map((x: any) => x.name)).toContain("follows_after_insert");
});

it("GET /health answers OK without touching storage (Mastodon's health check)", async () => {
  const res = await SELF.fetch("http://tern.test/health");
  expect(res.status).toBe(200);
  expect(await res.text()).toBe("OK");
  expect((await SELF.fetch("http://tern.test/health", { method: "HEAD" })).status).toBe(200);
});
