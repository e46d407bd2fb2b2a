// The instance documents from the isolate's memory (src/services/instance/instance-cache.ts) and the counter row behind them
// (migrations/0021_instance_stats.sql). The suite runs with INSTANCE_CACHE_SECONDS=0; these tests call the Worker with
// the cache on, the way production runs.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { expireInstanceCache } from "../../src/services/instance/instance-cache";
import { ORIGIN, makeUser } from "./helpers";

type Vars = Record<string, string>;

async function get(path: string, vars: Vars = { INSTANCE_CACHE_SECONDS: "60" }, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${ORIGIN}${path}`, init), { ...env, ...vars } as typeof env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  const timing = res.headers.get("server-timing") ?? "";
  const metric = (name: string) => Number(new RegExp(`(?:^|,\\s*)${name};[^,]*dur=(\\d+)`).exec(timing)?.[1] ?? "NaN");
  return { status: res.status, body: text ? JSON.parse(text) : null, rt: metric("d1"), rowsRead: metric("d1r"), headers: res.headers };
}

const now = Date.now();
const pad = (id: string) => id.padStart(20, "0");

async function addRule(id: string, text: string) {
  await env.DB.prepare("INSERT INTO rules (id, text, hint, priority, created_at) VALUES (?, ?, '', 0, ?)").bind(pad(id), text, now).run();
}

async function insertStatus(id: string, accountId: string, local: boolean, reblogOf: string | null = null) {
  await env.DB.prepare(
    "INSERT INTO statuses (id, uri, account_id, local, visibility, reblog_of_id, created_at, updated_at) VALUES (?, ?, ?, ?, 'public', ?, ?, ?)",
  )
    .bind(pad(id), `${ORIGIN}/s/${id}`, pad(accountId), local ? 1 : 0, reblogOf ? pad(reblogOf) : null, now, now)
    .run();
}

async function stats() {
  return (await env.DB.prepare("SELECT user_count, status_count, domain_count, generation FROM instance_stats WHERE id = 1").first()) as {
    user_count: number;
    status_count: number;
    domain_count: number;
    generation: string;
  };
}

// Module state outlives a test's storage: start every test from a stale copy.
beforeEach(() => expireInstanceCache());

describe("the in-memory instance documents", () => {
  it("serve every document without D1 once one read has checked", async () => {
    await makeUser("theowner", { roleId: "3" });
    await addRule("1", "Be kind");
    const first = await get("/api/v2/instance"); // makes the VAPID pair, then checks
    expect(first.status).toBe(200);
    expect(first.body.rules.map((r: { text: string }) => r.text)).toEqual(["Be kind"]);
    for (const path of [
      "/api/v2/instance",
      "/api/v1/instance",
      "/nodeinfo/2.0",
      "/nodeinfo/2.1",
      "/api/v1/custom_emojis",
      "/api/v1/instance/rules",
      "/api/v1/instance/extended_description",
      "/api/v1/instance/privacy_policy",
      "/api/v1/instance/domain_blocks",
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.rt, path).toBe(0);
    }
    const v2 = await get("/api/v2/instance");
    expect(v2.body).toEqual(first.body);
    expect(v2.headers.get("content-type")).toBe("application/json");
    expect(v2.headers.get("cache-control")).toBe("public, max-age=180");
    const n21 = await get("/nodeinfo/2.1");
    expect(n21.body.version).toBe("2.1");
    expect(n21.body.software.repository).toBe(`${ORIGIN}/`);
    expect(n21.headers.get("content-type")).toBe('application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.1#"');
  });

  it("show a change made elsewhere once the cache age has passed, and counts within that age", async () => {
    const u = await makeUser();
    await get("/api/v1/instance");
    // Written behind the isolate's back, as another isolate would.
    await addRule("7", "No spam");
    await insertStatus("101", u.id, true);
    const stale = await get("/api/v1/instance");
    expect(stale.rt).toBe(0);
    expect(stale.body.rules).toEqual([]);
    expect(stale.body.stats.status_count).toBe(0);
    const checked = await get("/api/v1/instance", { INSTANCE_CACHE_SECONDS: "0" });
    expect(checked.rt).toBe(1);
    expect(checked.body.rules.map((r: { text: string }) => r.text)).toEqual(["No spam"]);
    expect(checked.body.stats).toEqual({ user_count: 1, status_count: 1, domain_count: 0 });
    const again = await get("/api/v1/instance");
    expect(again.rt).toBe(0);
    expect(again.body.rules).toHaveLength(1);
  });

  it("check again after a staff write in the same isolate", async () => {
    await get("/api/v2/instance");
    await env.DB.prepare("INSERT INTO instance_settings (key, value) VALUES ('site_title', 'Renamed')").run();
    expect((await get("/api/v2/instance")).body.title).not.toBe("Renamed");
    // Whatever the answer (here: no token), a write under an admin path may have changed something.
    const admin = await get("/api/v1/admin/accounts/1/action", {}, { method: "POST" });
    expect(admin.status).toBeGreaterThanOrEqual(400);
    const after = await get("/api/v2/instance");
    expect(after.rt).toBe(1);
    expect(after.body.title).toBe("Renamed");
  });

  it("read only the counter row and active users when the generation has not moved", async () => {
    await makeUser("owner2", { roleId: "3" });
    for (let i = 0; i < 5; i++) await addRule(String(20 + i), `Rule ${i}`);
    const timing = { INSTANCE_CACHE_SECONDS: "0", DEV_SERVER_TIMING: "true" };
    await get("/api/v2/instance", timing);
    await addRule("30", "One more"); // moves the generation: the next check reads every part
    const full = await get("/api/v1/instance", timing);
    expect(full.rt).toBe(1);
    const unchanged = await get("/api/v1/instance", timing);
    expect(unchanged.rt).toBe(1);
    // The counter row (once per part), the VAPID row and the active users; not the 6 rules, the settings, the contact.
    expect(unchanged.rowsRead).toBeLessThanOrEqual(full.rowsRead - 8);
    expect(unchanged.body.rules).toHaveLength(6);
    expect(unchanged.body.contact_account.username).toBe("owner2");
  });
});

describe("the counter row", () => {
  it("counts local posts, approved unsuspended users and known domains in the writing statement", async () => {
    const a = await makeUser();
    const b = await makeUser("pending", { approved: false });
    expect((await stats()).user_count).toBe(1);
    await env.DB.prepare("UPDATE users SET approved = 1 WHERE id = ?").bind(pad(b.userId)).run();
    expect((await stats()).user_count).toBe(2);
    await env.DB.prepare("UPDATE accounts SET suspended_at = ? WHERE id = ?").bind(now, pad(b.id)).run();
    expect((await stats()).user_count).toBe(1);

    await insertStatus("201", a.id, true);
    await insertStatus("202", a.id, true);
    await insertStatus("203", a.id, true, "201"); // a reblog is not a post
    expect((await stats()).status_count).toBe(2);
    await env.DB.prepare("DELETE FROM statuses WHERE id = ?").bind(pad("202")).run();
    await env.DB.prepare("DELETE FROM statuses WHERE id = ?").bind(pad("203")).run();
    expect((await stats()).status_count).toBe(1);

    const remote = (id: string, domain: string) =>
      env.DB.prepare("INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(pad(id), `r${id}`, domain, `https://${domain}/users/r${id}`, now, now)
        .run();
    await remote("301", "a.example");
    await remote("302", "a.example");
    await env.DB.prepare("INSERT INTO instances (domain, first_seen_at) VALUES ('a.example', 0), ('b.example', 0)").run();
    expect((await stats()).domain_count).toBe(2);
    await env.DB.prepare("DELETE FROM accounts WHERE id = ?").bind(pad("301")).run();
    await env.DB.prepare("DELETE FROM instances WHERE domain = 'a.example'").run();
    expect((await stats()).domain_count).toBe(2); // a.example still has an account
    await env.DB.prepare("DELETE FROM accounts WHERE id = ?").bind(pad("302")).run();
    expect((await stats()).domain_count).toBe(1);

    // What the old count(*) queries would say.
    const truth = (await env.DB.prepare(
      `SELECT (SELECT count(*) FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.approved = 1 AND a.suspended_at IS NULL) AS users,
        (SELECT count(*) FROM statuses WHERE local = 1 AND reblog_of_id IS NULL) AS posts,
        (SELECT count(*) FROM (SELECT domain FROM instances UNION SELECT domain FROM accounts WHERE domain IS NOT NULL)) AS domains`,
    ).first()) as { users: number; posts: number; domains: number };
    const s = await stats();
    expect([s.user_count, s.status_count, s.domain_count]).toEqual([truth.users, truth.posts, truth.domains]);
  });

  it("moves the generation with settings, rules, local emojis, domain blocks and the contact, not remote emojis", async () => {
    const owner = await makeUser("boss", { roleId: "3" });
    const other = await makeUser();
    let gen = (await stats()).generation;
    const moved = async (what: string, sql: string, ...args: unknown[]) => {
      await env.DB.prepare(sql)
        .bind(...args)
        .run();
      const next = (await stats()).generation;
      const changed = next !== gen;
      gen = next;
      return [what, changed];
    };
    expect(await moved("setting", "INSERT INTO instance_settings (key, value) VALUES ('site_title', 'x')")).toEqual(["setting", true]);
    expect(await moved("rule", "INSERT INTO rules (id, text, hint, priority, created_at) VALUES (?, 'r', '', 0, 0)", pad("9"))).toEqual(["rule", true]);
    expect(await moved("local emoji", "INSERT INTO custom_emojis (id, shortcode, created_at) VALUES (?, 'blob', 0)", pad("31"))).toEqual(["local emoji", true]);
    expect(await moved("remote emoji", "INSERT INTO custom_emojis (id, shortcode, domain, created_at) VALUES (?, 'blob', 'r.example', 0)", pad("32"))).toEqual([
      "remote emoji",
      false,
    ]);
    expect(
      await moved("domain block", "INSERT INTO domain_blocks (id, domain, severity, created_at) VALUES (?, 'bad.example', 'suspend', 0)", pad("41")),
    ).toEqual(["domain block", true]);
    expect(await moved("contact profile", "UPDATE accounts SET display_name = 'Boss' WHERE id = ?", pad(owner.id))).toEqual(["contact profile", true]);
    expect(await moved("other profile", "UPDATE accounts SET display_name = 'Other' WHERE id = ?", pad(other.id))).toEqual(["other profile", false]);
    expect(await moved("role", "UPDATE users SET role_id = ? WHERE id = ?", pad("2"), pad(other.userId))).toEqual(["role", true]);
  });
});
