// Admin access blocks: /api/v1/admin/canonical_email_blocks, /api/v1/admin/email_domain_blocks and
// /api/v1/admin/ip_blocks (CRUD, authorisation, audit log), and their enforcement at sign-up (API) and sign-in (the
// sign-in page and the password grant).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { formatNetwork, networkContains, parseNetwork } from "../../src/lib/security/cidr";
import { canonicalEmail, canonicalEmailHash } from "../../src/services/admin/blocks/email-blocks";
import { anon, links, makeUser, ORIGIN } from "./helpers";
import { hidden, Jar, PASSWORD, registerApp, tokenRequest, web } from "./oauth-helpers";
import { ADMIN, MOD } from "./admin-fixtures";

async function logRows() {
  const r = await env.DB.prepare("SELECT action, target_type, CAST(target_id AS TEXT) AS target_id FROM admin_action_logs ORDER BY id").all<any>();
  return r.results.map((x) => ({ action: x.action, target_type: x.target_type, target_id: String(BigInt(x.target_id)) }));
}

async function appToken() {
  const app = await registerApp();
  const t = await tokenRequest({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read write" });
  return t.body.access_token as string;
}

let ipSeq = 0;
const signUp = (token: string, name: string, o: { email?: string; ip?: string } = {}) =>
  web("/api/v1/accounts", {
    json: { username: name, email: o.email ?? `${name}@example.net`, password: "a long enough password", agreement: true, locale: "en" },
    ip: o.ip ?? `192.0.2.${++ipSeq}`,
    headers: { authorization: `Bearer ${token}` },
  }).then((r) => ({ status: r.status, body: JSON.parse(r.text_) }));

const RESOURCES = ["canonical_email_blocks", "email_domain_blocks", "ip_blocks"];

describe("authorisation", () => {
  it("401 signed out, 403 without manage_blocks, 403 without the admin scope, read scope does not write", async () => {
    const mod = await makeUser("mod", MOD);
    const noScope = await makeUser("adminnoscope", { roleId: "2", scopes: "read write" });
    for (const r of RESOURCES) {
      expect((await anon.get(`/api/v1/admin/${r}`)).status).toBe(401);
      for (const res of [await mod.api.get(`/api/v1/admin/${r}`), await mod.api.post(`/api/v1/admin/${r}`, {}), await mod.api.delete(`/api/v1/admin/${r}/1`)]) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: "This action is not allowed" });
      }
      for (const res of [await noScope.api.get(`/api/v1/admin/${r}`), await noScope.api.post(`/api/v1/admin/${r}`, {})]) {
        expect(res.status).toBe(403);
        expect(res.body.error).toBe("This action is outside the authorized scopes");
      }
      const reader = await makeUser(`reader_${r}`.slice(0, 30), { roleId: "2", scopes: `admin:read:${r}` });
      expect((await reader.api.get(`/api/v1/admin/${r}`)).status).toBe(200);
      expect((await reader.api.post(`/api/v1/admin/${r}`, {})).status).toBe(403);
    }
    expect((await mod.api.post("/api/v1/admin/canonical_email_blocks/test", { email: "a@b.example" })).status).toBe(403);
    expect((await mod.api.put("/api/v1/admin/ip_blocks/1", {})).status).toBe(403);
  });
});

