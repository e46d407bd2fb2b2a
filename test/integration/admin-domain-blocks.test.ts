// Admin federation controls: /api/v1/admin/domain_blocks (CRUD, existing_domain_block, what a suspension or silence
// does to the domain's accounts, follows, feeds and timelines, and what lifting it restores), inbound and outbound
// refusal of a suspended domain, /api/v1/admin/domain_allows and limited federation mode.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { isDomainSuspended, resolveActor } from "../../src/federation/remote/remote-accounts";
import { withoutSuspended } from "../../src/federation/outbound/recipients";
import { verifyInboxRequest } from "../../src/federation/inbox/inbox-verify";
import { signRequest } from "../support/signed-request";
import { anon, cfg, db, eventually, links, makeUser, ORIGIN } from "./helpers";
import { create, deliver, installFetchMock, note, pad, postInbox, remoteActor, runJobs, sql } from "./federation-inbox-fixtures";
import { addFollow, remoteAccount, remoteStatus } from "./federation-outbound-fixtures";
import { ADMIN, MOD } from "./admin-fixtures";
import { createDb } from "../../src/db/client";
import { Effects } from "../../src/effects/collector";
import { countingD1, type D1Count } from "../../src/lib/limits/d1-counter";
import { applyDomainBlockRound } from "../../src/services/admin/blocks/domain-blocks";
import { queued } from "./queues";

beforeAll(() => installFetchMock());

async function logRows() {
  const rows = await sql("SELECT action, target_type, CAST(target_id AS TEXT) AS target_id FROM admin_action_logs ORDER BY id");
  return rows.map((r) => ({ action: r.action, target_type: r.target_type, target_id: String(BigInt(r.target_id)) }));
}

async function accountRow(id: string) {
  const [row] = await sql("SELECT suspended_at, silenced_at, suspension_origin, followers_count, following_count FROM accounts WHERE id = ?", pad(id));
  return row!;
}

const followCount = async () => (await sql("SELECT count(*) AS n FROM follows"))[0]!.n as number;

