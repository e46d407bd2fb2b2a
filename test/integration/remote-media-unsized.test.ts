// A remote video or audio file whose server sends no Content-Length (a chunked body) is still cached (issue 32 point 3):
// it goes into R2 as a multipart upload, one 5 MiB part in memory at a time (src/media/remote.ts putInParts), and is
// described from its headers read back; a body that breaks off stores nothing and leaves no upload behind.
import { env } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { anon } from "./helpers";
import { create, installFetchMock, note, postInbox, remoteActor, runJobs, sql } from "./federation-inbox-fixtures";
import { mp4 } from "./media-fixtures";

beforeAll(() => installFetchMock());
afterEach(() => vi.restoreAllMocks());

const ON = { ...env, REMOTE_MEDIA_CACHE: "true", REMOTE_MEDIA_TIMEOUT_MS: "2000" } as typeof env;

/** files.example streams `bytes` in 64 KB chunks without a length, or breaks off after `breakAt` bytes. */
function chunkedServer(bytes: Uint8Array, breakAt?: number) {
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.host !== "files.example") return real(input, init);
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (breakAt !== undefined && at >= breakAt) return c.error(new Error("connection reset"));
        if (at >= bytes.length) return c.close();
        c.enqueue(bytes.slice(at, at + 65_536));
        at += 65_536;
      },
    });
    return new Response(body, { headers: { "content-type": "video/mp4" } });
  });
}

let n = 0;
async function videoStatus() {
  const actor = await remoteActor(`u${++n}`, "chunked.example");
  const doc = note(actor, { attachment: [{ type: "Document", mediaType: "video/mp4", url: `https://files.example/v${n}.mp4` }] });
  expect((await postInbox(actor, create(actor, doc))).status).toBe(202);
  await runJobs(ON);
  const [row] = await sql("SELECT ltrim(id, '0') AS id FROM statuses WHERE uri = ?", doc.id);
  return (await anon.get(`/api/v1/statuses/${row!.id}`)).body.media_attachments[0];
}

describe("a remote video without a Content-Length", () => {
  it("is stored in parts and described from its headers", async () => {
    const video = mp4(640, 360, 4, { mdatBytes: 11 * 1024 * 1024 });
    chunkedServer(video);
    const m = await videoStatus();
    expect(m.type).toBe("video");
    expect(m.url).toMatch(/\/media\/media_attachments\/.*\/original\.mp4$/);
    expect(m.meta.original).toMatchObject({ width: 640, height: 360 });
    const key = new URL(m.url).pathname.replace(/^\/media\//, "");
    const stored = await env.MEDIA.get(key);
    expect(stored?.size).toBe(video.length);
    const digest = async (b: ArrayBuffer | Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", b)).join(",");
    expect(await digest(await stored!.arrayBuffer())).toBe(await digest(video));
  });

  it("a body that breaks off stores nothing; the remote URL stays", async () => {
    const video = mp4(640, 360, 4, { mdatBytes: 8 * 1024 * 1024 });
    chunkedServer(video, 6 * 1024 * 1024);
    const m = await videoStatus();
    expect(m.url).toBe(m.remote_url);
    expect((await env.MEDIA.list({ prefix: `media_attachments/${m.id}/` })).objects).toEqual([]);
  });
});