describe("canonical e-mail blocks", () => {
  it("hashes as Mastodon does: lower case, dots and +tag removed from the local part", async () => {
    expect(canonicalEmail("Foo.Bar+news@Example.COM")).toBe("foobar@example.com");
    expect(canonicalEmail("a.b.c@d.e.example")).toBe("abc@d.e.example");
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode("foobar@example.com"));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(await canonicalEmailHash("FOO.bar+x@example.com")).toBe(hex);
  });

  it("create (by e-mail or by hash), list, show, test, delete; 422 for blank and duplicate; logged", async () => {
    const admin = await makeUser("boss", ADMIN);
    const a = await admin.api.post("/api/v1/admin/canonical_email_blocks", { email: "Spam.Mer+1@Example.com" });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ id: a.body.id, canonical_email_hash: await canonicalEmailHash("spammer@example.com") });
    const hash = "a".repeat(64);
    const b = await admin.api.post("/api/v1/admin/canonical_email_blocks", { canonical_email_hash: hash });
    expect(b.body.canonical_email_hash).toBe(hash);
    const dup = await admin.api.post("/api/v1/admin/canonical_email_blocks", { email: "spammer@example.com" });
    expect(dup.status).toBe(422);
    expect(dup.body.error).toBe("Validation failed: Canonical email hash has already been taken");
    expect((await admin.api.post("/api/v1/admin/canonical_email_blocks", {})).body.error).toBe("Validation failed: Canonical email hash can't be blank");

    const page = await admin.api.get("/api/v1/admin/canonical_email_blocks?limit=1");
    expect(page.body).toEqual([b.body]);
    expect(links(page.headers).next).toContain(`max_id=${b.body.id}`);
    expect((await admin.api.get(`/api/v1/admin/canonical_email_blocks/${a.body.id}`)).body).toEqual(a.body);
    expect((await admin.api.post("/api/v1/admin/canonical_email_blocks/test", { email: "s.p.a.m.m.e.r+x@EXAMPLE.com" })).body).toEqual([a.body]);
    expect((await admin.api.post("/api/v1/admin/canonical_email_blocks/test", { email: "other@example.com" })).body).toEqual([]);
    expect((await admin.api.delete(`/api/v1/admin/canonical_email_blocks/${a.body.id}`)).body).toEqual({});
    expect((await admin.api.get(`/api/v1/admin/canonical_email_blocks/${a.body.id}`)).status).toBe(404);
    expect(await logRows()).toEqual([
      { action: "create", target_type: "CanonicalEmailBlock", target_id: a.body.id },
      { action: "create", target_type: "CanonicalEmailBlock", target_id: b.body.id },
      { action: "destroy", target_type: "CanonicalEmailBlock", target_id: a.body.id },
    ]);
  });

  it("sign-up with a blocked canonical address is 422 ERR_TAKEN; another address signs up", async () => {
    const admin = await makeUser("boss", ADMIN);
    await admin.api.post("/api/v1/admin/canonical_email_blocks", { email: "banned@example.net" });
    const token = await appToken();
    const res = await signUp(token, "sneaky", { email: "Ban.Ned+again@example.net" });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: "Validation failed: Email has already been taken",
      details: { email: [{ error: "ERR_TAKEN", description: "has already been taken" }] },
    });
    expect(await env.DB.prepare("SELECT id FROM accounts WHERE username = 'sneaky'").first()).toBeNull();
    expect((await signUp(token, "honest")).status).toBe(200);
  });
});

describe("e-mail domain blocks", () => {
  it("create, list, show, delete; 422 for blank, invalid and duplicate; history of 7 days; logged", async () => {
    const admin = await makeUser("boss", ADMIN);
    const a = await admin.api.post("/api/v1/admin/email_domain_blocks", { domain: "Spam.Example" });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ domain: "spam.example", created_at: expect.stringMatching(/Z$/) });
    expect(a.body.history).toHaveLength(7);
    expect(a.body.history[0]).toEqual({ day: expect.stringMatching(/^\d+$/), accounts: "0", uses: "0" });
    expect((await admin.api.post("/api/v1/admin/email_domain_blocks", { domain: "spam.example" })).body.error).toBe(
      "Validation failed: Domain has already been taken",
    );
    expect((await admin.api.post("/api/v1/admin/email_domain_blocks", { domain: "" })).status).toBe(422);
    expect((await admin.api.post("/api/v1/admin/email_domain_blocks", { domain: "not a domain" })).body.error).toBe("Validation failed: Domain is invalid");
    const b = await admin.api.post("/api/v1/admin/email_domain_blocks", { domain: "junk.example" });
    const page = await admin.api.get("/api/v1/admin/email_domain_blocks?limit=1");
    expect(page.body.map((x: any) => x.id)).toEqual([b.body.id]);
    expect(links(page.headers).next).toContain(`max_id=${b.body.id}`);
    expect((await admin.api.get(`/api/v1/admin/email_domain_blocks/${a.body.id}`)).body.domain).toBe("spam.example");
    expect((await admin.api.delete(`/api/v1/admin/email_domain_blocks/${a.body.id}`)).body).toEqual({});
    expect((await admin.api.get(`/api/v1/admin/email_domain_blocks/${a.body.id}`)).status).toBe(404);
    expect(await logRows()).toEqual([
      { action: "create", target_type: "EmailDomainBlock", target_id: a.body.id },
      { action: "create", target_type: "EmailDomainBlock", target_id: b.body.id },
      { action: "destroy", target_type: "EmailDomainBlock", target_id: a.body.id },
    ]);
  });

  it("sign-up with an address on a blocked domain or a subdomain of it is 422 ERR_BLOCKED", async () => {
    const admin = await makeUser("boss", ADMIN);
    await admin.api.post("/api/v1/admin/email_domain_blocks", { domain: "spam.example" });
    const token = await appToken();
    for (const email of ["x@spam.example", "y@mail.SPAM.example"]) {
      const res = await signUp(token, `u${email.length}`, { email });
      expect(res.status).toBe(422);
      expect(res.body.details.email).toEqual([{ error: "ERR_BLOCKED", description: "uses a disallowed e-mail provider" }]);
      expect(res.body.error).toBe("Validation failed: Email uses a disallowed e-mail provider");
    }
    expect((await signUp(token, "fine", { email: "z@notspam.example" })).status).toBe(200);
  });
});