describe("domain blocks: authorisation", () => {
  it("401 signed out, 403 without manage_federation, 403 without the admin scope, 403 read scope on writes", async () => {
    expect((await anon.get("/api/v1/admin/domain_blocks")).status).toBe(401);
    const mod = await makeUser("mod", MOD);
    for (const res of [
      await mod.api.get("/api/v1/admin/domain_blocks"),
      await mod.api.post("/api/v1/admin/domain_blocks", { domain: "bad.example" }),
      await mod.api.get("/api/v1/admin/domain_allows"),
      await mod.api.post("/api/v1/admin/domain_allows", { domain: "good.example" }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "This action is not allowed" });
    }
    const noScope = await makeUser("adminnoscope", { roleId: "2", scopes: "read write" });
    for (const res of [
      await noScope.api.get("/api/v1/admin/domain_blocks"),
      await noScope.api.delete("/api/v1/admin/domain_blocks/1"),
      await noScope.api.get("/api/v1/admin/domain_allows"),
      await noScope.api.delete("/api/v1/admin/domain_allows/1"),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe("This action is outside the authorized scopes");
    }
    const reader = await makeUser("reader", { roleId: "2", scopes: "admin:read:domain_blocks admin:read:domain_allows" });
    expect((await reader.api.get("/api/v1/admin/domain_blocks")).status).toBe(200);
    expect((await reader.api.get("/api/v1/admin/domain_allows")).status).toBe(200);
    expect((await reader.api.post("/api/v1/admin/domain_blocks", { domain: "x.example" })).status).toBe(403);
    expect((await reader.api.post("/api/v1/admin/domain_allows", { domain: "x.example" })).status).toBe(403);
  });
});

describe("domain blocks: CRUD", () => {
  it("creates, lists with Link headers, shows, updates, deletes, and logs each change", async () => {
    const admin = await makeUser("boss", ADMIN);
    const a = await admin.api.post("/api/v1/admin/domain_blocks", {
      domain: " Spam.Example ",
      severity: "noop",
      reject_media: true,
      private_comment: "staff only",
      public_comment: "spam",
    });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      domain: "spam.example",
      severity: "noop",
      reject_media: true,
      reject_reports: false,
      private_comment: "staff only",
      public_comment: "spam",
      obfuscate: false,
    });
    expect(a.body.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(a.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const b = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "other.example" }, "form");
    expect(b.body.severity).toBe("silence");

    const page1 = await admin.api.get("/api/v1/admin/domain_blocks?limit=1");
    expect(page1.body.map((x: any) => x.domain)).toEqual(["other.example"]);
    const next = links(page1.headers).next!;
    expect(next).toContain(`max_id=${b.body.id}`);
    expect((await admin.api.get(next)).body.map((x: any) => x.domain)).toEqual(["spam.example"]);
    expect((await admin.api.get(`/api/v1/admin/domain_blocks/${a.body.id}`)).body).toEqual(a.body);
    expect((await admin.api.get("/api/v1/admin/domain_blocks/999")).status).toBe(404);

    const u = await admin.api.put(`/api/v1/admin/domain_blocks/${a.body.id}`, { reject_reports: true, public_comment: "" });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ domain: "spam.example", severity: "noop", reject_media: true, reject_reports: true, public_comment: null });
    expect((await admin.api.patch(`/api/v1/admin/domain_blocks/${a.body.id}`, { obfuscate: true })).body.obfuscate).toBe(true);

    const d = await admin.api.delete(`/api/v1/admin/domain_blocks/${a.body.id}`);
    expect(d.status).toBe(200);
    expect(d.body).toEqual({});
    expect((await admin.api.get(`/api/v1/admin/domain_blocks/${a.body.id}`)).status).toBe(404);
    expect((await admin.api.delete(`/api/v1/admin/domain_blocks/${a.body.id}`)).status).toBe(404);

    expect(await logRows()).toEqual([
      { action: "create", target_type: "DomainBlock", target_id: a.body.id },
      { action: "create", target_type: "DomainBlock", target_id: b.body.id },
      { action: "update", target_type: "DomainBlock", target_id: a.body.id },
      { action: "update", target_type: "DomainBlock", target_id: a.body.id },
      { action: "destroy", target_type: "DomainBlock", target_id: a.body.id },
    ]);
  });

  it("refuses bad input with 422 and writes nothing", async () => {
    const admin = await makeUser("boss", ADMIN);
    const blank = await admin.api.post("/api/v1/admin/domain_blocks", {});
    expect(blank.status).toBe(422);
    expect(blank.body.error).toBe("Validation failed: Domain can't be blank");
    expect((await admin.api.post("/api/v1/admin/domain_blocks", { domain: "https://x.example/path" })).body.error).toBe("Validation failed: Domain is invalid");
    const sev = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "x.example", severity: "nuke" });
    expect(sev.status).toBe(422);
    expect(sev.body.error).toBe("Validation failed: Severity is not included in the list");
    expect((await admin.api.post("/api/v1/admin/domain_blocks", { domain: ["a", "b"] })).status).toBe(422);
    expect(await sql("SELECT id FROM domain_blocks")).toEqual([]);
    expect(await logRows()).toEqual([]);
  });

  it("a block already covering the domain is 422 with existing_domain_block; a stricter subdomain block is allowed", async () => {
    const admin = await makeUser("boss", ADMIN);
    const first = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "example.org", severity: "silence" });
    const again = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "EXAMPLE.org", severity: "suspend" });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ error: "You have already imposed stricter limits on example.org.", existing_domain_block: first.body });
    const weaker = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "sub.example.org", severity: "noop" });
    expect(weaker.status).toBe(422);
    expect(weaker.body.existing_domain_block.id).toBe(first.body.id);
    const stricter = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "sub.example.org", severity: "suspend" });
    expect(stricter.status).toBe(200);
    expect((await sql("SELECT id FROM domain_blocks")).length).toBe(2);
  });
});

