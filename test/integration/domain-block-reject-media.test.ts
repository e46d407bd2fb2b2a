// Instance domain blocks with reject_media (Mastodon's DomainBlock#reject_media): the domain's media attachments are
// shown as Mastodon shows an attachment without a file (type "unknown", no url of ours, the remote URLs kept), its
// accounts with the default avatar and header; lifting the flag or the block brings them back. Decided when a block
// changes or an account is stored (accounts.reject_media, migrations/0028): rendering a page costs no more D1 round trips.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { eventually, makeUser, ORIGIN, type TestUser } from "./helpers";
import { timedGet as timed } from "./server-timing-fixtures";
import { create, deliver, installFetchMock, note, pad, remoteActor, type RemoteActor, sql } from "./federation-inbox-fixtures";
import { ADMIN } from "./admin-fixtures";

beforeAll(() => installFetchMock());

function actorWithPictures(name: string, host: string): Promise<RemoteActor> {
  return remoteActor(name, host, {
    docPatch: {
      icon: { type: "Image", mediaType: "image/png", url: `https://${host}/avatars/${name}.png` },
      image: { type: "Image", mediaType: "image/png", url: `https://${host}/headers/${name}.png` },
    },
  });
}

/** Delivers a public note with one image from `a`, puts it in `viewer`'s home; returns its id and author id. */
async function postImage(a: RemoteActor, viewer: TestUser): Promise<{ id: string; accountId: string }> {
  const n = note(a, {
    attachment: [
      {
        type: "Document",
        mediaType: "image/png",
        url: `https://${a.host}/media/${a.name}.png`,
        name: "a picture",
        width: 640,
        height: 480,
        blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
      },
    ],
  });
  expect((await deliver(a, create(a, n))).status).toBe(202);
  const [row] = await sql("SELECT CAST(id AS TEXT) AS id, CAST(account_id AS TEXT) AS account_id FROM statuses WHERE uri = ?", n.id);
  await env.DB.prepare("INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id) VALUES (?, ?, ?)")
    .bind(pad(viewer.id), row!.id, row!.account_id)
    .run();
  return { id: String(BigInt(row!.id)), accountId: String(BigInt(row!.account_id)) };
}

const attachmentOf = (home: any[], id: string) => home.find((s) => s.id === id)?.media_attachments[0];
const accountOf = (home: any[], id: string) => home.find((s) => s.id === id)?.account;

