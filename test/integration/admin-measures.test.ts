// Dashboard data: POST /api/v1/admin/measures, /dimensions and /retention with Mastodon's keys and shapes, computed
// from D1 over start_at..end_at; unknown keys ignored; refusals.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { anon, makeUser } from "./helpers";
import { ADMIN } from "./admin-fixtures";

const pad = (id: string) => id.padStart(20, "0");
const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function usersOnlyRole(): Promise<string> {
  await env.DB.prepare(
    "INSERT OR IGNORE INTO user_roles (id, name, color, permissions, position, highlighted, created_at, updated_at) VALUES ('00000000000000000050', 'Helper', '', 1024, 5, 0, 0, 0)",
  ).run();
  return "50";
}

async function remote(username: string, domain: string): Promise<string> {
  const id = snowflake();
  await env.DB.prepare("INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)")
    .bind(pad(id), username, domain, `https://${domain}/users/${username}`, Date.now())
    .run();
  return id;
}

const span = () => ({ start_at: day(Date.now() - 2 * DAY), end_at: day(Date.now()) });

describe("refusals and bad input", () => {
  it("401 signed out, 403 without view_dashboard, 400 for missing parameters, 422 for a bad date", async () => {
    const helper = await makeUser("dashhelper", { roleId: await usersOnlyRole(), scopes: "read admin:read" });
    for (const path of ["/api/v1/admin/measures", "/api/v1/admin/dimensions", "/api/v1/admin/retention"]) {
      expect((await anon.post(path, { keys: ["new_users"], ...span() })).status).toBe(401);
      const res = await helper.api.post(path, { keys: ["new_users"], ...span() });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "This action is not allowed" });
    }
    const admin = await makeUser("dashadmin0", ADMIN);
    expect((await admin.api.post("/api/v1/admin/measures", { keys: ["new_users"], start_at: "yesterday-ish", end_at: "2024-01-01" })).status).toBe(422);
    const noTag = await admin.api.post("/api/v1/admin/measures", { keys: ["tag_uses"], ...span() });
    expect(noTag.status).toBe(400);
    expect(noTag.body.error).toBe("param is missing or the value is empty: tag_uses");
    expect((await admin.api.post("/api/v1/admin/dimensions", { keys: ["instance_languages"], ...span() })).status).toBe(400);
  });
});

describe("without start_at or end_at (neither is required by Mastodon's API)", () => {
  it("a dimension reads all time, or up to today; a measure covers the 30 days up to today or end_at", async () => {
    const admin = await makeUser("dashopen", ADMIN);
    const alice = await makeUser("dashopenalice");
    await alice.api.post("/api/v1/statuses", { status: "long ago" });
    // A status from two years ago: inside an open range, outside any capped one.
    const old = Date.now() - 730 * DAY;
    await env.DB.prepare("UPDATE statuses SET id = ?1, created_at = ?2 WHERE account_id = ?3")
      .bind(pad(snowflake(old)), old, pad(alice.id))
      .run();
    await alice.api.post("/api/v1/statuses", { status: "today" });

    // `servers`: statuses by server over the period (both are local: one row, this server's domain).
    const count = async (range: Record<string, string>) => {
      const res = await admin.api.post("/api/v1/admin/dimensions", { keys: ["servers"], ...range });
      expect(res.status).toBe(200);
      return res.body[0].data.map((d: { value: string }) => d.value);
    };
    expect(await count({})).toEqual(["2"]);
    expect(await count({ end_at: day(Date.now() - DAY) })).toEqual(["1"]);
    expect(await count({ start_at: day(Date.now()) })).toEqual(["1"]);
    expect(await count({ start_at: day(Date.now() - 3 * DAY), end_at: day(Date.now()) })).toEqual(["1"]);

    const measure = await admin.api.post("/api/v1/admin/measures", { keys: ["new_users"] });
    expect(measure.status).toBe(200);
    expect(measure.body[0].data).toHaveLength(30);
    expect(measure.body[0].data.at(-1).date).toBe(`${day(Date.now())}T00:00:00Z`);
    const ending = await admin.api.post("/api/v1/admin/measures", { keys: ["new_users"], end_at: day(Date.now() - 5 * DAY) });
    expect(ending.body[0].data).toHaveLength(30);
    expect(ending.body[0].data.at(-1).date).toBe(`${day(Date.now() - 5 * DAY)}T00:00:00Z`);
    expect((await admin.api.post("/api/v1/admin/retention", {})).status).toBe(200);
  });
});

