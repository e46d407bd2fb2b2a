// Counting wrappers shared by the bench Worker entries (worker-entry.js, soak-entry.js, day-entry.js; never deployed):
// a queue batch whose messages report each ack and retry, and a queue binding that reports each message sent. Plain
// ES module, bundled with the entry that imports it.

/**
 * The batch as Tern's consumer sees it, with `onAck(m)` / `onRetry(m)` called (m: the original message) before each
 * message is acked or retried; ackAll / retryAll go through the same messages, so every outcome is reported once.
 */
export function countedBatch(batch, { onAck = () => {}, onRetry = () => {} }) {
  const messages = batch.messages.map((m) => ({
    id: m.id,
    timestamp: m.timestamp,
    body: m.body,
    attempts: m.attempts,
    ack() {
      onAck(m);
      m.ack();
    },
    retry(o) {
      onRetry(m);
      m.retry(o);
    },
  }));
  return batchOf(batch.queue, messages);
}

/** A queue batch of these messages (each with ack and retry): ackAll and retryAll go through each message. */
export function batchOf(queue, messages) {
  return {
    queue,
    messages,
    ackAll: () => {
      for (const m of messages) m.ack();
    },
    retryAll: (o) => {
      for (const m of messages) m.retry(o);
    },
  };
}

/** The queue binding (send / sendBatch), with `onSend(body, opts)` called for each message given to it. */
export function countingQueue(binding, onSend) {
  if (!binding) return binding;
  return {
    send(body, opts) {
      onSend(body, opts);
      return binding.send(body, opts);
    },
    sendBatch(messages, opts) {
      for (const m of messages) onSend(m.body, m.delaySeconds ? m : opts);
      return binding.sendBatch(messages, opts);
    },
  };
}
