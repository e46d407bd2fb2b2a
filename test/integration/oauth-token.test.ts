// POST /oauth/token (client_credentials, password, errors, Basic auth, reuse), POST /oauth/revoke (B3), metadata.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, api, makeUser } from "./helpers";
import { PASSWORD, passwordGrant, registerApp, tokenRequest, web } from "./oauth-helpers";

const INVALID_CLIENT = {
  error: "invalid_client",
  error_description: "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
};

const basic = (id: string, secret: string) => `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;

describe("client_credentials", () => {
  it("issues an app token that works on app endpoints", async () => {
    const app = await registerApp();
    const t = await tokenRequest({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read" });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ token_type: "Bearer", scope: "read" });
    expect(t.headers.get("cache-control")).toBe("no-store");
    const vc = await api(t.body.access_token).get("/api/v1/apps/verify_credentials");
    expect(vc.status).toBe(200);
    expect(vc.body).toEqual({
      id: app.id,
      name: "Flow App",
      website: null,
      scopes: ["read", "write", "follow", "push"],
      redirect_uri: "https://app.example/cb",
      redirect_uris: ["https://app.example/cb"],
      vapid_key: (await api().get("/api/v2/instance")).body.configuration.vapid.public_key,
    });
    const row = await env.DB.prepare("SELECT user_id FROM oauth_access_tokens WHERE application_id = ?")
      .bind(app.id.padStart(20, "0"))
      .first<{ user_id: string | null }>();
    expect(row!.user_id).toBeNull();
  });

  it("defaults to read and accepts HTTP Basic client authentication", async () => {
    const app = await registerApp();
    const t = await tokenRequest({ grant_type: "client_credentials" }, { headers: { authorization: basic(app.client_id, app.client_secret) } });
    expect(t.status).toBe(200);
    expect(t.body.scope).toBe("read");
  });

  it("B10: a scope the app did not register -> invalid_scope", async () => {
    const app = await registerApp("https://app.example/cb", "read write");
    for (const scope of ["admin:write", "read push", "read bogus"]) {
      const t = await tokenRequest({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope });
      expect(t.status).toBe(400);
      expect(t.body.error).toBe("invalid_scope");
      expect(t.body.error_description).toBe("The requested scope is invalid, unknown, or malformed.");
    }
    // A child of a registered parent is within the registration.
    const ok = await tokenRequest({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read:statuses" });
    expect(ok.status).toBe(200);
  });
});

describe("client authentication", () => {
  it("unknown client, wrong secret, or none -> 401 invalid_client with Doorkeeper's text", async () => {
    const app = await registerApp();
    const cases: Record<string, string>[] = [
      { grant_type: "client_credentials", client_id: "nope", client_secret: "nope" },
      { grant_type: "client_credentials", client_id: app.client_id, client_secret: "wrong" },
      { grant_type: "client_credentials", client_id: app.client_id },
      { grant_type: "client_credentials" },
    ];
    for (const body of cases) {
      const t = await tokenRequest(body);
      expect(t.status).toBe(401);
      expect(t.body).toEqual(INVALID_CLIENT);
      expect(t.headers.get("content-type")).toContain("application/json");
    }
    const badBasic = await tokenRequest({ grant_type: "client_credentials" }, { headers: { authorization: basic(app.client_id, "wrong") } });
    expect(badBasic.status).toBe(401);
  });

  it("missing or unsupported grant_type -> 400", async () => {
    const app = await registerApp();
    const missing = await tokenRequest({ client_id: app.client_id, client_secret: app.client_secret });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("invalid_request");
    const bad = await tokenRequest({ grant_type: "implicit", client_id: app.client_id, client_secret: app.client_secret });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("unsupported_grant_type");
  });
});

describe("password grant", () => {
  it("issues a user token and reuses it for the same app, user and scopes", async () => {
    const u = await makeUser("pwgrant");
    const app = await registerApp();
    const body = {
      grant_type: "password",
      client_id: app.client_id,
      client_secret: app.client_secret,
      username: `${u.username}@example.com`,
      password: PASSWORD,
      scope: "read write",
    };
    const a = await tokenRequest(body, { form: false });
    expect(a.status).toBe(200);
    expect(a.body.scope).toBe("read write");
    const b = await tokenRequest(body);
    expect(b.body.access_token).toBe(a.body.access_token);
    const c = await tokenRequest({ ...body, scope: "read" });
    expect(c.body.access_token).not.toBe(a.body.access_token);
    expect((await api(a.body.access_token).get("/api/v1/apps/verify_credentials")).status).toBe(200);
    // Stored as a hash only.
    const raw = await env.DB.prepare("SELECT count(*) AS n FROM oauth_access_tokens WHERE token_hash = ? OR sealed = ?")
      .bind(a.body.access_token, a.body.access_token)
      .first<{ n: number }>();
    expect(raw!.n).toBe(0);
  });

  it("wrong password or unknown e-mail -> invalid_grant", async () => {
    const u = await makeUser("pwwrong");
    const app = await registerApp();
    const base = { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret };
    const wrong = await tokenRequest({ ...base, username: `${u.username}@example.com`, password: "not the password" });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const unknown = await tokenRequest({ ...base, username: "ghost@example.com", password: PASSWORD });
    expect(unknown.body.error).toBe("invalid_grant");
  });

  it("disabled and pending users get no token", async () => {
    const pending = await makeUser("pwpending", { approved: false });
    const disabled = await makeUser("pwdisabled");
    await env.DB.prepare("UPDATE users SET disabled = 1 WHERE id = ?").bind(disabled.userId.padStart(20, "0")).run();
    const app = await registerApp();
    for (const u of [pending, disabled]) {
      const t = await tokenRequest({
        grant_type: "password",
        client_id: app.client_id,
        client_secret: app.client_secret,
        username: `${u.username}@example.com`,
        password: PASSWORD,
      });
      expect(t.status).toBe(400);
      expect(t.body.error).toBe("invalid_grant");
    }
  });

  it("B10: scopes beyond the app's -> invalid_scope", async () => {
    const u = await makeUser("pwscope");
    const app = await registerApp("https://app.example/cb", "read");
    const t = await tokenRequest({
      grant_type: "password",
      client_id: app.client_id,
      client_secret: app.client_secret,
      username: `${u.username}@example.com`,
      password: PASSWORD,
      scope: "read write",
    });
    expect(t.body.error).toBe("invalid_scope");
  });
});

describe("revocation (B3, REST half)", () => {
  it("a revoked token gets 401 afterwards", async () => {
    const u = await makeUser("revoker");
    const app = await registerApp();
    const t = await passwordGrant(app, `${u.username}@example.com`);
    const token = t.body.access_token;
    expect((await api(token).get("/api/v1/apps/verify_credentials")).status).toBe(200);
    const res = await web("/oauth/revoke", { form: { client_id: app.client_id, client_secret: app.client_secret, token } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text_)).toEqual({});
    const after = await api(token).get("/api/v1/apps/verify_credentials");
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: "The access token is invalid" });
    // A new password grant does not hand the revoked token back.
    const again = await tokenRequest({
      grant_type: "password",
      client_id: app.client_id,
      client_secret: app.client_secret,
      username: `${u.username}@example.com`,
      password: PASSWORD,
    });
    expect(again.body.access_token).not.toBe(token);
  });

  it("another app cannot revoke a token; unknown tokens are not an error", async () => {
    const owner = await registerApp();
    const other = await registerApp();
    const t = await tokenRequest({ grant_type: "client_credentials", client_id: owner.client_id, client_secret: owner.client_secret });
    const res = await web("/oauth/revoke", { json: { client_id: other.client_id, client_secret: other.client_secret, token: t.body.access_token } });
    expect(res.status).toBe(200);
    expect((await api(t.body.access_token).get("/api/v1/apps/verify_credentials")).status).toBe(200);
    const unknown = await web("/oauth/revoke", { json: { client_id: other.client_id, client_secret: other.client_secret, token: "nope" } });
    expect(unknown.status).toBe(200);
  });

  it("revocation needs client authentication", async () => {
    const app = await registerApp();
    const t = await tokenRequest({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret });
    const res = await web("/oauth/revoke", { form: { client_id: app.client_id, client_secret: "wrong", token: t.body.access_token } });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text_)).toEqual(INVALID_CLIENT);
    expect((await api(t.body.access_token).get("/api/v1/apps/verify_credentials")).status).toBe(200);
  });
});

describe("server metadata", () => {
  it("serves RFC 8414 metadata with CORS", async () => {
    const res = await web("/.well-known/oauth-authorization-server", { headers: { origin: "https://phanpy.social" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const doc = JSON.parse(res.text_);
    expect(doc).toMatchObject({
      issuer: "http://tern.test",
      authorization_endpoint: "http://tern.test/oauth/authorize",
      token_endpoint: "http://tern.test/oauth/token",
      revocation_endpoint: "http://tern.test/oauth/revoke",
      userinfo_endpoint: "http://tern.test/oauth/userinfo",
      app_registration_endpoint: "http://tern.test/api/v1/apps",
      response_types_supported: ["code"],
      response_modes_supported: ["query", "fragment", "form_post"],
      code_challenge_methods_supported: ["S256"],
      grant_types_supported: ["authorization_code", "client_credentials", "password"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    });
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(["read", "write", "follow", "push", "profile", "read:statuses", "admin:write"]));
    expect(typeof doc.service_documentation).toBe("string");
  });

  it("GET and POST /oauth/userinfo (Mastodon 4.4) name the token's user to a token with the profile scope", async () => {
    const u = await makeUser(undefined, { scopes: "profile" });
    for (const r of [await u.api.get("/oauth/userinfo"), await u.api.post("/oauth/userinfo")]) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        iss: "http://tern.test/",
        sub: `http://tern.test/users/${u.username}`,
        name: "",
        preferred_username: u.username,
        profile: `http://tern.test/@${u.username}`,
        picture: expect.stringMatching(/^http:\/\/tern\.test\//),
      });
    }
    const readOnly = await makeUser(undefined, { scopes: "read" });
    expect((await readOnly.api.get("/oauth/userinfo")).status).toBe(403);
    expect((await anon.get("/oauth/userinfo")).status).toBe(401);
  });

  it("answers the token endpoint's CORS preflight", async () => {
    const res = await web("/oauth/token", { method: "OPTIONS", headers: { origin: "https://phanpy.social", "access-control-request-method": "POST" } });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});
