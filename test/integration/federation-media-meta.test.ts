// Remote image attachments keep the size their sender gave (meta.original), however it was written: numbers on the
// attachment, numeric strings, or on its `url` Link.
import { beforeAll, describe, expect, it } from "vitest";
import { anon } from "./helpers";
import { create, deliver, installFetchMock, note, remoteActor } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

describe("remote attachment sizes", () => {
  it("meta.original holds width, height, size and aspect from each way of writing them", async () => {
    const bob = await remoteActor("bob", "sizes.example");
    const img = (n: number, extra: Record<string, unknown>) => ({
      type: "Document",
      mediaType: "image/png",
      url: `https://sizes.example/m/${n}.png`,
      ...extra,
    });
    const n = note(bob, {
      attachment: [
        img(1, { width: 640, height: 480 }),
        img(2, { width: "1200", height: "800" }),
        {
          type: "Image",
          mediaType: "image/png",
          url: { type: "Link", href: "https://sizes.example/m/3.png", mediaType: "image/png", width: 300, height: 600 },
        },
        img(4, { width: -5, height: "many" }),
      ],
    });
    expect((await deliver(bob, create(bob, n))).status).toBe(202);
    const search = await anon.get(`/api/v1/accounts/lookup?acct=bob@sizes.example`);
    const statuses = await anon.get(`/api/v1/accounts/${search.body.id}/statuses`);
    const media = statuses.body[0].media_attachments;
    expect(media.map((m: { meta: { original?: unknown } }) => m.meta.original ?? null)).toEqual([
      { width: 640, height: 480, size: "640x480", aspect: 640 / 480 },
      { width: 1200, height: 800, size: "1200x800", aspect: 1.5 },
      { width: 300, height: 600, size: "300x600", aspect: 0.5 },
      null,
    ]);
  });
});
