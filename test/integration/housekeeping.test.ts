import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { INBOX_SEEN_KEEP_MS, OUTBOX_KEEP_MS, pruneFederationState } from "../../src/background/housekeeping";
import { db } from "./helpers";

const count = async (table: string) => ((await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first()) as { n: number }).n;

describe("cron housekeeping", () => {
  it("prunes seen activities, delivered activities and old idempotency keys, and keeps recent ones", async () => {
    const now = Date.now();
    const old = now - Math.max(INBOX_SEEN_KEEP_MS, OUTBOX_KEEP_MS) - 1000;
    await env.DB.batch([
      env.DB.prepare("INSERT INTO inbox_seen (activity_id, received_at) VALUES ('https://a.example/old', ?), ('https://a.example/new', ?)").bind(old, now),
      env.DB.prepare(
        "INSERT INTO activity_outbox (id, account_id, json, created_at) VALUES ('00000000000000000001', '00000000000000000001', '{}', ?), ('00000000000000000002', '00000000000000000001', '{}', ?)",
      ).bind(old, now),
      env.DB.prepare(
        "INSERT INTO idempotency_keys (account_id, key, status_id, created_at) VALUES ('00000000000000000001', 'k1', '00000000000000000001', ?), ('00000000000000000001', 'k2', '00000000000000000001', ?)",
      ).bind(old, now),
    ]);
    await pruneFederationState(db(), now);
    expect(await count("inbox_seen")).toBe(1);
    expect(await count("activity_outbox")).toBe(1);
    expect(await count("idempotency_keys")).toBe(1);
  });
});
