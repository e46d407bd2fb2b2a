import { createMessageBatch, env, getQueueResult, createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { domainBlocks } from "../../src/db/schema";
import { upsertRemoteAccount } from "../../src/federation/remote/remote-accounts";
import { normalizeActor } from "../../src/federation/remote/normalize";
import { db, makeUser, ORIGIN } from "./helpers";
import { SELF } from "cloudflare:test";

const AP = { accept: "application/activity+json" };

describe("deleted local statuses", () => {
  it("answer 410 with a Tombstone at their ActivityPub URI", async () => {
    const u = await makeUser();
    const post = await u.api.post("/api/v1/statuses", { status: "soon gone" });
    const uri = post.body.uri as string;
    expect((await SELF.fetch(uri, { headers: AP })).status).toBe(200);
    expect((await u.api.delete(`/api/v1/statuses/${post.body.id}`)).status).toBe(200);
    const res = await SELF.fetch(uri, { headers: AP });
    expect(res.status).toBe(410);
    expect(await res.json()).toMatchObject({ id: uri, type: "Tombstone" });
    expect((await SELF.fetch(`${ORIGIN}/users/${u.username}/statuses/123`, { headers: AP })).status).toBe(404);
  });
});

describe("domain blocks on newly fetched accounts", () => {
  it("an account first seen on a silenced domain starts silenced (limited)", async () => {
    await db().insert(domainBlocks).values({ id: "77", domain: "quiet.example", severity: "silence", createdAt: Date.now() });
    const actor = normalizeActor({
      id: "https://quiet.example/users/q",
      type: "Person",
      preferredUsername: "q",
      inbox: "https://quiet.example/users/q/inbox",
    })!;
    const row = await upsertRemoteAccount(db(), actor);
    expect(row.silencedAt).not.toBeNull();
    const u = await makeUser();
    expect((await u.api.get(`/api/v1/accounts/${row.id}`)).body.limited).toBe(true);
  });
});

describe("dead-letter queue", () => {
  it("stores messages the queues gave up on", async () => {
    const batch = createMessageBatch("tern-dead-letters", [{ id: "m1", timestamp: new Date(), attempts: 11, body: { type: "fanout", statusId: "1" } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["m1"]);
    const row = await env.DB.prepare("SELECT queue, body, attempts FROM dead_letters").first();
    expect(row).toMatchObject({ queue: "tern-dead-letters", attempts: 11 });
    expect(JSON.parse((row as { body: string }).body)).toEqual({ type: "fanout", statusId: "1" });
  });
});