describe("domain blocks with reject_media", () => {
  it("shows the domain's attachments as unknown and its avatars as the defaults, with no extra round trip; lifting restores them", async () => {
    const admin = await makeUser("mediaboss", ADMIN);
    const viewer = await makeUser("mediaviewer");
    const bob = await actorWithPictures("bob", "pics.example");
    const dave = await actorWithPictures("dave", "calm.example");
    const fromBob = await postImage(bob, viewer);
    const fromDave = await postImage(dave, viewer);

    const before = await timed("/api/v1/timelines/home", viewer.token);
    expect(before.status).toBe(200);
    const shown = attachmentOf(before.body, fromBob.id);
    expect(shown).toMatchObject({ type: "image", url: "https://pics.example/media/bob.png", remote_url: "https://pics.example/media/bob.png" });
    expect(accountOf(before.body, fromBob.id)).toMatchObject({
      avatar: "https://pics.example/avatars/bob.png",
      header: "https://pics.example/headers/bob.png",
    });
    const rtBefore = (await timed("/api/v1/timelines/home", viewer.token)).rt;
    expect(rtBefore).toBeGreaterThan(0);

    // A block without reject_media on the other domain changes nothing about its media.
    expect((await admin.api.post("/api/v1/admin/domain_blocks", { domain: "calm.example", severity: "noop", reject_media: false })).status).toBe(200);
    const block = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "pics.example", severity: "noop", reject_media: true });
    expect(block.status).toBe(200);
    await eventually(async () => {
      expect((await sql("SELECT reject_media FROM accounts WHERE id = ?", pad(fromBob.accountId)))[0]!.reject_media).toBe(1);
    });

    const after = await timed("/api/v1/timelines/home", viewer.token);
    // Mastodon's REST::MediaAttachmentSerializer for an attachment it never downloaded.
    expect(attachmentOf(after.body, fromBob.id)).toEqual({
      id: shown.id,
      type: "unknown",
      url: null,
      preview_url: null,
      remote_url: "https://pics.example/media/bob.png",
      preview_remote_url: null,
      text_url: null,
      meta: null,
      description: "a picture",
      blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
    });
    expect(accountOf(after.body, fromBob.id)).toMatchObject({
      avatar: `${ORIGIN}/avatars/original/missing.png`,
      avatar_static: `${ORIGIN}/avatars/original/missing.png`,
      header: `${ORIGIN}/headers/original/missing.png`,
      header_static: `${ORIGIN}/headers/original/missing.png`,
    });
    // The domain without the flag is unaffected.
    expect(attachmentOf(after.body, fromDave.id)).toMatchObject({ type: "image", url: "https://calm.example/media/dave.png" });
    expect(accountOf(after.body, fromDave.id)).toMatchObject({ avatar: "https://calm.example/avatars/dave.png" });
    // No extra D1 round trip on the page.
    expect(after.rt).toBe(rtBefore);
    // The status and account endpoints render the same way.
    const single = await viewer.api.get(`/api/v1/statuses/${fromBob.id}`);
    expect(single.body.media_attachments[0].type).toBe("unknown");
    expect((await viewer.api.get(`/api/v1/accounts/${fromBob.accountId}`)).body.avatar).toBe(`${ORIGIN}/avatars/original/missing.png`);

    // An account of a subdomain first seen after the block is marked when it is stored.
    const carol = await actorWithPictures("carol", "cdn.pics.example");
    const fromCarol = await postImage(carol, viewer);
    expect((await sql("SELECT reject_media FROM accounts WHERE id = ?", pad(fromCarol.accountId)))[0]!.reject_media).toBe(1);
    const withCarol = await viewer.api.get("/api/v1/timelines/home");
    expect(attachmentOf(withCarol.body, fromCarol.id).type).toBe("unknown");
    expect(accountOf(withCarol.body, fromCarol.id).avatar).toBe(`${ORIGIN}/avatars/original/missing.png`);

    // Clearing reject_media brings the media back.
    expect((await admin.api.put(`/api/v1/admin/domain_blocks/${block.body.id}`, { reject_media: false })).status).toBe(200);
    await eventually(async () => {
      expect((await sql("SELECT reject_media FROM accounts WHERE id = ?", pad(fromCarol.accountId)))[0]!.reject_media).toBe(0);
    });
    const lifted = await viewer.api.get("/api/v1/timelines/home");
    expect(attachmentOf(lifted.body, fromBob.id)).toEqual(shown);
    expect(accountOf(lifted.body, fromBob.id).avatar).toBe("https://pics.example/avatars/bob.png");
    expect(attachmentOf(lifted.body, fromCarol.id).type).toBe("image");

    // Set again, then the block is deleted: the media come back.
    expect((await admin.api.put(`/api/v1/admin/domain_blocks/${block.body.id}`, { reject_media: true })).status).toBe(200);
    await eventually(async () => {
      expect((await sql("SELECT reject_media FROM accounts WHERE id = ?", pad(fromBob.accountId)))[0]!.reject_media).toBe(1);
    });
    expect(attachmentOf((await viewer.api.get("/api/v1/timelines/home")).body, fromBob.id).type).toBe("unknown");
    expect((await admin.api.delete(`/api/v1/admin/domain_blocks/${block.body.id}`)).status).toBe(200);
    await eventually(async () => {
      expect((await sql("SELECT reject_media FROM accounts WHERE id = ?", pad(fromBob.accountId)))[0]!.reject_media).toBe(0);
    });
    const back = await viewer.api.get("/api/v1/timelines/home");
    expect(attachmentOf(back.body, fromBob.id)).toEqual(shown);
    expect(accountOf(back.body, fromBob.id).header).toBe("https://pics.example/headers/bob.png");
    expect(attachmentOf(back.body, fromCarol.id).type).toBe("image");
  });

  it("a parent domain's reject_media block still counts when a subdomain's own block is lifted", async () => {
    const admin = await makeUser("mediaboss2", ADMIN);
    const viewer = await makeUser("mediaviewer2");
    const erin = await actorWithPictures("erin", "a.parent.example");
    const fromErin = await postImage(erin, viewer);
    const parent = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "parent.example", severity: "noop", reject_media: true });
    expect(parent.status).toBe(200);
    const sub = await admin.api.post("/api/v1/admin/domain_blocks", { domain: "a.parent.example", severity: "suspend", reject_media: true });
    expect(sub.status).toBe(200);
    await eventually(async () => {
      expect((await sql("SELECT reject_media FROM accounts WHERE id = ?", pad(fromErin.accountId)))[0]!.reject_media).toBe(1);
    });
    expect((await admin.api.delete(`/api/v1/admin/domain_blocks/${sub.body.id}`)).status).toBe(200);
    await eventually(async () => {
      expect((await sql("SELECT suspended_at FROM accounts WHERE id = ?", pad(fromErin.accountId)))[0]!.suspended_at).toBeNull();
    });
    expect((await sql("SELECT reject_media FROM accounts WHERE id = ?", pad(fromErin.accountId)))[0]!.reject_media).toBe(1);
    const st = await viewer.api.get(`/api/v1/statuses/${fromErin.id}`);
    expect(st.body.media_attachments[0].type).toBe("unknown");
  });
});
