// Staff accounts API: /api/v1/admin/accounts (legacy filters, show, approve, reject, action, undos) and
// /api/v2/admin/accounts (new filters); B17; the admin log; admin.sign_up notifications.
import { Effects } from "../../src/effects/collector";
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { accounts } from "../../src/db/schema";
import { snowflake } from "../../src/lib/text/ids";
import { registerAccount } from "../../src/services/accounts/registration";
import { anon, api, cfg, db, links, makeApp, makeUser } from "./helpers";

const ADMIN = { roleId: "2", scopes: "read write admin:read admin:write" };
const MOD = { roleId: "1", scopes: "read write admin:read admin:write" };

async function logRows() {
  const r = await env.DB.prepare("SELECT account_id, action, target_type, target_id FROM admin_action_logs ORDER BY id").all<any>();
  return r.results.map((x) => ({ ...x, account_id: String(BigInt(x.account_id)), target_id: String(BigInt(x.target_id)) }));
}

async function signUpPending(name: string) {
  const app = await makeApp();
  const c = { ...cfg(), registrations: "approval" as const };
  const t = await registerAccount(
    db(),
    new Effects(""),
    c,
    env,
    { applicationId: app.id, scopes: ["read", "write"] },
    {
      username: name,
      email: `${name}@example.net`,
      password: "a long enough password",
      agreement: true,
      locale: "de",
      reason: "I watch terns",
    },
    "198.51.100.7",
  );
  const row = await env.DB.prepare(
    "SELECT CAST(a.id AS TEXT) AS id, CAST(u.id AS TEXT) AS uid FROM accounts a JOIN users u ON u.account_id = a.id WHERE a.username = ?",
  )
    .bind(name)
    .first<any>();
  return { id: String(BigInt(row.id)), userId: String(BigInt(row.uid)), token: t.accessToken, api: api(t.accessToken) };
}

async function makeRemote(username: string, domain: string) {
  const id = snowflake();
  const now = Date.now();
  await db()
    .insert(accounts)
    .values({
      id,
      username,
      domain,
      uri: `https://${domain}/users/${username}`,
      inboxUrl: `https://${domain}/users/${username}/inbox`,
      createdAt: now,
      updatedAt: now,
    });
  return id;
}

describe("authorisation (B17)", () => {
  it("401 without a token, 403 for a non-staff admin:read token, 403 scope error for staff without admin scope", async () => {
    expect((await anon.get("/api/v1/admin/accounts")).status).toBe(401);
    expect((await anon.get("/api/v2/admin/accounts")).status).toBe(401);
    const plain = await makeUser("plainuser", { scopes: "read admin:read admin:write" });
    for (const res of [
      await plain.api.get("/api/v1/admin/accounts"),
      await plain.api.get("/api/v2/admin/accounts"),
      await plain.api.post(`/api/v1/admin/accounts/${plain.id}/approve`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "This action is not allowed" });
    }
    const mod = await makeUser("modnoscope", { roleId: "1" });
    const res = await mod.api.get("/api/v1/admin/accounts");
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("This action is outside the authorized scopes");
    // Read scope does not cover writes.
    const reader = await makeUser("modreader", { roleId: "1", scopes: "admin:read" });
    expect((await reader.api.get("/api/v1/admin/accounts")).status).toBe(200);
    const w = await reader.api.post(`/api/v1/admin/accounts/${plain.id}/action`, { type: "silence" });
    expect(w.status).toBe(403);
    expect(w.body.error).toBe("This action is outside the authorized scopes");
  });

  it("unknown and malformed ids are 404", async () => {
    const admin = await makeUser("adm404", ADMIN);
    expect((await admin.api.get("/api/v1/admin/accounts/123456")).status).toBe(404);
    expect((await admin.api.get("/api/v1/admin/accounts/abc")).status).toBe(404);
    expect((await admin.api.post("/api/v1/admin/accounts/99999999999999999999/approve")).status).toBe(404);
  });
});

