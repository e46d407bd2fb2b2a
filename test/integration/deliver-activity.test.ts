// deliverActivity (src/federation/outbound/delivery.ts): its checks (suspended domains, unavailable hosts) and the
// activity's store are one D1 batch (issue 34 point 2). What it leaves: a stored activity only when some inbox gets
// it, one DELIVERY pack per 8 inboxes, nothing when D1 refuses the batch (the federate effect is then retried by the
// runner, src/effects/retry.ts).
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { deliverActivity } from "../../src/federation/outbound/delivery";
import { countingD1, type D1Count } from "../../src/lib/limits/d1-counter";
import { cfg, db } from "./helpers";
import { installQueueCapture, queued } from "./queues";

const ACCOUNT = "7";
const activity = { type: "Create", id: "https://tern.test/activities/1" };
const outboxRows = async () => (await env.DB.prepare("SELECT id FROM activity_outbox").all()).results.length;

beforeEach(async () => {
  installQueueCapture();
  await env.DB.prepare("INSERT INTO domain_blocks (id, domain, severity, created_at) VALUES ('1', 'blocked.example', 'suspend', 0)").run();
  await env.DB.prepare("INSERT INTO unavailable_domains (domain, created_at) VALUES ('gone.example', 0)").run();
});

describe("deliverActivity", () => {
  it("queues the inboxes left after the suspended domains (and their subdomains) and the unavailable hosts, and stores the activity once", async () => {
    const inboxes = [
      "https://a.example/inbox",
      "https://blocked.example/inbox",
      "https://sub.blocked.example/inbox",
      "https://gone.example/inbox",
      "https://b.example/inbox",
      "https://a.example/inbox",
      "not a url",
    ];
    const counter: D1Count = { n: 0 };
    expect(await deliverActivity(env, createDb(countingD1(env.DB, counter)), cfg(), ACCOUNT, activity, inboxes)).toBe(2);
    expect(counter.n).toBe(1); // the checks and the store: one round trip
    expect(queued.deliveries.map((d) => d.inbox)).toEqual(["https://a.example/inbox", "https://b.example/inbox"]);
    expect(await outboxRows()).toBe(1);
  });

  it("stores nothing and queues nothing when every inbox is suspended or unavailable", async () => {
    const n = await deliverActivity(env, db(), cfg(), ACCOUNT, activity, ["https://blocked.example/inbox", "https://gone.example/inbox"]);
    expect(n).toBe(0);
    expect(queued.deliveries).toEqual([]);
    expect(await outboxRows()).toBe(0);
  });

  it("D1 refusing the batch: it throws, and nothing is queued or stored", async () => {
    await env.DB.prepare("ALTER TABLE unavailable_domains RENAME TO unavailable_domains_away").run();
    try {
      await expect(deliverActivity(env, db(), cfg(), ACCOUNT, activity, ["https://a.example/inbox"])).rejects.toThrow();
      expect(queued.deliveries).toEqual([]);
    } finally {
      await env.DB.prepare("ALTER TABLE unavailable_domains_away RENAME TO unavailable_domains").run();
    }
    expect(await outboxRows()).toBe(0);
  });
});
