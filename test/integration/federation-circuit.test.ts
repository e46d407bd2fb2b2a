// The per-host circuit breaker of the DELIVERY consumer (security §2.9, §3.3 item 6): 10 consecutive failures open
// it for 60 s, during which messages to the host are re-queued for the rest of the cool-off without a request and
// without spending an attempt; a success after the cool-off closes it.
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { queued } from "./queues";
import { deliverNow, pendingDelivery, peer, sendCalls } from "./federation-delivery-fixtures";

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
afterEach(() => fetchMock.assertNoPendingInterceptors());

const circuit = () =>
  env.DB.prepare("SELECT consecutive_failures AS n, open_until AS until FROM delivery_circuits WHERE host = 'a.example'").first<{
    n: number;
    until: number | null;
  }>();

describe("delivery circuit breaker", () => {
  it("opens after 10 consecutive failures, holds messages without a request, and closes on a later success", async () => {
    const msg = (await pendingDelivery()).msg;
    for (let i = 0; i < 9; i++) {
      peer().reply(500, "down");
      await deliverNow(msg);
    }
    expect(await circuit()).toEqual({ n: 9, until: null });
    queued.deliveries.length = 0;

    const before = Date.now();
    peer().reply(503, "down");
    await deliverNow(msg);
    const open = await circuit();
    expect(open!.n).toBe(10);
    expect(open!.until).toBeGreaterThanOrEqual(before + 60_000);
    expect(open!.until).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(queued.deliveries).toEqual([{ ...msg, attempt: 1 }]); // the 10th failure is still retried normally
    queued.deliveries.length = 0;

    // The 11th message: no interceptor is registered, so any request would fail the delivery and count an 11th
    // failure; instead it is acked and re-queued for the rest of the cool-off with the same attempt.
    const held = { ...msg, attempt: 3 };
    const out = await deliverNow(held);
    expect(out.acked).toEqual([held]);
    expect(out.retried).toEqual([]);
    expect(queued.deliveries).toEqual([held]);
    const delay = sendCalls().at(-1)![1]!.delaySeconds!;
    expect(delay).toBeGreaterThanOrEqual(55);
    expect(delay).toBeLessThanOrEqual(60);
    expect((await circuit())!.n).toBe(10);
    queued.deliveries.length = 0;

    // Once the cool-off has passed, the next delivery is attempted; its success closes the circuit.
    await env.DB.prepare("UPDATE delivery_circuits SET open_until = ? WHERE host = 'a.example'")
      .bind(Date.now() - 1000)
      .run();
    peer().reply(202, "");
    const ok = await deliverNow(held);
    expect(ok.acked).toEqual([held]);
    expect(queued.deliveries).toEqual([]);
    expect(await circuit()).toBeNull();
  });

  it("re-opens at once when the first delivery after the cool-off fails again", async () => {
    const msg = (await pendingDelivery()).msg;
    await env.DB.prepare("INSERT INTO delivery_circuits (host, consecutive_failures, open_until) VALUES ('a.example', 10, ?)")
      .bind(Date.now() - 1000)
      .run();
    peer().reply(500, "");
    await deliverNow(msg);
    const c = await circuit();
    expect(c!.n).toBe(11);
    expect(c!.until).toBeGreaterThan(Date.now() + 55_000);
  });

  it("does not count unsalvageable responses, and a success resets the count before the threshold", async () => {
    const msg = (await pendingDelivery()).msg;
    peer().reply(500, "");
    await deliverNow(msg);
    expect((await circuit())!.n).toBe(1);
    peer().reply(404, "");
    await deliverNow(msg);
    expect((await circuit())!.n).toBe(1);
    peer().reply(200, "");
    await deliverNow(msg);
    expect(await circuit()).toBeNull();
  });

  it("only holds messages for the failing host", async () => {
    const msg = (await pendingDelivery()).msg;
    await env.DB.prepare("INSERT INTO delivery_circuits (host, consecutive_failures, open_until) VALUES ('b.example', 10, ?)")
      .bind(Date.now() + 60_000)
      .run();
    peer().reply(202, "");
    const out = await deliverNow(msg);
    expect(out.acked).toEqual([msg]);
    expect(queued.deliveries).toEqual([]);
  });
});
