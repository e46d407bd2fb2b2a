// The DELIVERY consumer against simulated peers: signatures that verify with the local actor's public key, retries
// with growing delays, dropped 4xx, failure days and unavailable hosts, and recovery.
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { checkSignedRequest, parseSignatureHeader, verifyWithKey } from "../../src/federation/signing/signatures";
import { ORIGIN } from "./helpers";
import { queued } from "./queues";
import { deliverNow, deliveryBatch, pendingDelivery, peer, sendCalls } from "./federation-delivery-fixtures";
import { addFollow, remoteAccount } from "./federation-outbound-fixtures";
import { makeUser } from "./helpers";
import { runQueuedJobs } from "./queues";
import { DELIVERY_PACK, type DeliveryMessage, handleDeliveries } from "../../src/federation/outbound/delivery";

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
afterEach(() => fetchMock.assertNoPendingInterceptors());

const failures = async (host = "a.example") =>
  (await env.DB.prepare("SELECT day FROM delivery_failures WHERE host = ?").bind(host).all<{ day: string }>()).results.map((r) => r.day);
const unavailable = async (host = "a.example") => !!(await env.DB.prepare("SELECT 1 AS x FROM unavailable_domains WHERE domain = ?").bind(host).first());

describe("delivery", () => {
  it("signs each POST so that it verifies with the author's public key", async () => {
    const { msg, userId, username } = await pendingDelivery();
    let seen: { headers: Headers; body: string; path: string } | null = null;
    peer().reply((opts) => {
      const h = new Headers(opts.headers as Record<string, string>);
      const body = typeof opts.body === "string" ? opts.body : new TextDecoder().decode(opts.body as Uint8Array);
      seen = { headers: h, body, path: opts.path };
      return { statusCode: 202, data: "" };
    });
    const out = await deliverNow(msg);
    expect(out.acked).toHaveLength(1);
    expect(seen).not.toBeNull();
    const { headers, body, path } = seen!;
    if (!headers.has("host")) headers.set("host", "a.example");
    expect(headers.get("content-type")).toBe("application/activity+json");
    expect(JSON.parse(body)).toMatchObject({ type: "Create", actor: `${ORIGIN}/users/${username}` });
    const sig = parseSignatureHeader(headers.get("signature"));
    expect(sig.keyId).toBe(`${ORIGIN}/users/${username}#main-key`);
    expect(sig.headers).toEqual(expect.arrayContaining(["(request-target)", "host", "date", "digest"]));
    const strings = await checkSignedRequest({ method: "POST", target: path, headers, body: new TextEncoder().encode(body) }, sig);
    const key = await env.DB.prepare("SELECT public_key_pem AS pem FROM accounts WHERE id = ?").bind(userId.padStart(20, "0")).first<{ pem: string }>();
    expect(await verifyWithKey(strings, sig, key!.pem)).toBe(true);
    // A tampered body no longer matches its digest.
    await expect(checkSignedRequest({ method: "POST", target: path, headers, body: new TextEncoder().encode(`${body} `) }, sig)).rejects.toThrow(/Digest/);
  });

  it("sends an activity in packs of inboxes, one queue message per pack; a failed inbox is retried on its own", async () => {
    const u = await makeUser();
    const hosts = Array.from({ length: DELIVERY_PACK * 2 + 3 }, (_, i) => `p${i}.example`);
    for (const [i, h] of hosts.entries()) await addFollow((await remoteAccount(`fan${i}`, h)).id, u.id);
    await u.api.post("/api/v1/statuses", { status: "to many hosts" });
    await runQueuedJobs();
    const batches = (env.DELIVERY.sendBatch as unknown as { mock: { calls: [MessageSendRequest<DeliveryMessage>[]][] } }).mock.calls;
    const packs = batches.flatMap(([ms]) => ms.map((m) => m.body));
    expect(packs.map((p) => p.inboxes?.length)).toEqual([DELIVERY_PACK, DELIVERY_PACK, 3]);
    expect(new Set(packs.flatMap((p) => p.inboxes ?? []))).toEqual(new Set(hosts.map((h) => `https://${h}/inbox`)));
    queued.deliveries.length = 0;

    // The consumer sends one pack to each of its inboxes; the one that fails goes back alone with attempt 1.
    const last = packs.at(-1)!;
    const [ok1, bad, ok2] = last.inboxes!.map((i) => new URL(i).host);
    for (const h of [ok1, ok2]) fetchMock.get(`https://${h}`).intercept({ path: "/inbox", method: "POST" }).reply(202, "");
    fetchMock.get(`https://${bad}`).intercept({ path: "/inbox", method: "POST" }).reply(503, "busy");
    const out = await deliverNow(last);
    expect(out.acked).toHaveLength(1);
    expect(queued.deliveries).toEqual([{ outboxId: last.outboxId, inbox: `https://${bad}/inbox`, attempt: 1, origin: last.origin }]);
  });

  it("gives a pack one deadline: a host that does not answer in time is retried, the others are delivered", async () => {
    const u = await makeUser();
    for (const h of ["fast.example", "stuck.example"])
      await addFollow((await remoteAccount(`d${h.length}${Math.random().toString(36).slice(2, 6)}`, h)).id, u.id);
    await u.api.post("/api/v1/statuses", { status: "one slow host" });
    await runQueuedJobs();
    // Captured one per inbox; the consumer gets them as one pack.
    const [a, b] = queued.deliveries.splice(0);
    expect(new Set([a?.inbox, b?.inbox])).toEqual(new Set(["https://fast.example/inbox", "https://stuck.example/inbox"]));
    const pack: DeliveryMessage = { outboxId: a!.outboxId, inboxes: [a!.inbox!, b!.inbox!], attempt: 0, origin: a!.origin };
    fetchMock.get("https://fast.example").intercept({ path: "/inbox", method: "POST" }).reply(202, "");
    fetchMock.get("https://stuck.example").intercept({ path: "/inbox", method: "POST" }).reply(202, "").delay(5_000);
    const out = deliveryBatch([pack]);
    const t0 = Date.now();
    await handleDeliveries(out.b, env, 300);
    expect(Date.now() - t0).toBeLessThan(4_000);
    expect(out.acked).toHaveLength(1);
    expect(queued.deliveries).toEqual([{ outboxId: pack.outboxId, inbox: "https://stuck.example/inbox", attempt: 1, origin: pack.origin }]);
  });

  it("retries a 5xx with attempt + 1 and a delay, and clears the host's failure record once it answers 2xx", async () => {
    const { msg } = await pendingDelivery();
    await env.DB.prepare("INSERT INTO delivery_failures (host, day) VALUES ('a.example', '2001-01-01')").run();
    peer().reply(500, "oops");
    const first = await deliverNow(msg);
    expect(first.acked).toHaveLength(1);
    expect(queued.deliveries).toEqual([{ ...msg, attempt: 1 }]);
    const delay = sendCalls().at(-1)![1]!.delaySeconds!;
    expect(delay).toBeGreaterThanOrEqual(16); // 1⁴ + 15
    expect(delay).toBeLessThan(60);

    const retry = queued.deliveries.shift()!;
    peer().reply(503, "still down");
    await deliverNow(retry);
    const second = queued.deliveries.shift()!;
    expect(second.attempt).toBe(2);
    expect(sendCalls().at(-1)![1]!.delaySeconds!).toBeGreaterThanOrEqual(2 ** 4 + 15);

    peer().reply(202, "");
    await deliverNow(second);
    expect(queued.deliveries).toEqual([]);
    expect(await failures()).toEqual([]);
  });

  it("retries 401, 408 and 429 (honouring Retry-After) but drops other 4xx without a retry or failure mark", async () => {
    const { msg } = await pendingDelivery();
    peer().reply(429, "slow down", { headers: { "retry-after": "120" } });
    await deliverNow(msg);
    expect(queued.deliveries.shift()).toMatchObject({ attempt: 1 });
    expect(sendCalls().at(-1)![1]).toEqual({ delaySeconds: 120 });

    peer().reply(401, "");
    await deliverNow(msg);
    expect(queued.deliveries.shift()).toMatchObject({ attempt: 1 });

    for (const status of [400, 403, 404, 410, 422]) {
      peer().reply(status, "");
      const out = await deliverNow(msg);
      expect(out.acked).toHaveLength(1);
      expect(out.retried).toHaveLength(0);
    }
    expect(queued.deliveries).toEqual([]);
    expect(await failures()).toEqual([]);
  });

  it("records a failure day after the 16th failed attempt, marks the host unavailable on the 7th day, and skips it", async () => {
    const { msg } = await pendingDelivery();
    peer().reply(500, "");
    await deliverNow({ ...msg, attempt: 15 });
    expect(queued.deliveries).toEqual([]); // no 17th attempt
    const today = new Date().toISOString().slice(0, 10);
    expect(await failures()).toEqual([today]);
    expect(await unavailable()).toBe(false);

    for (let d = 1; d <= 6; d++) {
      await env.DB.prepare("INSERT INTO delivery_failures (host, day) VALUES ('a.example', ?)").bind(`2000-01-0${d}`).run();
    }
    await env.DB.prepare("DELETE FROM delivery_failures WHERE host = 'a.example' AND day = ?").bind(today).run();
    peer().reply(502, "");
    await deliverNow({ ...msg, attempt: 15 });
    expect(await unavailable()).toBe(true);

    // New activities are no longer queued for that host.
    const { msg: none } = await pendingDelivery().catch(() => ({ msg: null }));
    expect(none).toBeNull();
    expect(queued.deliveries).toEqual([]);
  });

  it("brings an unavailable host back after a successful delivery", async () => {
    const { msg } = await pendingDelivery();
    await env.DB.prepare("INSERT INTO unavailable_domains (domain, created_at) VALUES ('a.example', 0)").run();
    await env.DB.prepare("INSERT INTO delivery_failures (host, day) VALUES ('a.example', '2000-01-01')").run();
    peer().reply(200, "");
    await deliverNow(msg);
    expect(await unavailable()).toBe(false);
    expect(await failures()).toEqual([]);
  });

  it("drops a message whose outbox row is gone without fetching", async () => {
    const spy = vi.spyOn(globalThis, "fetch");
    const out = await deliverNow({ outboxId: "123", inbox: "https://a.example/inbox", attempt: 0, origin: ORIGIN });
    expect(out.acked).toHaveLength(1);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});