describe("pending sign-ups", () => {
  it("shows the Admin::Account of a pending sign-up and notifies staff", async () => {
    const admin = await makeUser("admshow", ADMIN);
    const mod = await makeUser("modshow", MOD);
    await makeUser("bystander");
    const p = await signUpPending("hopeful");
    const res = await admin.api.get(`/api/v1/admin/accounts/${p.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: p.id,
      username: "hopeful",
      domain: null,
      email: "hopeful@example.net",
      ip: "198.51.100.7",
      ips: [{ ip: "198.51.100.7" }],
      locale: "de",
      invite_request: "I watch terns",
      role: { id: "-99", permissions: "0" },
      confirmed: true,
      approved: false,
      disabled: false,
      silenced: false,
      suspended: false,
      sensitized: false,
      account: { id: p.id, username: "hopeful", acct: "hopeful" },
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    const staffView = await admin.api.get(`/api/v1/admin/accounts/${admin.id}`);
    expect(staffView.body.role).toMatchObject({ id: "2", name: "Admin" });

    // admin.sign_up reaches staff with manage_users (admin and moderator), nobody else.
    for (const u of [admin, mod]) {
      const n = await u.api.get("/api/v1/notifications");
      expect(n.body.map((x: any) => [x.type, x.account.id])).toContainEqual(["admin.sign_up", p.id]);
    }
    const none = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE type = 'admin.sign_up'").first<any>();
    expect(none.n).toBe(2);
  });

  it("lists pending sign-ups (v1 pending, v2 status=pending)", async () => {
    const admin = await makeUser("admlist", ADMIN);
    const p = await signUpPending("waiting");
    const direct = await makeUser("waiting2", { approved: false });
    const v1 = await admin.api.get("/api/v1/admin/accounts?pending=true");
    expect(v1.status).toBe(200);
    expect(v1.body.map((a: any) => a.id)).toEqual([direct.id, p.id]);
    const v2 = await admin.api.get("/api/v2/admin/accounts?status=pending");
    expect(v2.body.map((a: any) => a.username)).toEqual(["waiting2", "waiting"]);
    expect(v2.body[1].invite_request).toBe("I watch terns");
    // No invites here: an invited_by filter matches nobody.
    const invited = await admin.api.get(`/api/v2/admin/accounts?invited_by=${admin.id}`);
    expect([invited.status, invited.body]).toEqual([200, []]);
  });

  it("approve: the user's token starts working, the action is logged; approving again is 403", async () => {
    const admin = await makeUser("admapprove", ADMIN);
    const p = await signUpPending("applicant");
    const before = await p.api.get("/api/v1/accounts/verify_credentials");
    expect(before.status).toBe(403);
    const res = await admin.api.post(`/api/v1/admin/accounts/${p.id}/approve`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: p.id, approved: true });
    const after = await p.api.get("/api/v1/accounts/verify_credentials");
    expect(after.status).toBe(200);
    expect(after.body.username).toBe("applicant");
    expect(await logRows()).toEqual([{ account_id: admin.id, action: "approve", target_type: "User", target_id: p.userId }]);
    expect((await admin.api.post(`/api/v1/admin/accounts/${p.id}/approve`)).status).toBe(403);
    expect((await admin.api.post(`/api/v1/admin/accounts/${p.id}/reject`)).status).toBe(403);
    expect((await admin.api.get("/api/v1/admin/accounts?pending=1")).body).toEqual([]);
  });

  it("reject: the user and account are gone, the name is free again, the action is logged", async () => {
    const mod = await makeUser("modreject", MOD);
    const p = await signUpPending("spammer");
    const res = await mod.api.post(`/api/v1/admin/accounts/${p.id}/reject`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await mod.api.get(`/api/v1/admin/accounts/${p.id}`)).status).toBe(404);
    expect((await mod.api.get(`/api/v1/accounts/${p.id}`)).status).toBe(404);
    expect((await p.api.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    const left = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM users WHERE email = 'spammer@example.net') AS u, (SELECT count(*) FROM notifications WHERE type = 'admin.sign_up') AS n",
    ).first<any>();
    expect(left).toEqual({ u: 0, n: 0 });
    expect(await logRows()).toEqual([{ account_id: mod.id, action: "reject", target_type: "User", target_id: p.userId }]);
    await signUpPending("spammer");
  });

  it("approve and reject refuse remote accounts (403)", async () => {
    const admin = await makeUser("admremote", ADMIN);
    const remote = await makeRemote("far", "remote.example");
    expect((await admin.api.post(`/api/v1/admin/accounts/${remote}/approve`)).status).toBe(403);
    expect((await admin.api.post(`/api/v1/admin/accounts/${remote}/reject`)).status).toBe(403);
  });
});

describe("moderation actions", () => {
  it("suspend: the profile is 410, the user's token is refused; unsuspend restores; both logged", async () => {
    const admin = await makeUser("admsusp", ADMIN);
    const bad = await makeUser("baddie");
    const res = await admin.api.post(`/api/v1/admin/accounts/${bad.id}/action`, { type: "suspend", text: "spam" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await anon.get(`/api/v1/accounts/${bad.id}`)).status).toBe(410);
    const vc = await bad.api.get("/api/v1/accounts/verify_credentials");
    expect(vc.status).toBe(403);
    const shown = await admin.api.get(`/api/v1/admin/accounts/${bad.id}`);
    expect(shown.body).toMatchObject({ suspended: true, account: { suspended: true } });
    // v1 defaults to active local accounts: the suspended one is only in the suspended filter.
    expect((await admin.api.get("/api/v1/admin/accounts")).body.map((a: any) => a.id)).not.toContain(bad.id);
    expect((await admin.api.get("/api/v1/admin/accounts?suspended=true")).body.map((a: any) => a.id)).toEqual([bad.id]);
    expect((await admin.api.get("/api/v2/admin/accounts?status=suspended")).body.map((a: any) => a.id)).toEqual([bad.id]);

    const un = await admin.api.post(`/api/v1/admin/accounts/${bad.id}/unsuspend`);
    expect(un.status).toBe(200);
    expect(un.body.suspended).toBe(false);
    expect((await bad.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    expect((await admin.api.post(`/api/v1/admin/accounts/${bad.id}/unsuspend`)).status).toBe(403);
    expect((await logRows()).map((r) => [r.action, r.target_type, r.target_id])).toEqual([
      ["suspend", "Account", bad.id],
      ["unsuspend", "Account", bad.id],
    ]);
  });

  it("disable and enable; silence and unsilence (v1 silenced filter)", async () => {
    const mod = await makeUser("moddis", MOD);
    const u = await makeUser("noisy");
    expect((await mod.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "disable" }, "form")).status).toBe(200);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(403);
    expect((await mod.api.get("/api/v1/admin/accounts?disabled=true")).body.map((a: any) => a.id)).toEqual([u.id]);
    const en = await mod.api.post(`/api/v1/admin/accounts/${u.id}/enable`);
    expect(en.body.disabled).toBe(false);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);

    expect((await mod.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "silence" })).status).toBe(200);
    expect((await mod.api.get("/api/v1/admin/accounts?silenced=true")).body.map((a: any) => a.id)).toEqual([u.id]);
    expect((await mod.api.get("/api/v2/admin/accounts?status=silenced")).body.map((a: any) => a.id)).toEqual([u.id]);
    expect((await mod.api.get(`/api/v1/accounts/${u.id}`)).body.limited).toBe(true);
    const unsil = await mod.api.post(`/api/v1/admin/accounts/${u.id}/unsilence`);
    expect(unsil.body.silenced).toBe(false);
    expect((await mod.api.get("/api/v1/admin/accounts?silenced=true")).body).toEqual([]);
    expect((await logRows()).map((r) => [r.action, r.target_type])).toEqual([
      ["disable", "User"],
      ["enable", "User"],
      ["silence", "Account"],
      ["unsilence", "Account"],
    ]);
  });

  it("an invalid or missing action type is a 422 validation error and changes nothing", async () => {
    const admin = await makeUser("adminv", ADMIN);
    const u = await makeUser("target");
    const bad = await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "obliterate" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/^Validation failed: Type/);
    const missing = await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, {});
    expect(missing.status).toBe(422);
    expect(await logRows()).toEqual([]);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });

  it("a moderator cannot act on an admin or on themselves; an admin can act on a moderator", async () => {
    const admin = await makeUser("admrank", ADMIN);
    const mod = await makeUser("modrank", MOD);
    expect((await mod.api.post(`/api/v1/admin/accounts/${admin.id}/action`, { type: "suspend" })).status).toBe(403);
    expect((await mod.api.post(`/api/v1/admin/accounts/${mod.id}/action`, { type: "disable" })).status).toBe(403);
    expect((await admin.api.post(`/api/v1/admin/accounts/${mod.id}/action`, { type: "silence" })).status).toBe(200);
    expect((await admin.api.get(`/api/v1/accounts/verify_credentials`)).status).toBe(200);
  });

  it("resolves open reports about the account; none with report_id resolves only that report", async () => {
    const admin = await makeUser("admrep", ADMIN);
    const reporter = await makeUser("reporter");
    const target = await makeUser("reported");
    const r1 = await reporter.api.post("/api/v1/reports", { account_id: target.id, comment: "one" });
    const r2 = await reporter.api.post("/api/v1/reports", { account_id: target.id, comment: "two" });
    expect(r1.status).toBe(200);
    const none = await admin.api.post(`/api/v1/admin/accounts/${target.id}/action`, { type: "none", report_id: r1.body.id });
    expect(none.status).toBe(200);
    const open = async () => (await env.DB.prepare("SELECT id FROM reports WHERE action_taken_at IS NULL").all<any>()).results.map((x) => String(BigInt(x.id)));
    expect(await open()).toEqual([r2.body.id]);
    expect((await admin.api.post(`/api/v1/admin/accounts/${target.id}/action`, { type: "none", report_id: "12345" })).status).toBe(404);
    await admin.api.post(`/api/v1/admin/accounts/${target.id}/action`, { type: "silence" });
    expect(await open()).toEqual([]);
    expect((await logRows()).map((r) => r.action)).toEqual(["resolve", "silence", "resolve"]);
  });

  it("disable refuses a remote account; silence works on it", async () => {
    const admin = await makeUser("admrem2", ADMIN);
    const remote = await makeRemote("loud", "noisy.example");
    expect((await admin.api.post(`/api/v1/admin/accounts/${remote}/action`, { type: "disable" })).status).toBe(403);
    expect((await admin.api.post(`/api/v1/admin/accounts/${remote}/action`, { type: "silence" })).status).toBe(200);
    const shown = await admin.api.get(`/api/v1/admin/accounts/${remote}`);
    expect(shown.body).toMatchObject({ domain: "noisy.example", email: null, role: null, silenced: true, approved: false, ips: [] });
  });
});

describe("listing and filters", () => {
  it("v1: local by default, remote, by_domain, username, email, staff; v2: origin, permissions, role_ids, bad status 400", async () => {
    const admin = await makeUser("admfilter", ADMIN);
    const mod = await makeUser("modfilter", MOD);
    const alice = await makeUser("alice_f");
    const r1 = await makeRemote("bob", "one.example");
    const r2 = await makeRemote("carol", "two.example");
    const ids = (res: any) => res.body.map((a: any) => a.id);

    const local = await admin.api.get("/api/v1/admin/accounts");
    expect(ids(local)).toEqual([alice.id, mod.id, admin.id]);
    expect(ids(await admin.api.get("/api/v1/admin/accounts?remote=true"))).toEqual([r2, r1]);
    expect(ids(await admin.api.get("/api/v1/admin/accounts?remote=true&by_domain=ONE.example"))).toEqual([r1]);
    expect(ids(await admin.api.get("/api/v1/admin/accounts?username=ALICE"))).toEqual([alice.id]);
    expect(ids(await admin.api.get("/api/v1/admin/accounts?username=%25"))).toEqual([]);
    expect(ids(await admin.api.get("/api/v1/admin/accounts?email=modfilter@"))).toEqual([mod.id]);
    expect(ids(await admin.api.get("/api/v1/admin/accounts?staff=true"))).toEqual([mod.id, admin.id]);
    expect(ids(await admin.api.get("/api/v1/admin/accounts?sensitized=true"))).toEqual([alice.id, mod.id, admin.id]);

    expect(ids(await admin.api.get("/api/v2/admin/accounts"))).toEqual([r2, r1, alice.id, mod.id, admin.id]);
    expect(ids(await admin.api.get("/api/v2/admin/accounts?origin=remote"))).toEqual([r2, r1]);
    expect(ids(await admin.api.get("/api/v2/admin/accounts?origin=local&status=active"))).toEqual([alice.id, mod.id, admin.id]);
    expect(ids(await admin.api.get("/api/v2/admin/accounts?permissions=staff"))).toEqual([mod.id, admin.id]);
    expect(ids(await admin.api.get("/api/v2/admin/accounts?role_ids[]=1"))).toEqual([mod.id]);
    expect(ids(await admin.api.get("/api/v2/admin/accounts?role_ids[]=1&role_ids[]=2"))).toEqual([mod.id, admin.id]);
    expect(ids(await admin.api.get("/api/v2/admin/accounts?by_domain=two.example"))).toEqual([r2]);
    expect(ids(await admin.api.get("/api/v2/admin/accounts?display_name=zzz"))).toEqual([]);
    expect((await admin.api.get("/api/v2/admin/accounts?status=bogus")).status).toBe(400);
    expect((await admin.api.get("/api/v2/admin/accounts?origin=mars")).status).toBe(400);
  });

  it("pages by account id with Link headers (limit clamped, never an error)", async () => {
    const admin = await makeUser("admpage", ADMIN);
    const others = [await makeUser("pg1"), await makeUser("pg2"), await makeUser("pg3")];
    const all = [...others.map((u) => u.id).reverse(), admin.id];
    const first = await admin.api.get("/api/v1/admin/accounts?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.map((a: any) => a.id)).toEqual(all.slice(0, 2));
    const l = links(first.headers);
    expect(l.next).toContain(`max_id=${all[1]}`);
    expect(l.next).toContain("limit=2");
    expect(l.prev).toContain(`min_id=${all[0]}`);
    const second = await admin.api.get(l.next!);
    expect(second.body.map((a: any) => a.id)).toEqual(all.slice(2, 4));
    const third = await admin.api.get(links(second.headers).next!);
    expect(third.body).toEqual([]);
    const back = await admin.api.get(links(second.headers).prev!);
    expect(back.body.map((a: any) => a.id)).toEqual(all.slice(0, 2));
    const v2 = await admin.api.get("/api/v2/admin/accounts?limit=1&origin=local");
    expect(links(v2.headers).next).toMatch(/^\/api\/v2\/admin\/accounts\?.*origin=local/);
    for (const bad of ["limit=0", "limit=-5", "limit=abc", "limit=100000"]) {
      expect((await admin.api.get(`/api/v1/admin/accounts?${bad}`)).status).toBe(200);
    }
  });
});