describe("domain blocks: effects on the domain", () => {
  it("suspend: suspends every account of the domain and its subdomains, cuts follows both ways, hides their statuses; lifting restores accounts, not follows", async () => {
    const admin = await makeUser("boss", ADMIN);
    const alice = await makeUser("alice");
    const bob = await remoteAccount("bob", "evil.example");
    const carol = await remoteAccount("carol", "sub.evil.example");
    const earlier = await remoteAccount("earlier", "evil.example");
    const bystander = await remoteAccount("dave", "fine.example");
    await addFollow(alice.id, bob.id);
    await addFollow(carol.id, alice.id);
    await addFollow(alice.id, bystander.id);
    await env.DB.prepare("INSERT INTO follow_requests (id, account_id, target_account_id, created_at) VALUES ('00000000000000000777', ?, ?, 1)")
      .bind(pad(alice.id), pad(carol.id))
      .run();
    const st = await remoteStatus(bob);
    await env.DB.prepare("INSERT INTO home_feed (account_id, status_id, author_id) VALUES (?, ?, ?)").bind(pad(alice.id), pad(st.id), pad(bob.id)).run();
    expect((await alice.api.get("/api/v1/timelines/home")).body.map((s: any) => s.id)).toEqual([st.id]);
    expect((await alice.api.get("/api/v1/timelines/public")).body.map((s: any) => s.id)).toContain(st.id);
    // Suspended by staff before the block: the block neither marks nor lifts it.
    await admin.api.post(`/api/v1/admin/accounts/${earlier.id}/action`, { type: "suspend" });
    const staffSuspension = (await accountRow(earlier.id)).suspended_at;
    expect((await accountRow(alice.id)).following_count).toBe(2);

    const res = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "evil.example", severity: "suspend" });
    expect(res.status).toBe(200);
    const createdAt = Date.parse(res.body.created_at);
    await eventually(async () => {
      expect((await accountRow(bob.id)).suspended_at).toBe(createdAt);
    });
    expect(await accountRow(carol.id)).toMatchObject({ suspended_at: createdAt, suspension_origin: "local" });
    expect((await accountRow(earlier.id)).suspended_at).toBe(staffSuspension);
    expect((await accountRow(bystander.id)).suspended_at).toBeNull();
    // Follows both ways and requests are gone; counters follow (triggers); the bystander's follow stays.
    expect(await followCount()).toBe(1);
    expect(await sql("SELECT id FROM follow_requests")).toEqual([]);
    expect(await accountRow(alice.id)).toMatchObject({ following_count: 1, followers_count: 0 });
    expect(await sql("SELECT status_id FROM home_feed WHERE account_id = ?", pad(alice.id))).toEqual([]);
    expect((await alice.api.get("/api/v1/timelines/home")).body).toEqual([]);
    expect((await alice.api.get("/api/v1/timelines/public")).body.map((s: any) => s.id)).not.toContain(st.id);
    expect((await alice.api.get(`/api/v1/statuses/${st.id}`)).status).toBe(404);

    const del = await admin.api.delete(`/api/v1/admin/domain_blocks/${res.body.id}`);
    expect(del.status).toBe(200);
    expect(await accountRow(bob.id)).toMatchObject({ suspended_at: null, suspension_origin: null });
    expect((await accountRow(carol.id)).suspended_at).toBeNull();
    expect((await accountRow(earlier.id)).suspended_at).toBe(staffSuspension);
    expect(await followCount()).toBe(1);
    expect((await alice.api.get(`/api/v1/statuses/${st.id}`)).status).toBe(200);
    expect((await alice.api.get("/api/v1/timelines/home")).body).toEqual([]);
  });

  it("silence limits the domain's accounts; a severity change lifts what the old one did; deleting unsilences", async () => {
    const admin = await makeUser("boss", ADMIN);
    const alice = await makeUser("alice");
    const bob = await remoteAccount("bob", "loud.example");
    await addFollow(alice.id, bob.id);
    const res = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "loud.example", severity: "silence" });
    const createdAt = Date.parse(res.body.created_at);
    await eventually(async () => {
      expect((await accountRow(bob.id)).silenced_at).toBe(createdAt);
    });
    expect((await accountRow(bob.id)).suspended_at).toBeNull();
    expect(await followCount()).toBe(1);

    await admin.api.put(`/api/v1/admin/domain_blocks/${res.body.id}`, { severity: "suspend" });
    await eventually(async () => {
      expect(await accountRow(bob.id)).toMatchObject({ silenced_at: null, suspended_at: createdAt });
    });
    expect(await followCount()).toBe(0);

    await admin.api.put(`/api/v1/admin/domain_blocks/${res.body.id}`, { severity: "silence" });
    await eventually(async () => {
      expect(await accountRow(bob.id)).toMatchObject({ silenced_at: createdAt, suspended_at: null });
    });
    await admin.api.delete(`/api/v1/admin/domain_blocks/${res.body.id}`);
    expect(await accountRow(bob.id)).toMatchObject({ silenced_at: null, suspended_at: null });
  });

  it("works through a domain larger than one round", async () => {
    const admin = await makeUser("boss", ADMIN);
    const now = Date.now();
    const stmt = env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?1, ?2, 'big.example', 'https://big.example/users/' || ?2, ?3, ?3)",
    );
    await env.DB.batch(Array.from({ length: 450 }, (_, i) => stmt.bind(pad(String(10_000 + i)), `u${i}`, now)));
    await admin.api.post("/api/v1/admin/domain_blocks", { domain: "big.example", severity: "suspend" });
    await eventually(async () => {
      expect((await sql("SELECT count(*) AS n FROM accounts WHERE domain = 'big.example' AND suspended_at IS NULL"))[0]!.n).toBe(0);
    });
  });
});

