import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { ORIGIN, anon, makeUser } from "./helpers";

const pad = (id: string) => id.padStart(20, "0");

async function post(accountId: string, visibility = "public") {
  const now = Date.now();
  const id = snowflake(now);
  await env.DB.prepare("INSERT INTO statuses (id, uri, account_id, local, visibility, text, created_at, updated_at) VALUES (?, ?, ?, 1, ?, 'x', ?, ?)")
    .bind(pad(id), `${ORIGIN}/s/${id}`, pad(accountId), visibility, now, now)
    .run();
  return id;
}

async function notificationsOf(accountId: string) {
  const r = await env.DB.prepare("SELECT type, from_account_id, report_id FROM notifications WHERE account_id = ?").bind(pad(accountId)).all();
  return r.results as any[];
}

describe("POST /api/v1/reports", () => {
  it("files a report with statuses and notifies staff who manage reports", async () => {
    const mod = await makeUser(undefined, { roleId: "1" });
    const admin = await makeUser(undefined, { roleId: "2" });
    const plain = await makeUser();
    const reporter = await makeUser();
    const target = await makeUser();
    const s1 = await post(target.id);
    const res = await reporter.api.post("/api/v1/reports", { account_id: target.id, status_ids: [s1], comment: "spammy", category: "spam", forward: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      action_taken: false,
      action_taken_at: null,
      category: "spam",
      comment: "spammy",
      forwarded: false, // local target: nothing to forward
      status_ids: [s1],
      rule_ids: [],
    });
    expect(res.body.id).toMatch(/^\d+$/);
    expect(res.body.created_at).toMatch(/\.\d{3}Z$/);
    expect(res.body.target_account.id).toBe(target.id);

    const row = await env.DB.prepare("SELECT * FROM reports WHERE id = ?").bind(pad(res.body.id)).first<any>();
    expect(row.category).toBe("spam");
    for (const staff of [mod, admin]) {
      expect(await notificationsOf(staff.id)).toEqual([{ type: "admin.report", from_account_id: pad(reporter.id), report_id: pad(res.body.id) }]);
    }
    expect(await notificationsOf(plain.id)).toEqual([]);
    expect(await notificationsOf(target.id)).toEqual([]);
  });

  it("defaults to other, infers violation from rules, and validates rules", async () => {
    const reporter = await makeUser();
    const target = await makeUser();
    await env.DB.prepare("INSERT INTO rules (id, text, created_at) VALUES ('00000000000000000007', 'No spam', 0)").run();
    const plain = await reporter.api.post("/api/v1/reports", { account_id: target.id }, "form");
    expect(plain.status).toBe(200);
    expect(plain.body.category).toBe("other");
    const viaRules = await reporter.api.post("/api/v1/reports", { account_id: target.id, rule_ids: ["7"] });
    expect(viaRules.body).toMatchObject({ category: "violation", rule_ids: ["7"] });
    expect((await reporter.api.post("/api/v1/reports", { account_id: target.id, category: "violation" })).status).toBe(422);
    expect((await reporter.api.post("/api/v1/reports", { account_id: target.id, category: "violation", rule_ids: ["8"] })).status).toBe(422);
    expect((await reporter.api.post("/api/v1/reports", { account_id: target.id, category: "rude" })).status).toBe(422);
    expect((await reporter.api.post("/api/v1/reports", { account_id: target.id, comment: "x".repeat(1001) })).status).toBe(422);
  });

  it("refuses unknown targets, self-reports and statuses of someone else", async () => {
    const reporter = await makeUser();
    const target = await makeUser();
    const bystander = await makeUser();
    const other = await post(bystander.id);
    expect((await reporter.api.post("/api/v1/reports", {})).status).toBe(422);
    expect((await reporter.api.post("/api/v1/reports", { account_id: "123456789" })).status).toBe(404);
    expect((await reporter.api.post("/api/v1/reports", { account_id: reporter.id })).status).toBe(422);
    expect((await reporter.api.post("/api/v1/reports", { account_id: target.id, status_ids: [other] })).status).toBe(422);
  });

  it("is 404 for a status the reporter cannot see (B15)", async () => {
    const reporter = await makeUser();
    const target = await makeUser();
    const priv = await post(target.id, "private");
    const res = await reporter.api.post("/api/v1/reports", { account_id: target.id, status_ids: [priv] });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "Record not found" });
    const count = await env.DB.prepare("SELECT count(*) AS n FROM reports").first<any>();
    expect(count.n).toBe(0);
  });

  it("needs write:reports", async () => {
    const target = await makeUser();
    expect((await anon.post("/api/v1/reports", { account_id: target.id })).status).toBe(401);
    const ro = await makeUser(undefined, { scopes: "read" });
    expect((await ro.api.post("/api/v1/reports", { account_id: target.id })).status).toBe(403);
    const scoped = await makeUser(undefined, { scopes: "write:reports" });
    expect((await scoped.api.post("/api/v1/reports", { account_id: target.id })).status).toBe(200);
  });
});
