// Shared by the DELIVERY consumer tests: a queued delivery to a simulated peer on a.example, and a MessageBatch-like
// object that records what the consumer did with each message.
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { expect } from "vitest";
import { handleDeliveries, type DeliveryMessage } from "../../src/federation/outbound/delivery";
import { makeUser } from "./helpers";
import { addFollow, remoteAccount } from "./federation-outbound-fixtures";
import { queued, runQueuedJobs } from "./queues";

export function deliveryBatch(bodies: DeliveryMessage[]) {
  const acked: DeliveryMessage[] = [];
  const retried: DeliveryMessage[] = [];
  const messages = bodies.map((body, i) => ({
    id: String(i),
    timestamp: new Date(),
    attempts: 1,
    body,
    ack: () => acked.push(body),
    retry: () => retried.push(body),
  }));
  return { b: { queue: "tern-delivery", messages, ackAll() {}, retryAll() {} } as unknown as MessageBatch<DeliveryMessage>, acked, retried };
}

/** A local user with one remote follower on a.example, who has just posted: one delivery queued. */
export async function pendingDelivery(): Promise<{ msg: DeliveryMessage; userId: string; username: string }> {
  const u = await makeUser();
  const r = await remoteAccount(`f${Math.random().toString(36).slice(2, 8)}`, "a.example");
  await addFollow(r.id, u.id);
  await u.api.post("/api/v1/statuses", { status: "deliver me" });
  await runQueuedJobs();
  expect(queued.deliveries).toHaveLength(1);
  return { msg: queued.deliveries.shift()!, userId: u.id, username: u.username };
}

/** Runs the DELIVERY consumer on one message. */
export async function deliverNow(m: DeliveryMessage) {
  const out = deliveryBatch([m]);
  await handleDeliveries(out.b, env);
  return out;
}

export const peer = () => fetchMock.get("https://a.example").intercept({ path: "/inbox", method: "POST" });
export const sendCalls = () => (env.DELIVERY.send as unknown as { mock: { calls: [DeliveryMessage, { delaySeconds?: number }?][] } }).mock.calls;