describe("measures", () => {
  it("counts over the period with previous totals and one data point per day; instance measures are all-time", async () => {
    const admin = await makeUser("dashadmin", ADMIN);
    const alice = await makeUser("dashalice");
    await env.DB.prepare("UPDATE users SET current_sign_in_at = ? WHERE id = ?").bind(Date.now(), pad(alice.userId)).run();
    const post = await alice.api.post("/api/v1/statuses", { status: "hello #dash", language: "en" });
    await admin.api.post(`/api/v1/statuses/${post.body.id}/favourite`);
    const rem = await remote("far", "far.example");
    await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, ?4)")
      .bind(pad(snowflake()), pad(rem), pad(alice.id), Date.now())
      .run();
    const rep = await alice.api.post("/api/v1/reports", { account_id: rem });
    await admin.api.post(`/api/v1/admin/reports/${rep.body.id}/resolve`);
    const tagId = (await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM tags WHERE name = 'dash'").first<any>()).id.replace(/^0+/, "");

    const res = await admin.api.post("/api/v1/admin/measures", {
      keys: [
        "active_users",
        "new_users",
        "interactions",
        "opened_reports",
        "resolved_reports",
        "tag_accounts",
        "tag_uses",
        "tag_servers",
        "instance_accounts",
        "instance_media_attachments",
        "instance_reports",
        "instance_statuses",
        "instance_follows",
        "instance_followers",
        "no_such_key",
      ],
      ...span(),
      tag_accounts: { id: tagId },
      tag_uses: { id: tagId },
      tag_servers: { id: tagId },
      instance_accounts: { domain: "far.example" },
      instance_media_attachments: { domain: "far.example" },
      instance_reports: { domain: "far.example" },
      instance_statuses: { domain: "far.example" },
      instance_follows: { domain: "far.example" },
      instance_followers: { domain: "far.example" },
    });
    expect(res.status).toBe(200);
    const by = Object.fromEntries(res.body.map((m: any) => [m.key, m]));
    expect(res.body.map((m: any) => m.key)).toHaveLength(14);
    const today = `${day(Date.now())}T00:00:00Z`;
    expect(by.new_users).toEqual({
      key: "new_users",
      unit: null,
      total: "2",
      previous_total: "0",
      data: [
        { date: `${day(Date.now() - 2 * DAY)}T00:00:00Z`, value: "0" },
        { date: `${day(Date.now() - DAY)}T00:00:00Z`, value: "0" },
        { date: today, value: "2" },
      ],
    });
    expect(by.active_users.total).toBe("1");
    expect(by.interactions.total).toBe("1");
    expect(by.opened_reports.total).toBe("1");
    expect(by.resolved_reports.total).toBe("1");
    expect(by.tag_uses.total).toBe("1");
    expect(by.tag_accounts).toMatchObject({ total: "1", previous_total: "0" });
    expect(by.tag_servers.total).toBe("1");
    expect(by.instance_accounts).toMatchObject({ total: "1", unit: null });
    expect(by.instance_accounts.previous_total).toBeUndefined();
    expect(by.instance_media_attachments).toMatchObject({ unit: "bytes", total: "0", human_value: "0 Bytes" });
    expect(by.instance_reports.total).toBe("1");
    expect(by.instance_statuses.total).toBe("0");
    expect(by.instance_follows.total).toBe("1");
    expect(by.instance_followers.total).toBe("0");
    for (const m of res.body) expect(m.data).toHaveLength(3);
  });
});

describe("dimensions", () => {
  it("answers every key with {key, data: [{key, human_key, value}]}", async () => {
    const admin = await makeUser("dimadmin", ADMIN);
    await env.DB.prepare("UPDATE users SET current_sign_in_at = ?, locale = 'de' WHERE id = ?").bind(Date.now(), pad(admin.userId)).run();
    await admin.api.post("/api/v1/statuses", { status: "moin #dim", language: "de" });
    const rem = await remote("near", "near.example");
    await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, ?4)")
      .bind(pad(snowflake()), pad(admin.id), pad(rem), Date.now())
      .run();
    const tagId = (await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM tags WHERE name = 'dim'").first<any>()).id.replace(/^0+/, "");
    const res = await admin.api.post("/api/v1/admin/dimensions", {
      keys: [
        "languages",
        "sources",
        "servers",
        "space_usage",
        "software_versions",
        "tag_servers",
        "tag_languages",
        "instance_accounts",
        "instance_languages",
        "unknown",
      ],
      ...span(),
      limit: 5,
      tag_servers: { id: tagId },
      tag_languages: { id: tagId },
      instance_accounts: { domain: "near.example" },
      instance_languages: { domain: "near.example" },
    });
    expect(res.status).toBe(200);
    const by = Object.fromEntries(res.body.map((d: any) => [d.key, d.data]));
    expect(Object.keys(by)).toHaveLength(9);
    expect(by.languages).toEqual([{ key: "de", human_key: "German", value: "1" }]);
    expect(by.sources).toEqual([{ key: "Test App", human_key: "Test App", value: "1" }]);
    expect(by.servers).toEqual([{ key: "tern.test", human_key: "tern.test", value: "1" }]);
    expect(by.space_usage.find((x: any) => x.key === "media")).toMatchObject({ unit: "bytes", value: "0", human_value: "0 Bytes" });
    expect(by.software_versions.map((x: any) => x.key)).toEqual(["tern", "mastodon"]);
    expect(by.tag_servers).toEqual([{ key: "tern.test", human_key: "tern.test", value: "1" }]);
    expect(by.tag_languages).toEqual([{ key: "de", human_key: "German", value: "1" }]);
    expect(by.instance_accounts).toEqual([{ key: "near", human_key: "near", value: "1" }]);
    expect(by.instance_languages).toEqual([]);
  });
});

describe("retention", () => {
  it("gives daily and monthly cohorts with rate and value", async () => {
    const admin = await makeUser("retadmin", ADMIN);
    const bob = await makeUser("retbob");
    await env.DB.prepare("UPDATE users SET current_sign_in_at = ? WHERE id = ?").bind(Date.now(), pad(bob.userId)).run();
    const res = await admin.api.post("/api/v1/admin/retention", { ...span(), frequency: "day" });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(3);
    expect(res.body[0]).toMatchObject({ period: `${day(Date.now() - 2 * DAY)}T00:00:00+00:00`, frequency: "day" });
    expect(res.body[0].data).toHaveLength(3);
    const last = res.body[2];
    expect(last).toEqual({
      period: `${day(Date.now())}T00:00:00+00:00`,
      frequency: "day",
      data: [{ date: `${day(Date.now())}T00:00:00+00:00`, rate: 0.5, value: "1" }],
    });
    const monthly = await admin.api.post("/api/v1/admin/retention", { ...span(), frequency: "month" });
    expect(monthly.body[0].frequency).toBe("month");
    expect(monthly.body.at(-1).period).toMatch(/^\d{4}-\d{2}-01T00:00:00\+00:00$/);
  });
});
