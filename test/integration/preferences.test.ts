import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { anon, makeUser } from "./helpers";

it("returns defaults, then the user's settings", async () => {
  const u = await makeUser();
  const res = await u.api.get("/api/v1/preferences");
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    "posting:default:visibility": "public",
    "posting:default:sensitive": false,
    "posting:default:language": null,
    "posting:default:quote_policy": "public",
    "reading:expand:media": "default",
    "reading:expand:spoilers": false,
  });
  const settings = {
    "posting:default:visibility": "unlisted",
    "posting:default:sensitive": true,
    "posting:default:language": "de",
    "reading:expand:spoilers": true,
  };
  await env.DB.prepare("UPDATE users SET settings = ? WHERE id = ?").bind(JSON.stringify(settings), u.userId.padStart(20, "0")).run();
  const after = await u.api.get("/api/v1/preferences");
  expect(after.body).toMatchObject({ ...settings, "reading:expand:media": "default" });
});

it("needs read:accounts", async () => {
  expect((await anon.get("/api/v1/preferences")).status).toBe(401);
  const u = await makeUser(undefined, { scopes: "write" });
  expect((await u.api.get("/api/v1/preferences")).status).toBe(403);
  const ok = await makeUser(undefined, { scopes: "read:accounts" });
  expect((await ok.api.get("/api/v1/preferences")).status).toBe(200);
});
