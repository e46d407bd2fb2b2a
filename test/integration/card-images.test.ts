// Preview-card images cached in R2 (issue 32 point 3, src/services/remote-media/card-images.ts): the fetch_card job stores
// the card, then its image through the guarded fetch, and the card shows Tern's copy, served by the media route; a
// file server that fails or sends something that is not a picture leaves the remote URL after one try, and the card
// is still shown; a pruned card's image goes with it. Pages and images are served by fetchMock.
import { env, SELF } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { runJob } from "../../src/background/effects-runner";
import { createDb } from "../../src/db/client";
import { pruneOrphanCards } from "../../src/services/statuses/preview-cards";
import { fetchMock } from "../support/fetch-mock";
import { db, makeUser, ORIGIN } from "./helpers";
import { png } from "./media-fixtures";
import { queued } from "./queues";

const ON = { ...env, REMOTE_MEDIA_CACHE: "true", REMOTE_MEDIA_TIMEOUT_MS: "200" } as typeof env;
const SITE = "https://pages.example";

let PNG: Uint8Array;
beforeAll(async () => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
  PNG = await png(60, 30);
});
afterEach(() => vi.restoreAllMocks());

const page = (image: string) =>
  `<!doctype html><html><head><meta property="og:title" content="A page"><meta property="og:image" content="${image}"><meta property="og:type" content="article"></head><body></body></html>`;

/** Posts a link to `path` (served with an og:image of `image`), runs the jobs with the cache on; returns the card. */
async function cardFor(path: string, image: string, serveImage: () => void) {
  fetchMock
    .get(SITE)
    .intercept({ path })
    .reply(200, page(image), { headers: { "content-type": "text/html" } });
  serveImage();
  const u = await makeUser();
  const posted = await u.api.post("/api/v1/statuses", { status: `look ${SITE}${path}` });
  expect(posted.status).toBe(200);
  const d = createDb(env.DB);
  while (queued.jobs.length) await runJob(d, ON, queued.jobs.shift()!);
  return { card: (await u.api.get(`/api/v1/statuses/${posted.body.id}`)).body.card, statusId: posted.body.id as string, user: u };
}

describe("preview-card images cached in R2", () => {
  it("the image is fetched once and the card shows Tern's copy, served from this domain", async () => {
    const { card } = await cardFor("/one", `${SITE}/img/one.png`, () =>
      fetchMock
        .get(SITE)
        .intercept({ path: "/img/one.png" })
        .reply(200, PNG, { headers: { "content-type": "image/png" } }),
    );
    expect(card.title).toBe("A page");
    expect(card.image.startsWith(`${ORIGIN}/media/preview_cards/`)).toBe(true);
    const file = await SELF.fetch(card.image);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(PNG);
  });

  for (const [what, serve] of [
    ["answers 503", () => fetchMock.get(SITE).intercept({ path: "/img/bad.png" }).reply(503, "busy")],
    [
      "sends HTML",
      () =>
        fetchMock
          .get(SITE)
          .intercept({ path: "/img/bad.png" })
          .reply(200, "<html></html>", { headers: { "content-type": "image/png" } }),
    ],
    ["fails at the network", () => fetchMock.get(SITE).intercept({ path: "/img/bad.png" }).replyWithError(new TypeError("fetch failed"))],
  ] as const) {
    it(`an image server that ${what}: one try, the card shows the remote image, nothing is stored`, async () => {
      const before = (await env.MEDIA.list({ prefix: "preview_cards/" })).objects.length;
      const { card } = await cardFor(`/bad-${what.replace(/\W/g, "")}`, `${SITE}/img/bad.png`, serve);
      expect(card.title).toBe("A page");
      expect(card.image).toBe(`${SITE}/img/bad.png`);
      expect((await env.MEDIA.list({ prefix: "preview_cards/" })).objects.length).toBe(before);
      expect(queued.jobs).toEqual([]);
    });
  }

  it("a pruned card's image goes with it", async () => {
    const { card, statusId, user } = await cardFor("/gone", `${SITE}/img/gone.png`, () =>
      fetchMock
        .get(SITE)
        .intercept({ path: "/img/gone.png" })
        .reply(200, PNG, { headers: { "content-type": "image/png" } }),
    );
    const key = new URL(card.image).pathname.replace(/^\/media\//, "");
    expect(await env.MEDIA.head(key)).not.toBeNull();
    expect((await user.api.delete(`/api/v1/statuses/${statusId}`)).status).toBe(200);
    await env.DB.prepare("DELETE FROM instance_settings WHERE key = 'cron.cards_pruned_after'").run();
    await pruneOrphanCards(db(), env, Date.now() + 15 * 86_400_000, 10_000);
    expect(await env.MEDIA.head(key)).toBeNull();
  });
});
