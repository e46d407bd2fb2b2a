// Hub bookkeeping that only shows at scale or after hibernation, found by bench/streaming.mjs (1,000 sockets):
// - a hub that comes back from hibernation has none of its in-memory state (its name among it), only its sockets'
//   attachments: after the hubs had hibernated, closing their sockets left the router listing the accounts as connected.
//   Here the wake is simulated by dropping the object's in-memory hub, which is what eviction does (the sockets and
//   their attachments stay with the runtime);
// - an `anon` hub holds up to 2,000 signed-out sockets, and its per-minute limit on subscription changes refused the
//   121st socket's `public:local` (1,000 signed-out sockets spread over 8 hubs: ~6% got no events).
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { MAX_CHANGES_PER_MINUTE } from "../../src/streaming/hub";
import { type Session, userHub } from "../../src/streaming/protocol";
import { routerStub } from "../../src/streaming/router";
import { hubStub } from "../../src/streaming/streaming-do";
import { makeUser } from "./helpers";
import { insertStatus } from "./feeds-fixtures";
import { fanOutAndPublish, itStreams, payloadOf, ws, WsClient } from "./streaming-fixtures";

/** Forgets the hub's in-memory state, as an eviction from memory (hibernation) does. */
async function hibernate(accountId: string) {
  const stub = env.STREAMING.get(env.STREAMING.idFromName(userHub(accountId)));
  await runInDurableObject(stub, (instance: unknown) => {
    (instance as { hubImpl: unknown }).hubImpl = null;
  });
}

/** A signed-out socket on one given anon hub (the Worker picks a hub at random; this is what it hands that hub). */
async function anonSocket(hub: string, stream: string): Promise<WsClient> {
  const session: Session = { hub, acct: null, tok: null, sc: 0 };
  const res = await hubStub(env, hub).fetch(
    new Request(`https://streaming.internal/ws?stream=${encodeURIComponent(stream)}`, {
      headers: { upgrade: "websocket", "x-tern-session": JSON.stringify(session) },
    }),
  );
  if (res.status !== 101 || !res.webSocket) throw new Error(`not upgraded: ${res.status} ${await res.text()}`);
  return new WsClient(res.webSocket, res);
}

describe("streaming hubs after hibernation", () => {
  itStreams("a woken hub whose last socket closes tells the router it has no connections left", async () => {
    const a = await makeUser();
    const router = routerStub(env);
    const c = await ws({ token: a.token }, { stream: "user" });
    expect((await router.routerListening()).online).toContain(a.id);
    await hibernate(a.id);
    // The close completes only after the hub has told the router (hub.ts onClose).
    await c.close();
    expect((await router.routerListening()).online).not.toContain(a.id);
  });

  itStreams("a woken hub still takes subscriptions and answers pings on the sockets it kept", async () => {
    const a = await makeUser();
    const c = await ws({ token: a.token }, { stream: "user" });
    await hibernate(a.id);
    c.send("ping");
    expect(await c.next()).toBe("pong");
    await c.sub("public:local");
    expect((await routerStub(env).routerListening()).shared).toContain("public:local");
  });
});

describe("streaming hubs with many connections", () => {
  itStreams("a burst of signed-out sockets on one anon hub all get their stream, beyond the change limit", async () => {
    const n = MAX_CHANGES_PER_MINUTE + 10;
    const sockets: WsClient[] = [];
    for (let i = 0; i < n; i++) sockets.push(await anonSocket("anon:0", "public:local"));
    // An unknown stream is answered in order, after the connection's own subscription: a refusal would come first.
    for (const c of sockets) await c.barrier();
    const author = await makeUser();
    const id = await insertStatus(author);
    await fanOutAndPublish(id);
    const last = sockets[n - 1]!;
    const m = await last.next();
    expect([m.stream, m.event, payloadOf(m).id]).toEqual([["public:local"], "update", id]);
  });
});