// Subdomains are not one range of any index: a block's accounts are found through the domains accounts are stored on
// (a walk of accounts_domain, one seek per server known), then by domain. Matching the accounts themselves read every
// account in each round; a blocklist of hundreds of domains pushed through this API repeats a round per domain.
describe("applying a block reads the servers known, not their accounts", () => {
  it("2,000 more accounts on the same servers add no rows read to a round; the block finds subdomains and ports", async () => {
    const admin = await makeUser("boss", ADMIN);
    const now = Date.now();
    let next = 50_000;
    const insert = env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?1, ?2, ?3, 'https://' || ?3 || '/users/' || ?2, ?4, ?4)",
    );
    const on = (domain: string, n: number) => Array.from({ length: n }, (_, i) => insert.bind(pad(String(next++)), `u${next}x${i}`, domain, now));
    /** n accounts spread over 20 other servers. */
    const noise = async (n: number) => {
      for (let k = 0; k < n; k += 500) await env.DB.batch(Array.from({ length: 20 }, (_, h) => on(`other${h}.example`, 25)).flat());
    };
    const target = (d: string) => [...on(d, 3), ...on(`sub.${d}`, 2), ...on(`${d}:8443`, 1), ...on(`not${d}`, 1), ...on(`${d}.evil`, 1)];
    await noise(2000);
    await env.DB.batch(target("first.example"));
    await env.DB.batch(target("second.example"));
    /** Creates a suspension of `d` and runs its first round on a counted database: rows read, and what it suspended. */
    const round = async (d: string) => {
      const res = await admin.api.post("/api/v1/admin/domain_blocks", { domain: d, severity: "suspend" });
      expect(res.status).toBe(200);
      queued.jobs.length = 0;
      const counter: D1Count = { n: 0 };
      await applyDomainBlockRound(createDb(countingD1(env.DB, counter, { rows: true })), new Effects(""), res.body.id);
      const hit = await sql("SELECT domain FROM accounts WHERE suspended_at IS NOT NULL AND domain LIKE ? ORDER BY domain", `%${d}%`);
      return { rows: counter.r!, hit: hit.map((r) => r.domain as string) };
    };
    const first = await round("first.example");
    await noise(2000);
    const second = await round("second.example");
    console.log("a domain block's round, rows read with 2,000 and 4,000 accounts on 20 other servers:", first.rows, second.rows);
    for (const [r, d] of [
      [first, "first.example"],
      [second, "second.example"],
    ] as const)
      expect(r.hit).toEqual([d, d, d, `${d}:8443`, `sub.${d}`, `sub.${d}`]);
    expect(second.rows).toBeLessThanOrEqual(first.rows + 5);
    expect(first.rows).toBeLessThan(1_000);
  });
});

