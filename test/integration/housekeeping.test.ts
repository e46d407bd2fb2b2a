import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OUTBOX_KEEP_MS, pruneFederationState } from "../../src/background/housekeeping";
import { firstKeptBucket, SEEN_BUCKET_DAYS, SEEN_KEEP_DAYS, seenBucket } from "../../src/federation/inbox/inbox-seen";
import { db } from "./helpers";

const count = async (table: string) => ((await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first()) as { n: number }).n;

describe("cron housekeeping", () => {
  it("prunes seen activities, delivered activities and old idempotency keys, and keeps recent ones", async () => {
    const now = Date.now();
    const old = now - OUTBOX_KEEP_MS - 1000;
    // Seen activities go by the week: the oldest week kept (the one holding the day 14 days ago) stays, the week before
    // it goes.
    expect(seenBucket(now) - firstKeptBucket(now)).toBeGreaterThanOrEqual(SEEN_KEEP_DAYS);
    expect(seenBucket(now) - firstKeptBucket(now)).toBeLessThan(SEEN_KEEP_DAYS + SEEN_BUCKET_DAYS);
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO inbox_seen (day, activity_id) VALUES (?, 'https://a.example/old'), (?, 'https://a.example/kept'), (?, 'https://a.example/new')",
      ).bind(firstKeptBucket(now) - SEEN_BUCKET_DAYS, firstKeptBucket(now), seenBucket(now)),
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
