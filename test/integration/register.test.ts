// POST /api/v1/accounts (sign-up), POST /api/v1/emails/confirmations, registration modes (service level), B11/B12.
import { Effects } from "../../src/effects/collector";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { buildApp } from "../../src/app";
import { describe, expect, it } from "vitest";
import { registerAccount } from "../../src/services/accounts/registration";
import { anon, api, cfg, db, makeUser } from "./helpers";
import { registerApp, tokenRequest, web } from "./oauth-helpers";

async function appToken(scope = "read write follow push") {
  const app = await registerApp();
  const t = await tokenRequest({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope });
  return { app, token: t.body.access_token as string };
}

let ipSeq = 0;
const signUp = (token: string | undefined, body: Record<string, unknown>, ip = `192.0.2.${++ipSeq}`) =>
  web("/api/v1/accounts", { json: body, ip, headers: token ? { authorization: `Bearer ${token}` } : {} }).then((r) => ({
    status: r.status,
    body: JSON.parse(r.text_),
    headers: r.headers,
  }));

const valid = (name: string) => ({ username: name, email: `${name}@example.net`, password: "a long enough password", agreement: true, locale: "en" });

describe("POST /api/v1/accounts (open registrations)", () => {
  it("creates an approved, confirmed user and returns a usable token", async () => {
    const { app, token } = await appToken();
    const res = await signUp(token, valid("newbie"));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: "Bearer", scope: "read write follow push" });
    const user = await env.DB.prepare(
      "SELECT u.approved, u.confirmed_at, u.locale, u.sign_up_ip FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = 'newbie'",
    ).first<any>();
    expect(user.approved).toBe(1);
    expect(user.confirmed_at).not.toBeNull();
    expect(user.locale).toBe("en");
    expect(user.sign_up_ip).toMatch(/^192\.0\.2\./);
    const vc = await api(res.body.access_token).get("/api/v1/apps/verify_credentials");
    expect(vc.status).toBe(200);
    expect(vc.body.id).toBe(app.id);
    // The new user can sign in with the password.
    const pw = await tokenRequest({
      grant_type: "password",
      client_id: app.client_id,
      client_secret: app.client_secret,
      username: "newbie@example.net",
      password: "a long enough password",
    });
    expect(pw.status).toBe(200);
  });

  it("accepts form and multipart bodies (masto.js sends multipart)", async () => {
    const { token } = await appToken();
    const fd = new FormData();
    for (const [k, v] of Object.entries(valid("multipartuser"))) fd.append(k, String(v));
    const res = await api(token).post("/api/v1/accounts", fd, "multipart");
    expect(res.status).toBe(200);
  });

  it("needs an app token with write:accounts", async () => {
    expect((await signUp(undefined, valid("notoken"))).status).toBe(401);
    expect((await signUp("bogus", valid("badtoken"))).status).toBe(401);
    const { token } = await appToken("read");
    const readOnly = await signUp(token, valid("readonly"));
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.error).toBe("This action is outside the authorized scopes");
    const u = await makeUser("alreadyuser");
    const userTok = await signUp(u.token, valid("viauser"));
    expect(userTok.status).toBe(403);
    // Mastodon's require_client_credentials! answer (masto.js's older e2e tests still sign up with a user token).
    expect(userTok.body.error).toBe("This method requires an client credentials authentication");
    const { token: granular } = await appToken("write:accounts");
    expect((await signUp(granular, valid("granular"))).status).toBe(200);
  });

  it("reports every failing field at once with Mastodon's codes: a blank username ERR_BLANK alone, a blank e-mail ERR_BLANK and ERR_INVALID, a blank password ERR_BLANK", async () => {
    const { token } = await appToken();
    const blank = await signUp(token, { username: "", email: "", password: "", agreement: false });
    expect(blank.status).toBe(422);
    expect(blank.body.details).toEqual({
      agreement: [{ error: "ERR_ACCEPTED", description: "must be accepted" }],
      // Mastodon checks the username's format only when it changes from the column's default, the empty string: an
      // empty username is blank, not malformed (masto.js's e2e suite expects exactly this against Mastodon 4.6).
      username: [{ error: "ERR_BLANK", description: "can't be blank" }],
      email: [
        { error: "ERR_BLANK", description: "can't be blank" },
        { error: "ERR_INVALID", description: "is invalid" },
      ],
      password: [{ error: "ERR_BLANK", description: "can't be blank" }],
    });
    // A taken e-mail is reported together with the other fields' errors.
    await makeUser("allatonce");
    const mixed = await signUp(token, { username: "fresh_name", email: "allatonce@example.com", password: "short", agreement: false });
    expect(Object.fromEntries(Object.entries(mixed.body.details).map(([k, v]) => [k, (v as { error: string }[])[0]?.error]))).toEqual({
      agreement: "ERR_ACCEPTED",
      email: "ERR_TAKEN",
      password: "ERR_TOO_SHORT",
    });
  });

  it("requires agreement and reports validation details", async () => {
    const { token } = await appToken();
    const noAgreement = await signUp(token, { ...valid("noagree"), agreement: false });
    expect(noAgreement.status).toBe(422);
    expect(noAgreement.body.details.agreement[0].error).toBe("ERR_ACCEPTED");
    const stringFalse = await signUp(token, { ...valid("noagree2"), agreement: "0" });
    expect(stringFalse.status).toBe(422);
    const bad = await signUp(token, { username: "bad name!", email: "nope", password: "short", agreement: true });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/^Validation failed:/);
    expect(Object.keys(bad.body.details).sort()).toEqual(["email", "password", "username"]);
    await makeUser("taken");
    const taken = await signUp(token, valid("Taken"));
    expect(taken.status).toBe(422);
    expect(taken.body.details.username[0].error).toBe("ERR_TAKEN");
    const reserved = await signUp(token, valid("admin"));
    expect(reserved.body.details.username[0].error).toBe("ERR_RESERVED");
    const arr = await signUp(token, { ...valid("arr"), username: ["a", "b"] });
    expect(arr.status).toBe(422);
  });

  it("B11: the 6th sign-up from one IP in 30 minutes gets 429; B12: X-Forwarded-For does not change the bucket", async () => {
    const { token } = await appToken();
    const ip = "198.51.100.77";
    for (let i = 0; i < 5; i++) {
      // Invalid sign-ups count too (Rack::Attack throttles the request, not the outcome) and cost no hashing.
      const r = await web("/api/v1/accounts", {
        json: { username: `x${i}`, agreement: false },
        ip,
        headers: { authorization: `Bearer ${token}`, "x-forwarded-for": `10.0.0.${i}`, "client-ip": "::1" },
      });
      expect(r.status).toBe(422);
    }
    const sixth = await web("/api/v1/accounts", { json: valid("sixth"), ip, headers: { authorization: `Bearer ${token}`, "x-forwarded-for": "127.0.0.1" } });
    expect(sixth.status).toBe(429);
    expect(JSON.parse(sixth.text_)).toEqual({ error: "Too many requests" });
    expect(sixth.headers.get("x-ratelimit-limit")).toBe("5");
    expect(sixth.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Date.parse(sixth.headers.get("x-ratelimit-reset")!)).toBeGreaterThan(Date.now());
    // Another client IP has its own budget.
    expect((await signUp(token, valid("otherip"), "198.51.100.78")).status).toBe(200);
  });
});

