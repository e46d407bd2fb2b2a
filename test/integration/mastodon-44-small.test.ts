// Small endpoints of Mastodon 4.4 that its apps call: the domain block preview (GET /api/v1/domain_blocks/preview),
// the peers search (GET /api/v1/peers/search) and
// donation campaigns (GET /api/v1/donation_campaigns: 204 where none are configured, as on Tern always).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { padId, snowflake } from "../../src/lib/text/ids";
import { remoteAccount } from "./export-fixtures";
import { anon, makeUser } from "./helpers";

async function follows(followerId: string, targetId: string) {
  await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, 1)")
    .bind(padId(snowflake()), padId(followerId), padId(targetId))
    .run();
}

describe("GET /api/v1/domain_blocks/preview", () => {
  it("counts the accounts of the domain the viewer follows and is followed by", async () => {
    const me = await makeUser();
    const [r1, r2, r3, other] = [
      await remoteAccount("one", "peer.example"),
      await remoteAccount("two", "peer.example"),
      await remoteAccount("three", "peer.example"),
      await remoteAccount("four", "elsewhere.example"),
    ];
    await follows(me.id, r1);
    await follows(me.id, r2);
    await follows(r3, me.id);
    await follows(me.id, other);
    const r = await me.api.get("/api/v1/domain_blocks/preview?domain=Peer.Example");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ following_count: 2, followers_count: 1 });
    expect((await me.api.get("/api/v1/domain_blocks/preview?domain=quiet.example")).body).toEqual({ following_count: 0, followers_count: 0 });
  });

  it("refuses a bad domain (422) and tokens without a blocking scope", async () => {
    const me = await makeUser();
    expect((await me.api.get("/api/v1/domain_blocks/preview?domain=not%20a%20domain")).status).toBe(422);
    expect((await me.api.get("/api/v1/domain_blocks/preview")).status).toBe(422);
    expect((await anon.get("/api/v1/domain_blocks/preview?domain=peer.example")).status).toBe(401);
    const readOnly = await makeUser(undefined, { scopes: "read" });
    expect((await readOnly.api.get("/api/v1/domain_blocks/preview?domain=peer.example")).status).toBe(403);
  });
});

describe("GET /api/v1/donation_campaigns", () => {
  it("is 204 for a signed-in user (no campaign source), 401 signed out", async () => {
    const me = await makeUser();
    const r = await me.api.get("/api/v1/donation_campaigns");
    expect(r.status).toBe(204);
    expect((await anon.get("/api/v1/donation_campaigns")).status).toBe(401);
  });
});

describe("GET /api/v1/peers/search", () => {
  it("finds up to 10 known domains by prefix, null for an empty query", async () => {
    for (let i = 0; i < 12; i++) await remoteAccount(`p${i}`, `peer${String(i).padStart(2, "0")}.example`);
    await remoteAccount("p-a", "peer00.example");
    await remoteAccount("other", "quiet.example");
    const r = await anon.get("/api/v1/peers/search?q=PEER0");
    expect(r.status).toBe(200);
    expect(r.body).toEqual(Array.from({ length: 10 }, (_, i) => `peer0${i}.example`));
    expect((await anon.get("/api/v1/peers/search?q=peer1")).body).toEqual(["peer10.example", "peer11.example"]);
    expect((await anon.get("/api/v1/peers/search?q=nothing")).body).toEqual([]);
    expect((await anon.get("/api/v1/peers/search?q=")).body).toBeNull();
    expect((await anon.get("/api/v1/peers/search?q=%25%5F")).status).toBe(200);
  });
});
