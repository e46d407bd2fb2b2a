import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OUTBOX_KEEP_MS, pruneFederationState } from "../../src/background/housekeeping";
import { firstKeptDay, SEEN_KEEP_DAYS, seenDay } from "../../src/federation/inbox/inbox-seen";
import { db } from "./helpers";

const count = async (table: string) => ((await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first()) as { n: number }).n;

describe("cron housekeeping", () => {
  it("prunes seen activities, delivered activities and old idempotency keys, and keeps recent ones", async () => {
    const now = Date.now();
    const old = now - OUTBOX_KEEP_MS - 1000;
    // Seen activities go by the day: the oldest day kept stays, the day before it goes.
    expect(seenDay(now) - firstKeptDay(now)).toBe(SEEN_KEEP_DAYS);
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO inbox_seen (day, activity_id) VALUES (?, 'https://a.example/old'), (?, 'https://a.example/kept'), (?, 'https://a.example/new')",
      ).bind(firstKeptDay(now) - 1, firstKeptDay(now), seenDay(now)),
      env.DB.prepare(
        "INSERT INTO activity_outbox (id, account_id, json, created_at) VALUES ('00000000000000000001', '00000000000000000001', '{}', ?), ('00000000000000000002', '00000000000000000001', '{}', ?)",
      ).bind(old, now),
      env.DB.prepare(
        "INSERT INTO idempotency_keys (account_id, key, status_id, created_at) VALUES ('00000000000000000001', 'k1', '00000000000000000001', ?), ('00000000000000000001', 'k2', '00000000000000000001', ?)",
      ).bind(old, now),
    ]);
    await pruneFederationState(db(), now);
    expect(await count("inbox_seen")).toBe(2);
    expect(await count("activity_outbox")).toBe(1);
    expect(await count("idempotency_keys")).toBe(1);
  });
});
