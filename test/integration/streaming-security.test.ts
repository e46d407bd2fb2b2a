// Streaming rows of the security issue (docs/security-coverage.md, F5):
// - F5: sizes that meet a runtime limit are checked in bytes: a long non-Latin hashtag is a clear error on every path
//   (socket message, socket query, event stream), and a socket's attachment stays within the runtime's 2,048 bytes.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { userHub } from "../../src/streaming/protocol";
import { runtimeSize } from "../../src/streaming/streams";
import { makeUser } from "./helpers";
import { insertStatus } from "./feeds-fixtures";
import { fanOutAndPublish, itStreams, payloadOf, sse, type StreamMessage, type WsClient, ws } from "./streaming-fixtures";

const pad = (id: string) => id.padStart(20, "0");

async function addTag(statusId: string, name: string) {
  await env.DB.prepare("INSERT OR IGNORE INTO tags (id, name, display_name, created_at) VALUES (?, ?, ?, ?)").bind(pad(statusId), name, name, Date.now()).run();
  await env.DB.prepare("INSERT INTO status_tags (status_id, tag_id) SELECT ?, id FROM tags WHERE name = ?").bind(pad(statusId), name).run();
}

/** Sends a subscribe to an unknown stream and returns every message before its answer. */
async function untilBarrier(c: WsClient): Promise<StreamMessage[]> {
  c.send({ type: "subscribe", stream: "barrier" });
  const out: StreamMessage[] = [];
  for (;;) {
    const m = await c.next();
    if (m.error === "Unknown stream type") return out;
    out.push(m);
  }
}

describe("F5: sizes are checked in bytes", () => {
  const long = "日".repeat(300);

  itStreams("a long non-Latin hashtag is a clear error on a socket message, in the socket's query and on the event stream", async () => {
    const u = await makeUser();
    const c = await ws({ token: u.token });
    c.subscribe("hashtag", { tag: long });
    c.subscribe("hashtag:local", { tag: long });
    expect(await untilBarrier(c)).toEqual([
      { error: "Tag name too long", status: 400 },
      { error: "Tag name too long", status: 400 },
    ]);
    // The socket still works.
    await c.sub("hashtag", { tag: "日本" });

    for (const auth of [{ token: u.token }, null]) {
      const q = await ws(auth, { stream: "hashtag", tag: long });
      expect(await q.next()).toEqual({ error: "Tag name too long", status: 400 });
    }
    for (const user of [u, undefined]) {
      const res = (await sse(`hashtag?tag=${encodeURIComponent(long)}`, user)) as Response;
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "Tag name too long" });
    }
  });

  itStreams("long non-Latin tags fill a socket by bytes: refused with a clear error, the attachment within the runtime's limit", async () => {
    const u = await makeUser();
    const c = await ws({ token: u.token });
    // Valid tags of 100 characters (3 bytes each in UTF-8, 2 in the attachment's serialisation).
    const tags = [..."日月火水木金土本語字"].map((ch) => ch.repeat(100));
    for (const tag of tags) c.subscribe("hashtag", { tag });
    const answers = await untilBarrier(c);
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) expect(a).toEqual({ error: "Too many subscriptions", status: 400 });
    const stub = env.STREAMING.get(env.STREAMING.idFromName(userHub(u.id)));
    const sizes = await runInDurableObject(stub, (_i: unknown, ctx: DurableObjectState) =>
      ctx.getWebSockets().map((w) => runtimeSize(JSON.stringify(w.deserializeAttachment()))),
    );
    expect(sizes.length).toBe(1);
    expect(sizes[0]).toBeLessThanOrEqual(2048);
    // What was accepted works: the first tag's statuses arrive.
    const author = await makeUser();
    const id = await insertStatus(author);
    await addTag(id, tags[0]!);
    await fanOutAndPublish(id);
    const m = await c.next();
    expect([m.stream, payloadOf(m).id]).toEqual([["hashtag", tags[0]], id]);
  });
});