describe("registration modes (service)", () => {
  const app = async () => {
    const a = await registerApp();
    return { applicationId: a.id, scopes: ["read", "write"] };
  };

  it("approval: reason required; the user is pending and cannot sign in by password", async () => {
    const c = { ...cfg(), registrations: "approval" as const };
    const a = await app();
    await expect(registerAccount(db(), new Effects(""), c, env, a, { ...valid("noreason") }, "192.0.2.1")).rejects.toMatchObject({
      status: 422,
      extra: { details: { reason: [{ error: "ERR_BLANK" }] } },
    });
    const t = await registerAccount(db(), new Effects(""), c, env, a, { ...valid("pendinguser"), reason: "I like birds" }, "192.0.2.1");
    const row = await env.DB.prepare("SELECT approved, reason FROM users WHERE email = 'pendinguser@example.net'").first<any>();
    expect(row).toEqual({ approved: 0, reason: "I like birds" });
    expect(t.scopes).toBe("read write");
    // Pending users cannot get a token by password either.
    const reg = await registerApp();
    const pw = await tokenRequest({
      grant_type: "password",
      client_id: reg.client_id,
      client_secret: reg.client_secret,
      username: "pendinguser@example.net",
      password: "a long enough password",
    });
    expect(pw.body.error).toBe("invalid_grant");
  });

  it("closed: 403 This action is not allowed", async () => {
    const c = { ...cfg(), registrations: "closed" as const };
    await expect(registerAccount(db(), new Effects(""), c, env, await app(), valid("closeduser"), null)).rejects.toMatchObject({
      status: 403,
      message: "This action is not allowed",
    });
    const row = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = 'closeduser@example.net'").first<any>();
    expect(row.n).toBe(0);
  });

  it("open with e-mail confirmation required: approved but unconfirmed", async () => {
    const c = { ...cfg(), registrations: "open" as const, requireEmailConfirmation: true };
    await registerAccount(db(), new Effects(""), c, env, await app(), valid("unconfirmed"), null);
    const row = await env.DB.prepare("SELECT approved, confirmed_at FROM users WHERE email = 'unconfirmed@example.net'").first<any>();
    expect(row).toEqual({ approved: 1, confirmed_at: null });
  });
});

