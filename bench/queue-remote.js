// Bench only (`node bench/day.mjs --queues-apart`): Tern's queues run by ANOTHER workerd process (bench/services-host.mjs),
// so the measured workerd's CPU leaves out the local queue simulator (Miniflare's broker, which otherwise runs in the
// same process as the Worker), as on Cloudflare, where Queues is a service of its own. Two halves:
// - producing: a queue binding (send, sendBatch) that sends each call as one HTTP request with JSON to the host, whose
//   Tern sends it on its own binding (`serveQueueSend`), so the host's broker holds the message;
// - consuming: the host's relay Worker (RELAY_SCRIPT) is the queues' consumer; it posts each batch it is given to the
//   measured Worker (`serveRelayedBatch`, which runs the entry's queue handler on a batch of the same shape) and applies
//   the acks and retries that come back to the real messages.
// Message bodies are plain data (JSON), as Tern's are.

import { batchOf } from "./entry-counters.js";

export const SEND_PATH = "/__bench/queue-send";
export const BATCH_PATH = "/__bench/queue-batch";

/** A queue binding named `binding` (e.g. "JOBS") whose messages go to the host behind `host` (a Fetcher). */
export function remoteQueue(host, binding) {
  const call = async (op, payload) => {
    const res = await host.fetch(`http://queues${SEND_PATH}`, { method: "POST", body: JSON.stringify({ binding, op, ...payload }) });
    const out = await res.json();
    if (out.error) throw new Error(out.error);
  };
  return {
    send: (body, opts) => call("send", { body, opts }),
    sendBatch: (messages, opts) => call("sendBatch", { messages, opts }),
  };
}

/** The host's side of remoteQueue: the call, on its own binding. */
export async function serveQueueSend(request, env) {
  const b = await request.json();
  try {
    const q = env[b.binding];
    if (b.op === "send") await q.send(b.body, b.opts);
    else await q.sendBatch(b.messages, b.opts);
    return Response.json({ ok: true });
  } catch (e) {
    return Response.json({ error: e instanceof Error ? e.message : String(e) });
  }
}

/**
 * The measured Worker's side: runs `handler(batch, env, ctx)` (the entry's queue handler) on the relayed batch and
 * answers what it did to each message: { ack: [ids], retry: [{ id, delaySeconds }] } (an error: the whole batch retried).
 */
export async function serveRelayedBatch(request, env, ctx, handler) {
  const b = await request.json();
  const outcome = new Map(); // id → { ack } or { retry: opts }: the last call for the message wins
  const messages = b.messages.map((m) => ({
    id: m.id,
    timestamp: new Date(m.timestamp),
    body: m.body,
    attempts: m.attempts,
    ack: () => outcome.set(m.id, { ack: true }),
    retry: (opts) => outcome.set(m.id, { retry: opts ?? {} }),
  }));
  try {
    await handler(batchOf(b.queue, messages), env, ctx);
  } catch (e) {
    return Response.json({ error: e instanceof Error ? e.message : String(e) });
  }
  const ack = [];
  const retry = [];
  for (const [id, o] of outcome) {
    if (o.ack) ack.push(id);
    else retry.push({ id, ...o.retry });
  }
  return Response.json({ ack, retry });
}

/** The host's relay Worker: consumes the queues and hands each batch to the measured Worker (service binding MAIN). */
export const RELAY_SCRIPT = `
export default {
  async queue(batch, env) {
    const messages = batch.messages.map((m) => ({ id: m.id, timestamp: m.timestamp.getTime(), body: m.body, attempts: m.attempts }));
    const res = await env.MAIN.fetch("http://main${BATCH_PATH}", { method: "POST", body: JSON.stringify({ queue: batch.queue, messages }) });
    const out = await res.json();
    if (out.error) throw new Error(out.error);
    const byId = new Map(batch.messages.map((m) => [m.id, m]));
    for (const id of out.ack) byId.get(id)?.ack();
    for (const { id, delaySeconds } of out.retry) byId.get(id)?.retry(delaySeconds === undefined ? undefined : { delaySeconds });
  },
};`;
