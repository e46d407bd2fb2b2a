// Staff reports API: /api/v1/admin/reports (list with filters and paging, show, update, assign, unassign, resolve,
// reopen), account actions that resolve a report, the admin log, admin.report notifications, refusals.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, eventually, links, makeUser } from "./helpers";
import { MOD } from "./admin-fixtures";

/** A custom role that may manage users but not reports. */
async function usersOnlyRole(): Promise<string> {
  await env.DB.prepare(
    "INSERT OR IGNORE INTO user_roles (id, name, color, permissions, position, highlighted, created_at, updated_at) VALUES ('00000000000000000050', 'Helper', '', 1024, 5, 0, 0, 0)",
  ).run();
  return "50";
}

async function logActions() {
  const r = await env.DB.prepare("SELECT action, target_type FROM admin_action_logs ORDER BY id").all<any>();
  return r.results.map((x) => `${x.action}:${x.target_type}`);
}

async function addRule(text: string) {
  const id = String(1000 + Math.floor(Math.random() * 1e6));
  await env.DB.prepare("INSERT INTO rules (id, text, hint, priority, created_at) VALUES (?, ?, '', 0, ?)").bind(id.padStart(20, "0"), text, Date.now()).run();
  return id;
}

describe("refusals", () => {
  it("401 without a token, 403 for a role without manage_reports, 403 scope error for a read-only token on writes", async () => {
    expect((await anon.get("/api/v1/admin/reports")).status).toBe(401);
    const helper = await makeUser("helper", { roleId: await usersOnlyRole(), scopes: "read write admin:read admin:write" });
    const reporter = await makeUser("rep0");
    const target = await makeUser("tgt0");
    const rep = await reporter.api.post("/api/v1/reports", { account_id: target.id });
    const id = rep.body.id;
    for (const res of [
      await helper.api.get("/api/v1/admin/reports"),
      await helper.api.get(`/api/v1/admin/reports/${id}`),
      await helper.api.put(`/api/v1/admin/reports/${id}`, { category: "spam" }),
      await helper.api.post(`/api/v1/admin/reports/${id}/assign_to_self`),
      await helper.api.post(`/api/v1/admin/reports/${id}/unassign`),
      await helper.api.post(`/api/v1/admin/reports/${id}/resolve`),
      await helper.api.post(`/api/v1/admin/reports/${id}/reopen`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "This action is not allowed" });
    }
    const reader = await makeUser("modreader", { roleId: "1", scopes: "read admin:read:reports" });
    expect((await reader.api.get("/api/v1/admin/reports")).status).toBe(200);
    const w = await reader.api.post(`/api/v1/admin/reports/${id}/resolve`);
    expect(w.status).toBe(403);
    expect(w.body.error).toBe("This action is outside the authorized scopes");
    expect(await logActions()).toEqual([]);
  });
});