describe("federation with a suspended domain", () => {
  it("inbound activities from it are refused (403) and outbound deliveries skip it", async () => {
    const admin = await makeUser("boss", ADMIN);
    await makeUser("alice");
    const eve = await remoteActor("eve", "hostile.example");
    const before = await deliver(eve, create(eve, note(eve)));
    expect(before.status).toBe(202);
    await admin.api.post("/api/v1/admin/domain_blocks", { domain: "hostile.example", severity: "suspend" });
    const after = await deliver(eve, create(eve, note(eve)));
    expect(after.status).toBe(403);
    expect((await sql("SELECT count(*) AS n FROM statuses WHERE uri LIKE 'https://hostile.example/%'"))[0]!.n).toBe(1);

    const inboxes = ["https://hostile.example/inbox", "https://a.hostile.example/inbox", "https://fine.example/inbox"];
    expect(await withoutSuspended(db(), inboxes, { limitedFederation: false })).toEqual(["https://fine.example/inbox"]);
  });
});

describe("existing enforcement reads the admin blocks right", () => {
  it("an account first seen on a silenced domain carries the block's time, so lifting the block unsilences it", async () => {
    const admin = await makeUser("boss", ADMIN);
    await makeUser("alice");
    const res = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "quiet.example", severity: "silence" });
    const late = await remoteActor("late", "quiet.example");
    expect((await deliver(late, create(late, note(late)))).status).toBe(202);
    const [row] = await sql("SELECT silenced_at FROM accounts WHERE uri = ?", late.uri);
    expect(row!.silenced_at).toBe(Date.parse(res.body.created_at));
    await admin.api.delete(`/api/v1/admin/domain_blocks/${res.body.id}`);
    expect((await sql("SELECT silenced_at FROM accounts WHERE uri = ?", late.uri))[0]!.silenced_at).toBeNull();
  });

  it("reject_reports on a parent domain drops Flags from its subdomains", async () => {
    const admin = await makeUser("boss", ADMIN);
    const alice = await makeUser("alice");
    await admin.api.post("/api/v1/admin/domain_blocks", { domain: "reports.example", severity: "noop", reject_reports: true });
    const snitch = await remoteActor("snitch", "a.reports.example");
    const flag = { id: `${snitch.uri}#flag-1`, type: "Flag", actor: snitch.uri, object: [`${ORIGIN}/users/alice`], content: "bad" };
    expect((await deliver(snitch, flag)).status).toBe(202);
    expect(await sql("SELECT id FROM reports")).toEqual([]);
    const other = await remoteActor("other", "elsewhere.example");
    await deliver(other, { ...flag, id: `${other.uri}#flag-1`, actor: other.uri });
    expect((await sql("SELECT target_account_id FROM reports")).map((r) => String(BigInt(r.target_account_id)))).toEqual([alice.id]);
  });
});

