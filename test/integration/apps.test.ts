// POST /api/v1/apps and GET /api/v1/apps/verify_credentials (B6).
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, api, makeUser } from "./helpers";
import { tokenRequest } from "./oauth-helpers";

describe("POST /api/v1/apps", () => {
  it("registers an app from JSON and returns the CredentialApplication", async () => {
    const res = await anon.post("/api/v1/apps", {
      client_name: "Elk",
      redirect_uris: "https://elk.zone/api/tern.test/oauth/x",
      scopes: "read write follow push",
      website: "https://elk.zone",
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: "Elk",
      website: "https://elk.zone",
      scopes: ["read", "write", "follow", "push"],
      redirect_uri: "https://elk.zone/api/tern.test/oauth/x",
      redirect_uris: ["https://elk.zone/api/tern.test/oauth/x"],
      client_id: expect.any(String),
      client_secret: expect.any(String),
      client_secret_expires_at: 0,
      vapid_key: await serverKey(),
    });
    expect(res.body.client_id.length).toBeGreaterThanOrEqual(32);
    expect(res.body.client_secret).not.toBe(res.body.client_id);
  });

  it("accepts form encoding, several URIs (newlines or array) and defaults scopes to read", async () => {
    const form = await anon.post("/api/v1/apps", { client_name: "Phanpy", redirect_uris: "https://phanpy.social/\nurn:ietf:wg:oauth:2.0:oob" }, "form");
    expect(form.status).toBe(200);
    expect(form.body.scopes).toEqual(["read"]);
    expect(form.body.redirect_uris).toEqual(["https://phanpy.social/", "urn:ietf:wg:oauth:2.0:oob"]);
    expect(form.body.redirect_uri).toBe("https://phanpy.social/\nurn:ietf:wg:oauth:2.0:oob");
    expect(form.body.website).toBeNull();
    const arr = await anon.post("/api/v1/apps", { client_name: "Arr", redirect_uris: ["https://a.example/cb", "https://b.example/cb"] });
    expect(arr.body.redirect_uris).toEqual(["https://a.example/cb", "https://b.example/cb"]);
    const bracket = new URLSearchParams([
      ["client_name", "Brackets"],
      ["redirect_uris[]", "https://a.example/1"],
      ["redirect_uris[]", "https://a.example/2"],
    ]);
    const br = await anon.post("/api/v1/apps", bracket, "form");
    expect(br.body.redirect_uris).toEqual(["https://a.example/1", "https://a.example/2"]);
  });

  it("accepts custom URI schemes (Ivory) and loopback http", async () => {
    const res = await anon.post("/api/v1/apps", {
      client_name: "Ivory",
      redirect_uris: "com.tapbots.Ivory.19:/request_token",
      scopes: "read write follow push",
    });
    expect(res.status).toBe(200);
    expect(res.body.redirect_uris).toEqual(["com.tapbots.Ivory.19:/request_token"]);
    const loop = await anon.post("/api/v1/apps", { client_name: "CLI", redirect_uris: "http://127.0.0.1:8080/callback" });
    expect(loop.status).toBe(200);
  });

  it.each([
    ["javascript:alert(1)"],
    ["JaVaScRiPt:alert(1)"],
    ["data:text/html,<script>alert(1)</script>"],
    ["vbscript:msgbox(1)"],
    ["https://ok.example/cb\njavascript:alert(1)"],
    ["/relative/path"],
    ["not a uri"],
    ["https://app.example/cb#fragment"],
    [`https://app.example/${"a".repeat(2000)}`],
  ])("B6: refuses redirect_uris=%s with 422", async (uris) => {
    const res = await anon.post("/api/v1/apps", { client_name: "Evil", redirect_uris: uris });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/^Validation failed: Redirect URI/);
  });

  it("validates name, scopes and website", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ redirect_uris: "urn:ietf:wg:oauth:2.0:oob" }, /Application name can't be blank/],
      [{ client_name: "x".repeat(61), redirect_uris: "urn:ietf:wg:oauth:2.0:oob" }, /Application name is too long/],
      [{ client_name: "x" }, /Redirect URI can't be blank/],
      [{ client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read bogus" }, /Scopes/],
      [{ client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", website: "javascript:alert(1)" }, /Website is invalid/],
      [{ client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", website: `https://a.example/${"a".repeat(2000)}` }, /Website is invalid/],
      [{ client_name: ["a", "b"], redirect_uris: "urn:ietf:wg:oauth:2.0:oob" }, /Application name is invalid/],
    ];
    for (const [body, msg] of cases) {
      const res = await anon.post("/api/v1/apps", body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.body.error).toMatch(msg);
    }
    const sixty = await anon.post("/api/v1/apps", { client_name: "x".repeat(60), redirect_uris: "urn:ietf:wg:oauth:2.0:oob" });
    expect(sixty.status).toBe(200);
  });

  it("answers CORS preflight from browser clients", async () => {
    const res = await anon.post("/api/v1/apps", { client_name: "C", redirect_uris: "urn:ietf:wg:oauth:2.0:oob" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("GET /api/v1/apps/verify_credentials", () => {
  it("works with an app token and a user token", async () => {
    const reg = await anon.post("/api/v1/apps", {
      client_name: "Verify",
      redirect_uris: "urn:ietf:wg:oauth:2.0:oob",
      scopes: "read write",
      website: "https://v.example",
    });
    const t = await tokenRequest({ grant_type: "client_credentials", client_id: reg.body.client_id, client_secret: reg.body.client_secret });
    const res = await api(t.body.access_token).get("/api/v1/apps/verify_credentials");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: reg.body.id,
      name: "Verify",
      website: "https://v.example",
      scopes: ["read", "write"],
      redirect_uri: "urn:ietf:wg:oauth:2.0:oob",
      redirect_uris: ["urn:ietf:wg:oauth:2.0:oob"],
      vapid_key: await serverKey(),
    });
    expect(res.body.client_secret).toBeUndefined();
    const u = await makeUser("appverifier");
    const ures = await u.api.get("/api/v1/apps/verify_credentials");
    expect(ures.status).toBe(200);
    expect(ures.body.name).toBe("Test App");
  });

  it("401 without a token or with an invalid one", async () => {
    expect((await anon.get("/api/v1/apps/verify_credentials")).status).toBe(401);
    const bad = await api("not-a-token").get("/api/v1/apps/verify_credentials");
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: "The access token is invalid" });
  });
});

/** The instance's Web Push key (made on first use), which apps must be given too. */
async function serverKey(): Promise<string> {
  const res = await SELF.fetch("http://tern.test/api/v2/instance");
  const key = ((await res.json()) as { configuration: { vapid: { public_key: string } } }).configuration.vapid.public_key;
  expect(key).toMatch(/^[A-Za-z0-9_-]{87}$/);
  return key;
}