describe("registration modes over HTTP (env override)", () => {
  async function signUpWithMode(mode: string, token: string, body: Record<string, unknown>) {
    const ctx = createExecutionContext();
    const req = new Request("http://tern.test/api/v1/accounts", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "cf-connecting-ip": `192.0.2.${++ipSeq}` },
      body: JSON.stringify(body),
    });
    const res = await buildApp().fetch(req, { ...env, REGISTRATIONS_MODE: mode }, ctx);
    await waitOnExecutionContext(ctx);
    return { status: res.status, body: (await res.json()) as any };
  }

  it("closed: 403", async () => {
    const { token } = await appToken();
    const res = await signUpWithMode("closed", token, valid("httpclosed"));
    expect(res).toEqual({ status: 403, body: { error: "This action is not allowed" } });
  });

  it("approval: 422 without a reason, then a token for a pending user", async () => {
    const { token } = await appToken();
    const noReason = await signUpWithMode("approval", token, valid("httppending"));
    expect(noReason.status).toBe(422);
    expect(noReason.body.details.reason[0].error).toBe("ERR_BLANK");
    const ok = await signUpWithMode("approval", token, { ...valid("httppending"), reason: "hello" });
    expect(ok.status).toBe(200);
    expect(typeof ok.body.access_token).toBe("string");
    const row = await env.DB.prepare("SELECT approved FROM users WHERE email = 'httppending@example.net'").first<any>();
    expect(row.approved).toBe(0);
    // User endpoints refuse the pending user's token (guard); the confirmation resend accepts it.
    const me = await api(ok.body.access_token).get("/api/v1/accounts/verify_credentials");
    expect(me.status).toBe(403);
    expect(me.body).toEqual({ error: "Your login is currently pending approval" });
  });
});

describe("POST /api/v1/emails/confirmations", () => {
  it("403 for a confirmed user", async () => {
    const u = await makeUser("confirmeduser");
    const res = await u.api.post("/api/v1/emails/confirmations");
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This method is only available while the e-mail is awaiting confirmation" });
  });

  it("200 {} for an unconfirmed (even pending) user, and can change the address", async () => {
    const u = await makeUser("unconf", { approved: false });
    await env.DB.prepare("UPDATE users SET confirmed_at = NULL WHERE id = ?").bind(u.userId.padStart(20, "0")).run();
    const res = await u.api.post("/api/v1/emails/confirmations");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    const changed = await u.api.post("/api/v1/emails/confirmations", { email: "New@Example.org" });
    expect(changed.status).toBe(200);
    const row = await env.DB.prepare("SELECT email FROM users WHERE id = ?").bind(u.userId.padStart(20, "0")).first<any>();
    expect(row.email).toBe("New@example.org");
    const bad = await u.api.post("/api/v1/emails/confirmations", { email: "not an email" });
    expect(bad.status).toBe(422);
    await makeUser("owner2");
    const dup = await u.api.post("/api/v1/emails/confirmations", { email: "owner2@example.com" });
    expect(dup.status).toBe(422);
  });

  it("needs a user token with write:accounts", async () => {
    expect((await anon.post("/api/v1/emails/confirmations")).status).toBe(401);
    const { token } = await appToken();
    expect((await api(token).post("/api/v1/emails/confirmations")).status).toBe(422);
    const r = await makeUser("readonlyconf", { scopes: "read" });
    expect((await r.api.post("/api/v1/emails/confirmations")).status).toBe(403);
  });
});

describe("GET /api/v1/emails/check_confirmation (Mastodon 4.3)", () => {
  it("answers whether the user's e-mail is confirmed, also while the account awaits approval", async () => {
    const confirmed = await makeUser("checkconfirmed");
    const yes = await confirmed.api.get("/api/v1/emails/check_confirmation");
    expect(yes.status).toBe(200);
    expect(yes.body).toBe(true);
    const u = await makeUser("checkunconf", { approved: false });
    await env.DB.prepare("UPDATE users SET confirmed_at = NULL WHERE id = ?").bind(u.userId.padStart(20, "0")).run();
    expect((await u.api.get("/api/v1/emails/check_confirmation")).body).toBe(false);
    expect((await anon.get("/api/v1/emails/check_confirmation")).status).toBe(401);
    const w = await makeUser("checkwriteonly", { scopes: "write" });
    expect((await w.api.get("/api/v1/emails/check_confirmation")).status).toBe(403);
  });
});