describe("domain allows and limited federation", () => {
  it("CRUD: create is idempotent, list pages, show, delete; each change logged", async () => {
    const admin = await makeUser("boss", ADMIN);
    const a = await admin.api.post("/api/v1/admin/domain_allows", { domain: "Friends.Example" });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ id: a.body.id, domain: "friends.example", created_at: expect.stringMatching(/Z$/) });
    expect((await admin.api.post("/api/v1/admin/domain_allows", { domain: "friends.example" })).body).toEqual(a.body);
    const b = await admin.api.post("/api/v1/admin/domain_allows", { domain: "pals.example" });
    const page = await admin.api.get("/api/v1/admin/domain_allows?limit=1");
    expect(page.body).toEqual([b.body]);
    expect(links(page.headers).next).toContain(`max_id=${b.body.id}`);
    expect((await admin.api.get(`/api/v1/admin/domain_allows/${a.body.id}`)).body).toEqual(a.body);
    expect((await admin.api.post("/api/v1/admin/domain_allows", { domain: "" })).status).toBe(422);
    expect((await admin.api.delete(`/api/v1/admin/domain_allows/${a.body.id}`)).body).toEqual({});
    expect((await admin.api.get(`/api/v1/admin/domain_allows/${a.body.id}`)).status).toBe(404);
    expect(await logRows()).toEqual([
      { action: "create", target_type: "DomainAllow", target_id: a.body.id },
      { action: "create", target_type: "DomainAllow", target_id: b.body.id },
      { action: "destroy", target_type: "DomainAllow", target_id: a.body.id },
    ]);
  });

  it("with LIMITED_FEDERATION only allowed domains federate: inbound refused, outbound skipped, lookups refused", async () => {
    const admin = await makeUser("boss", ADMIN);
    await makeUser("alice");
    const friend = await remoteActor("friend", "friends.example");
    const stranger = await remoteActor("stranger", "strangers.example");
    // Both known before the mode is on (their keys are cached).
    expect((await deliver(friend, create(friend, note(friend)))).status).toBe(202);
    expect((await deliver(stranger, create(stranger, note(stranger)))).status).toBe(202);
    await admin.api.post("/api/v1/admin/domain_allows", { domain: "friends.example" });
    const limited = { limitedFederation: true };
    expect(await isDomainSuspended(db(), "friends.example", limited)).toBe(false);
    expect(await isDomainSuspended(db(), "strangers.example", limited)).toBe(true);
    expect(await isDomainSuspended(db(), "strangers.example", { limitedFederation: false })).toBe(false);
    expect(await withoutSuspended(db(), ["https://friends.example/inbox", "https://strangers.example/inbox"], limited)).toEqual([
      "https://friends.example/inbox",
    ]);

    const c = { ...cfg(), limitedFederation: true };
    // Inbound: verification refuses the signer's domain (403) before anything is stored.
    const signed = async (a: typeof friend) => {
      const body = JSON.stringify(create(a, note(a)));
      const req = new Request(`${ORIGIN}/inbox`, { method: "POST", headers: { "content-type": "application/activity+json" }, body });
      return new Request(await signRequest(req, a.keyId, a.keys.privateKeyPem, body), { body });
    };
    expect((await verifyInboxRequest(db(), c, await signed(friend))).signer.uri).toBe(friend.uri);
    await expect(verifyInboxRequest(db(), c, await signed(stranger))).rejects.toMatchObject({ status: 403, message: "Request from disallowed domain" });
    // Remote lookups: fetching an actor of a domain not allowed is refused before any request.
    await expect(resolveActor(db(), c, stranger.uri, { refresh: true })).rejects.toThrow("domain suspended");
    expect((await resolveActor(db(), c, friend.uri, { refresh: true })).uri).toBe(friend.uri);

    // The processing side reads LIMITED_FEDERATION from the Worker's env: an activity accepted before the mode was
    // switched on is dropped when it is processed. The jobs run with the env of a Worker that has the variable set: a
    // new env object, as a deploy gives. (readConfig keeps the last config made for an env object and origin: the
    // test's env changed in place is not seen once a request has made one for it, as the Vitest 4 pool's do.)
    const res = await postInbox(stranger, create(stranger, note(stranger, { id: "https://strangers.example/users/stranger/statuses/late" })));
    expect(res.status).toBe(202);
    await runJobs({ ...env, LIMITED_FEDERATION: "true" });
    expect(await sql("SELECT id FROM statuses WHERE uri = 'https://strangers.example/users/stranger/statuses/late'")).toEqual([]);
  });
});