describe("list and show", () => {
  it("lists open reports newest first with the Admin::Report shape; filters and pages", async () => {
    const mod = await makeUser("modlist", MOD);
    const r1 = await makeUser("repa");
    const r2 = await makeUser("repb");
    const t1 = await makeUser("tgta");
    const t2 = await makeUser("tgtb");
    const priv = await t1.api.post("/api/v1/statuses", { status: "followers only", visibility: "private" });
    await r1.api.post(`/api/v1/accounts/${t1.id}/follow`);
    const a = await r1.api.post("/api/v1/reports", { account_id: t1.id, status_ids: [priv.body.id], comment: "rude", forward: true });
    expect(a.status).toBe(200);
    const b = await r2.api.post("/api/v1/reports", { account_id: t1.id, category: "spam" });
    const c = await r1.api.post("/api/v1/reports", { account_id: t2.id });

    const list = await mod.api.get("/api/v1/admin/reports");
    expect(list.status).toBe(200);
    expect(list.body.map((r: any) => r.id)).toEqual([c.body.id, b.body.id, a.body.id]);
    const shown = list.body[2];
    expect(shown).toMatchObject({
      id: a.body.id,
      action_taken: false,
      action_taken_at: null,
      category: "other",
      comment: "rude",
      forwarded: false,
      assigned_account: null,
      action_taken_by_account: null,
      rules: [],
    });
    expect(Object.keys(shown).sort()).toEqual(
      [
        "id",
        "action_taken",
        "action_taken_at",
        "category",
        "comment",
        "forwarded",
        "created_at",
        "updated_at",
        "account",
        "target_account",
        "assigned_account",
        "action_taken_by_account",
        "statuses",
        "rules",
      ].sort(),
    );
    // Admin::Account for both sides; the private status is shown to staff.
    expect(shown.account).toMatchObject({ id: r1.id, username: "repa", email: "repa@example.com", account: { id: r1.id } });
    expect(shown.target_account).toMatchObject({ id: t1.id, username: "tgta" });
    expect(shown.statuses.map((s: any) => s.id)).toEqual([priv.body.id]);
    expect(shown.statuses[0].visibility).toBe("private");

    const one = await mod.api.get(`/api/v1/admin/reports/${b.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: b.body.id, category: "spam", account: { id: r2.id } });
    expect((await mod.api.get("/api/v1/admin/reports/999999")).status).toBe(404);
    expect((await mod.api.get("/api/v1/admin/reports/nope")).status).toBe(404);

    const byTarget = await mod.api.get(`/api/v1/admin/reports?target_account_id=${t1.id}`);
    expect(byTarget.body.map((r: any) => r.id)).toEqual([b.body.id, a.body.id]);
    const byReporter = await mod.api.get(`/api/v1/admin/reports?account_id=${r1.id}`);
    expect(byReporter.body.map((r: any) => r.id)).toEqual([c.body.id, a.body.id]);
    expect((await mod.api.get("/api/v1/admin/reports?account_id=garbage")).body).toEqual([]);

    const page1 = await mod.api.get("/api/v1/admin/reports?limit=2");
    expect(page1.body.map((r: any) => r.id)).toEqual([c.body.id, b.body.id]);
    const next = links(page1.headers).next!;
    expect(next).toContain(`max_id=${b.body.id}`);
    const page2 = await mod.api.get(next);
    expect(page2.body.map((r: any) => r.id)).toEqual([a.body.id]);

    await mod.api.post(`/api/v1/admin/reports/${b.body.id}/resolve`);
    expect((await mod.api.get("/api/v1/admin/reports")).body.map((r: any) => r.id)).toEqual([c.body.id, a.body.id]);
    expect((await mod.api.get("/api/v1/admin/reports?resolved=true")).body.map((r: any) => r.id)).toEqual([b.body.id]);
  });

  it("staff with manage_reports get an admin.report notification for a new report", async () => {
    const mod = await makeUser("modnotified", MOD);
    const reporter = await makeUser("repn");
    const target = await makeUser("tgtn");
    const rep = await reporter.api.post("/api/v1/reports", { account_id: target.id });
    await eventually(async () => {
      const n = await mod.api.get("/api/v1/notifications");
      expect(n.body.map((x: any) => [x.type, x.report?.id])).toContainEqual(["admin.report", rep.body.id]);
    });
  });
});

describe("actions", () => {
  it("assigns, unassigns, resolves, reopens and updates; each is logged", async () => {
    const mod = await makeUser("modact", MOD);
    const reporter = await makeUser("repc");
    const target = await makeUser("tgtc");
    const rule = await addRule("No spam");
    const id = (await reporter.api.post("/api/v1/reports", { account_id: target.id })).body.id;

    const assigned = await mod.api.post(`/api/v1/admin/reports/${id}/assign_to_self`);
    expect(assigned.status).toBe(200);
    expect(assigned.body.assigned_account).toMatchObject({ id: mod.id, username: "modact" });
    const unassigned = await mod.api.post(`/api/v1/admin/reports/${id}/unassign`);
    expect(unassigned.body.assigned_account).toBeNull();

    const resolved = await mod.api.post(`/api/v1/admin/reports/${id}/resolve`);
    expect(resolved.body).toMatchObject({ action_taken: true, action_taken_by_account: { id: mod.id } });
    expect(typeof resolved.body.action_taken_at).toBe("string");
    const reopened = await mod.api.post(`/api/v1/admin/reports/${id}/reopen`);
    expect(reopened.body).toMatchObject({ action_taken: false, action_taken_at: null, action_taken_by_account: null });

    const bad = await mod.api.put(`/api/v1/admin/reports/${id}`, { category: "nonsense" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/^Validation failed: /);
    const noRules = await mod.api.put(`/api/v1/admin/reports/${id}`, { category: "violation" });
    expect(noRules.status).toBe(422);
    const unknownRule = await mod.api.put(`/api/v1/admin/reports/${id}`, { category: "violation", rule_ids: ["424242"] });
    expect(unknownRule.status).toBe(422);
    const updated = await mod.api.put(`/api/v1/admin/reports/${id}`, { category: "violation", rule_ids: [rule] });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ category: "violation", rules: [{ id: rule, text: "No spam", hint: "" }] });
    const spam = await mod.api.put(`/api/v1/admin/reports/${id}`, { category: "spam" });
    expect(spam.body).toMatchObject({ category: "spam", rules: [] });
    expect((await mod.api.post("/api/v1/admin/reports/999999/resolve")).status).toBe(404);

    expect(await logActions()).toEqual(["assigned_to_self:Report", "unassigned:Report", "resolve:Report", "reopen:Report", "update:Report", "update:Report"]);
  });

  it("an account action with report_id resolves the report as taken by the moderator", async () => {
    const mod = await makeUser("modaction", MOD);
    const reporter = await makeUser("repd");
    const target = await makeUser("tgtd");
    const id = (await reporter.api.post("/api/v1/reports", { account_id: target.id })).body.id;
    const res = await mod.api.post(`/api/v1/admin/accounts/${target.id}/action`, { type: "silence", report_id: id, send_email_notification: true });
    expect(res.status).toBe(200);
    const shown = await mod.api.get(`/api/v1/admin/reports/${id}`);
    expect(shown.body).toMatchObject({ action_taken: true, action_taken_by_account: { id: mod.id }, target_account: { silenced: true } });
    expect(await logActions()).toEqual(["silence:Account", "resolve:Report"]);
  });
});
