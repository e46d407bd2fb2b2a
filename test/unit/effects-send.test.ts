// The one road effects leave by (src/effects/send.ts): what runs now goes as one packed message, each delayed group
// with its delay, and the failed effects of a message go back as one pack carrying their attempt count.
import { describe, expect, it } from "vitest";
import { Effects } from "../../src/effects/collector";
import { type EffectsOut, sendEffects, sendRetry } from "../../src/effects/send";
import type { JobMessage } from "../../src/effects/types";

function fakeQueue() {
  const sent: { body: JobMessage; delaySeconds?: number }[] = [];
  const queue = {
    async send(body: JobMessage, opts?: { delaySeconds?: number }) {
      sent.push({ body, ...(opts?.delaySeconds ? { delaySeconds: opts.delaySeconds } : {}) });
    },
    async sendBatch(batch: { body: JobMessage; delaySeconds?: number }[]) {
      sent.push(...batch);
    },
  };
  // D1 is only written when the queue refuses a send (test/integration/effects-durable.test.ts): never here.
  const out: EffectsOut = { JOBS: queue as unknown as Queue<JobMessage>, DB: null as unknown as D1Database };
  return { queue: out, sent };
}

describe("sendEffects and sendRetry", () => {
  it("sends what runs now in one pack, then each delayed group with its delay, and empties the collector", async () => {
    const { queue, sent } = fakeQueue();
    const fx = new Effects("https://tern.example");
    fx.add({ type: "fanout", statusId: "1" }, { type: "notify", notificationId: "2" });
    fx.later(120, { type: "push", subscriptionId: "3", notificationId: "2", attempt: 1 });
    fx.later(180, { type: "federate", origin: fx.origin, action: { kind: "update_poll", statusId: "1", delayed: true } });
    await sendEffects(queue, fx);
    expect(sent).toEqual([
      {
        body: {
          type: "effects",
          origin: "https://tern.example",
          effects: [
            { type: "fanout", statusId: "1" },
            { type: "notify", notificationId: "2" },
          ],
        },
      },
      {
        body: { type: "effects", origin: "https://tern.example", effects: [{ type: "push", subscriptionId: "3", notificationId: "2", attempt: 1 }] },
        delaySeconds: 120,
      },
      {
        body: {
          type: "effects",
          origin: "https://tern.example",
          effects: [{ type: "federate", origin: "https://tern.example", action: { kind: "update_poll", statusId: "1", delayed: true } }],
        },
        delaySeconds: 180,
      },
    ]);
    sent.length = 0;
    await sendEffects(queue, fx);
    expect(sent).toEqual([]);
  });

  it("sends failed effects back as one pack with their next attempt, after the delay", async () => {
    const { queue, sent } = fakeQueue();
    await sendRetry(
      queue,
      "https://tern.example",
      [
        { type: "fanout", statusId: "1" },
        { type: "delete_media", keys: ["a"] },
      ],
      3,
      60,
    );
    expect(sent).toEqual([
      {
        body: {
          type: "effects",
          origin: "https://tern.example",
          attempt: 3,
          effects: [
            { type: "fanout", statusId: "1" },
            { type: "delete_media", keys: ["a"] },
          ],
        },
        delaySeconds: 60,
      },
    ]);
  });
});
