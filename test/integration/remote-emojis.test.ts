// Remote custom emojis cached in R2 (issue 32 point 3, src/services/remote-media/emojis.ts): an emoji stored from an
// actor or a status is due; the cron queues a bounded batch, the job fetches each image through the guarded fetch and
// the avatar checks, and both the status and the profile then show Tern's copy, served by the media route. A changed
// image is fetched again and the old copy goes; a failing file server keeps the remote URL with bounded attempts; an
// image over 256 KB is not stored.
import { env, SELF } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Effects } from "../../src/effects/collector";
import { MAX_EFFECT_ATTEMPTS } from "../../src/effects/retry";
import { upsertRemoteEmojisStatement } from "../../src/services/statuses/custom-emojis";
import { queueDueEmojis } from "../../src/services/remote-media/emojis";
import { create, installFetchMock, note, postInbox, remoteActor, runJobs, sql } from "./federation-inbox-fixtures";
import { anon, db, ORIGIN } from "./helpers";
import { png } from "./media-fixtures";
import { queued } from "./queues";
import { fileServer } from "./file-server";

let PNG: Uint8Array;
beforeAll(async () => {
  installFetchMock();
  PNG = await png(16, 16);
});
afterEach(() => vi.restoreAllMocks());

const ON = { ...env, REMOTE_MEDIA_CACHE: "true", REMOTE_MEDIA_TIMEOUT_MS: "200" } as typeof env;

const picture = () => new Response(PNG, { headers: { "content-type": "image/png" } });
const tag = (host: string, name: string, path: string) => ({
  id: `https://${host}/emojis/${name}`,
  type: "Emoji",
  name: `:${name}:`,
  icon: { type: "Image", mediaType: "image/png", url: `https://files.example${path}` },
});

let n = 0;
/** An actor named with `:name:` (its Emoji tag at `path`) posts a status using it; returns the account and status ids. */
async function postedWith(name: string, path: string, host = "emo.example") {
  const t = tag(host, name, path);
  const actor = await remoteActor(`e${++n}`, host, { docPatch: { name: `E :${name}:`, tag: [t] } });
  const doc = note(actor, { content: `<p>hi :${name}:</p>`, tag: [t] });
  expect((await postInbox(actor, create(actor, doc))).status).toBe(202);
  await runJobs(ON);
  const [s] = await sql("SELECT ltrim(id, '0') AS id, ltrim(account_id, '0') AS account FROM statuses WHERE uri = ?", doc.id);
  return { statusId: s!.id as string, accountId: s!.account as string };
}

async function cacheEmojis(at = Date.now()) {
  const fx = new Effects(ORIGIN);
  const n = await queueDueEmojis(db(), fx, at);
  queued.jobs.push(...fx.drain());
  for (let i = 0; i < MAX_EFFECT_ATTEMPTS + 2 && queued.jobs.length; i++) await runJobs(ON);
  return n;
}

const emojiUrlsOf = async (statusId: string, accountId: string) => ({
  status: (await anon.get(`/api/v1/statuses/${statusId}`)).body.emojis.map((e: { url: string }) => e.url),
  account: (await anon.get(`/api/v1/accounts/${accountId}`)).body.emojis.map((e: { url: string }) => e.url),
});

describe("remote custom emojis cached in R2", () => {
  it("are fetched once; the status and the profile show Tern's copy, served from this domain", async () => {
    const asked = fileServer(() => picture());
    const { statusId, accountId } = await postedWith("blob", "/e/blob.png");
    expect(await emojiUrlsOf(statusId, accountId)).toEqual({ status: ["https://files.example/e/blob.png"], account: ["https://files.example/e/blob.png"] });
    expect(await cacheEmojis()).toBeGreaterThanOrEqual(1);
    expect(asked).toEqual(["/e/blob.png"]);
    const urls = await emojiUrlsOf(statusId, accountId);
    expect(urls.status[0].startsWith(`${ORIGIN}/media/custom_emojis/`)).toBe(true);
    expect(urls.account).toEqual(urls.status);
    const file = await SELF.fetch(urls.status[0]);
    expect(file.status).toBe(200);
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(PNG);
    expect(await cacheEmojis()).toBe(0);
  });

  it("a changed image is fetched again and the old copy goes", async () => {
    const asked = fileServer(() => picture());
    const { statusId, accountId } = await postedWith("wave", "/e/wave-1.png", "emo2.example");
    await cacheEmojis();
    const first = (await emojiUrlsOf(statusId, accountId)).status[0];
    await upsertRemoteEmojisStatement(db(), "emo2.example", [
      { shortcode: "wave", url: "https://files.example/e/wave-2.png", uri: "https://emo2.example/emojis/wave" },
    ]);
    expect((await emojiUrlsOf(statusId, accountId)).status).toEqual(["https://files.example/e/wave-2.png"]);
    await cacheEmojis();
    const second = (await emojiUrlsOf(statusId, accountId)).status[0];
    expect(second).not.toBe(first);
    expect(second.startsWith(`${ORIGIN}/media/custom_emojis/`)).toBe(true);
    expect(asked).toEqual(["/e/wave-1.png", "/e/wave-2.png"]);
    const [row] = await sql("SELECT ltrim(id, '0') AS id FROM custom_emojis WHERE shortcode = 'wave' AND domain = 'emo2.example'");
    expect((await env.MEDIA.list({ prefix: `custom_emojis/${row!.id}/` })).objects).toHaveLength(1);
  });

  it("a file server that answers 503 keeps the remote URL with bounded attempts; one over 256 KB is not stored", async () => {
    const asked = fileServer((path) => (path.startsWith("/busy/") ? new Response("busy", { status: 503 }) : new Response(new Uint8Array(300 * 1024))));
    const busy = await postedWith("busy", "/busy/e.png", "emo3.example");
    const big = await postedWith("big", "/big/e.png", "emo3.example");
    await cacheEmojis();
    expect((await emojiUrlsOf(busy.statusId, busy.accountId)).status).toEqual(["https://files.example/busy/e.png"]);
    expect((await emojiUrlsOf(big.statusId, big.accountId)).status).toEqual(["https://files.example/big/e.png"]);
    const tries = asked.filter((p) => p === "/busy/e.png").length;
    expect(tries).toBeGreaterThanOrEqual(1);
    expect(tries).toBeLessThanOrEqual(MAX_EFFECT_ATTEMPTS);
    expect(asked.filter((p) => p === "/big/e.png")).toHaveLength(1);
    expect((await env.MEDIA.list({ prefix: "custom_emojis/" })).objects.filter((o) => o.key.includes("emo3"))).toEqual([]);
  });
});