describe("IP blocks", () => {
  it("networks are masked and printed as Mastodon does", () => {
    expect(formatNetwork(parseNetwork("192.0.2.77/24")!)).toBe("192.0.2.0/24");
    expect(formatNetwork(parseNetwork("192.0.2.77")!)).toBe("192.0.2.77/32");
    expect(formatNetwork(parseNetwork("2001:DB8:0:0:1::5/64")!)).toBe("2001:db8::/64");
    expect(formatNetwork(parseNetwork("2001:db8::1")!)).toBe("2001:db8::1/128");
    expect(parseNetwork("192.0.2.1/33")).toBeNull();
    expect(parseNetwork("300.0.0.1")).toBeNull();
    expect(networkContains(parseNetwork("192.0.2.0/24")!, "192.0.2.200")).toBe(true);
    expect(networkContains(parseNetwork("192.0.2.0/24")!, "::ffff:192.0.2.5")).toBe(true);
    expect(networkContains(parseNetwork("192.0.2.0/24")!, "192.0.3.1")).toBe(false);
    expect(networkContains(parseNetwork("2001:db8::/32")!, "2001:db8:ffff::1")).toBe(true);
  });

  it("create, list, show, update, delete; 422 for bad input; logged", async () => {
    const admin = await makeUser("boss", ADMIN);
    const a = await admin.api.post("/api/v1/admin/ip_blocks", { ip: "203.0.113.9/24", severity: "sign_up_block", comment: "spam wave", expires_in: 3600 });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ ip: "203.0.113.0/24", severity: "sign_up_block", comment: "spam wave" });
    const expires = Date.parse(a.body.expires_at) - Date.parse(a.body.created_at);
    expect(expires).toBe(3600_000);
    const b = await admin.api.post("/api/v1/admin/ip_blocks", { ip: "2001:db8::", severity: "no_access" }, "form");
    expect(b.body).toMatchObject({ ip: "2001:db8::/128", severity: "no_access", comment: "", expires_at: null });

    for (const [body, error] of [
      [{ severity: "no_access" }, "Ip can't be blank"],
      [{ ip: "nope", severity: "no_access" }, "Ip is invalid"],
      [{ ip: "198.51.100.1" }, "Severity can't be blank"],
      [{ ip: "198.51.100.1", severity: "everything" }, "Severity is not included in the list"],
      [{ ip: "203.0.113.0/24", severity: "no_access" }, "Ip has already been taken"],
      [{ ip: "198.51.100.1", severity: "no_access", expires_in: "soon" }, "Expires in is invalid"],
    ] as const) {
      const res = await admin.api.post("/api/v1/admin/ip_blocks", body);
      expect(res.status).toBe(422);
      expect(res.body.error).toBe(`Validation failed: ${error}`);
    }

    const page = await admin.api.get("/api/v1/admin/ip_blocks?limit=1");
    expect(page.body).toEqual([b.body]);
    expect(links(page.headers).next).toContain(`max_id=${b.body.id}`);
    expect((await admin.api.get(`/api/v1/admin/ip_blocks/${a.body.id}`)).body).toEqual(a.body);
    const u = await admin.api.put(`/api/v1/admin/ip_blocks/${a.body.id}`, { severity: "sign_up_requires_approval", expires_in: "" });
    expect(u.body).toMatchObject({ ip: "203.0.113.0/24", severity: "sign_up_requires_approval", comment: "spam wave", expires_at: null });
    expect((await admin.api.put(`/api/v1/admin/ip_blocks/${a.body.id}`, { severity: "bad" })).status).toBe(422);
    expect((await admin.api.delete(`/api/v1/admin/ip_blocks/${a.body.id}`)).body).toEqual({});
    expect((await admin.api.get(`/api/v1/admin/ip_blocks/${a.body.id}`)).status).toBe(404);
    expect(await logRows()).toEqual([
      { action: "create", target_type: "IpBlock", target_id: a.body.id },
      { action: "create", target_type: "IpBlock", target_id: b.body.id },
      { action: "update", target_type: "IpBlock", target_id: a.body.id },
      { action: "destroy", target_type: "IpBlock", target_id: a.body.id },
    ]);
  });

  it("sign-up: sign_up_block and no_access refuse (403), sign_up_requires_approval makes the account pending, expired rules do nothing", async () => {
    const admin = await makeUser("boss", ADMIN);
    await admin.api.post("/api/v1/admin/ip_blocks", { ip: "198.51.100.0/24", severity: "sign_up_block" });
    await admin.api.post("/api/v1/admin/ip_blocks", { ip: "2001:db8:1::/48", severity: "no_access" });
    await admin.api.post("/api/v1/admin/ip_blocks", { ip: "203.0.113.5", severity: "sign_up_requires_approval" });
    await admin.api.post("/api/v1/admin/ip_blocks", { ip: "192.0.2.250", severity: "sign_up_block", expires_in: 1 });
    await env.DB.prepare("UPDATE ip_blocks SET expires_at = 1 WHERE ip = '192.0.2.250/32'").run();
    const token = await appToken();

    const blocked = await signUp(token, "blockedone", { ip: "198.51.100.42" });
    expect(blocked.status).toBe(403);
    expect(blocked.body).toEqual({ error: "This action is not allowed" });
    expect((await signUp(token, "blockedtwo", { ip: "2001:db8:1:2::9" })).status).toBe(403);
    expect(await env.DB.prepare("SELECT id FROM accounts WHERE username IN ('blockedone', 'blockedtwo')").first()).toBeNull();

    const pending = await signUp(token, "waiting", { ip: "203.0.113.5" });
    expect(pending.status).toBe(200);
    const row = await env.DB.prepare(
      "SELECT u.approved, u.sign_up_ip FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = 'waiting'",
    ).first<any>();
    expect(row).toEqual({ approved: 0, sign_up_ip: "203.0.113.5" });

    expect((await signUp(token, "expiredrule", { ip: "192.0.2.250" })).status).toBe(200);
  });

  it("sign-in: no_access refuses the sign-in page and the password grant (403); other severities do not", async () => {
    const admin = await makeUser("boss", ADMIN);
    const u = await makeUser("walker");
    await admin.api.post("/api/v1/admin/ip_blocks", { ip: "198.51.100.0/24", severity: "no_access" });
    await admin.api.post("/api/v1/admin/ip_blocks", { ip: "203.0.113.0/24", severity: "sign_up_block" });
    const app = await registerApp();
    const grant = (ip: string) =>
      tokenRequest(
        {
          grant_type: "password",
          client_id: app.client_id,
          client_secret: app.client_secret,
          username: `${u.username}@example.com`,
          password: PASSWORD,
          scope: "read",
        },
        { ip },
      );
    const refused = await grant("198.51.100.7");
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: "Forbidden" });
    expect((await grant("203.0.113.7")).status).toBe(200);

    const form = async (ip: string) => {
      const jar = new Jar();
      const page = await web("/auth/sign_in", { jar, ip });
      return web("/auth/sign_in", {
        jar,
        ip,
        form: { email: `${u.username}@example.com`, password: PASSWORD, csrf: hidden(page.text_, "csrf")!, return_to: "/" },
        headers: { origin: ORIGIN },
      });
    };
    const denied = await form("198.51.100.8");
    expect(denied.status).toBe(403);
    expect(denied.text_).toContain("not allowed");
    expect((await form("203.0.113.8")).status).toBe(303);
  });
});
