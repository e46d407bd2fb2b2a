// No lost update after a subscribe: an event published after the server received a `subscribe` message (or accepted
// the connection, for a stream named in the query and for event streams) reaches that socket. Each try subscribes and
// posts at once (no wait between them), 50 times per stream kind, over the WebSocket and over server-sent events.
// Whether an update was lost is seen without timers: the publish returns once every listening hub took the event,
// and what a hub sends on a socket comes in order, so a barrier sent afterwards is answered after the update if the
// update came at all.
import { env } from "cloudflare:test";
import { describe, expect } from "vitest";
import { makeUser, type TestUser } from "./helpers";
import { follow, insertStatus } from "./feeds-fixtures";
import { fanOutAndPublish, itStreams, payloadOf, sse, SseClient, ws, type WsClient } from "./streaming-fixtures";

const TRIES = 50;
const pad = (id: string) => id.padStart(20, "0");

async function addTag(statusId: string, name: string) {
  await env.DB.prepare("INSERT OR IGNORE INTO tags (id, name, display_name, created_at) VALUES (?, ?, ?, ?)").bind(pad(statusId), name, name, Date.now()).run();
  await env.DB.prepare("INSERT INTO status_tags (status_id, tag_id) SELECT ?, id FROM tags WHERE name = ?").bind(pad(statusId), name).run();
}

type Kind = "public" | "public:local" | "hashtag" | "list" | "user";
const KINDS: Kind[] = ["public", "public:local", "hashtag", "list", "user"];

/** A viewer for one kind, and the author whose statuses reach that viewer's stream of that kind. */
async function setup(kind: Kind): Promise<{ viewer: TestUser; author: TestUser; list?: string }> {
  const [viewer, author] = await Promise.all([makeUser(), makeUser()]);
  if (kind === "user" || kind === "list") await follow(viewer, author);
  if (kind !== "list") return { viewer, author };
  const list = (await viewer.api.post("/api/v1/lists", { title: "race" })).body.id as string;
  expect((await viewer.api.post(`/api/v1/lists/${list}/accounts`, { account_ids: [author.id] })).status).toBe(200);
  return { viewer, author, list };
}

/** The subscription parameters of try `i` (a new tag every try: a key nobody listened to before). */
function params(kind: Kind, i: number, list?: string): Record<string, string> {
  if (kind === "hashtag") return { tag: `race${i}` };
  if (kind === "list") return { list: list! };
  return {};
}

/** Posts a status of `author` that belongs on the stream of try `i`, and publishes it as the effects consumer does. */
async function postFor(kind: Kind, author: TestUser, i: number): Promise<string> {
  const id = await insertStatus(author);
  if (kind === "hashtag") await addTag(id, `race${i}`);
  await fanOutAndPublish(id);
  return id;
}

/** The stream array an update of this try carries. */
function streamOf(kind: Kind, p: Record<string, string>): string[] {
  if (kind === "hashtag") return ["hashtag", p.tag!];
  if (kind === "list") return ["list", p.list!];
  return [kind];
}

/** Whether the update of `id` came on `c` before the answer to a barrier sent now. */
async function arrived(c: WsClient, id: string, stream: string[]): Promise<boolean> {
  c.send({ type: "subscribe", stream: "barrier" });
  let seen = false;
  for (;;) {
    const m = await c.next();
    if (m.error === "Unknown stream type") return seen;
    if (m.event === "update" && payloadOf(m).id === id) {
      expect(m.stream).toEqual(stream);
      seen = true;
    }
  }
}

describe("no lost update after a subscribe (WebSocket)", () => {
  for (const kind of KINDS) {
    itStreams(`${kind}: subscribe, then post at once, ${TRIES} times: every update arrives`, async () => {
      const { viewer, author, list } = await setup(kind);
      const c = await ws({ token: viewer.token });
      const lost: number[] = [];
      for (let i = 0; i < TRIES; i++) {
        const p = params(kind, i, list);
        c.subscribe(kind, p);
        const id = await postFor(kind, author, i);
        if (!(await arrived(c, id, streamOf(kind, p)))) lost.push(i);
        // Back to no subscription (the router hears of it before the barrier is answered), for the next try.
        c.unsubscribe(kind, p);
        await c.barrier();
      }
      expect(lost.length, `${kind}: ${lost.length} of ${TRIES} updates lost`).toBe(0);
    });
  }

  itStreams("a stream named in the query: connect, then post at once: every update arrives", async () => {
    const lost: string[] = [];
    for (const kind of KINDS) {
      const { viewer, author, list } = await setup(kind);
      for (let i = 0; i < 10; i++) {
        const p = params(kind, i, list);
        const c = await ws({ token: viewer.token }, { stream: kind, ...p });
        const id = await postFor(kind, author, i);
        if (!(await arrived(c, id, streamOf(kind, p)))) lost.push(`${kind} ${i}`);
        await c.close();
      }
    }
    expect(lost).toEqual([]);
  });
});

const ssePath = (kind: Kind, p: Record<string, string>) =>
  kind === "public:local" ? "public/local" : kind === "hashtag" ? `hashtag?tag=${p.tag}` : kind === "list" ? `list?list=${p.list}` : kind;

/** Whether the update of `id` came on the event stream before that of `marker`, a status published after it. */
async function sseArrived(s: SseClient, id: string, marker: string): Promise<boolean> {
  let seen = false;
  for (;;) {
    const e = await s.nextEvent();
    if (e.event !== "update") continue;
    const got = JSON.parse(e.data).id;
    if (got === marker) return seen;
    if (got === id) seen = true;
  }
}

describe("no lost update after connecting (server-sent events)", () => {
  for (const kind of KINDS) {
    itStreams(`${kind}: connect, then post at once, ${TRIES} times: every update arrives`, async () => {
      const { viewer, author, list } = await setup(kind);
      const lost: number[] = [];
      for (let i = 0; i < TRIES; i++) {
        const p = params(kind, i, list);
        const s = await sse(ssePath(kind, p), viewer);
        if (!(s instanceof SseClient)) throw new Error(`no event stream: ${s.status}`);
        const id = await postFor(kind, author, i);
        const marker = await postFor(kind, author, i);
        if (!(await sseArrived(s, id, marker))) lost.push(i);
        await s.close();
      }
      expect(lost.length, `${kind}: ${lost.length} of ${TRIES} updates lost`).toBe(0);
    });
  }
});
