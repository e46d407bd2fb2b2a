import { describe, expect, it } from "vitest";
import { normalizeActivity, normalizeActor, normalizeNote, PUBLIC, visibilityFromAudience } from "../../src/federation/remote/normalize";
import * as fx from "./fixtures/activitypub";

describe("ActivityPub normaliser", () => {
  it("reads a Mastodon actor", () => {
    const a = normalizeActor(fx.mastodonActor)!;
    expect(a).toMatchObject({
      id: "https://mastodon.example/users/alice",
      type: "Person",
      preferredUsername: "alice",
      sharedInbox: "https://mastodon.example/inbox",
      icon: "https://mastodon.example/a.png",
      image: "https://mastodon.example/h.png",
      featured: "https://mastodon.example/users/alice/collections/featured",
      indexable: true,
    });
    expect(a.publicKey?.id).toBe("https://mastodon.example/users/alice#main-key");
    expect(a.fields).toHaveLength(1);
    expect(a.emojis).toEqual([{ shortcode: "blobcat", url: "https://mastodon.example/e/blobcat.png", uri: "https://mastodon.example/emojis/1" }]);
  });

  it("reads an Akkoma Service actor and drops hostile emoji (E7)", () => {
    const a = normalizeActor(fx.akkomaActor)!;
    expect(a.type).toBe("Service");
    expect(a.manuallyApprovesFollowers).toBe(true);
    expect(a.emojis).toEqual([]);
  });

  it("reads a Mastodon Create{Note} with mentions, tags and attachments", () => {
    const act = normalizeActivity(fx.mastodonCreate)!;
    expect(act.type).toBe("Create");
    expect(act.objectId).toBe("https://mastodon.example/users/alice/statuses/1");
    const n = normalizeNote(act.object)!;
    expect(n.mentions).toEqual([{ href: "https://tern.example/users/bob", name: "@bob@tern.example" }]);
    expect(n.hashtags).toEqual(["tern"]);
    expect(n.attachments[0]).toMatchObject({ url: "https://files.mastodon.example/1.jpg", description: "a cat", focus: [0.5, -0.2], width: 800 });
    expect(n.language).toBe("en");
    expect(visibilityFromAudience(n.to, n.cc, "https://mastodon.example/users/alice/followers")).toBe("public");
  });

  it("reads GoToSocial's single-value to/cc", () => {
    const n = normalizeNote(fx.gotosocialNote)!;
    expect(n.to).toEqual([PUBLIC]);
    expect(n.cc).toEqual(["https://gts.example/users/carol/followers"]);
  });

  it("reads a Misskey note (unlisted: Public in cc)", () => {
    const n = normalizeNote(fx.misskeyNote)!;
    expect(visibilityFromAudience(n.to, n.cc, "https://misskey.example/users/9xyz/followers")).toBe("unlisted");
    expect(n.attachments[0].mediaType).toBe("image/webp");
    expect(n.hashtags).toEqual(["misskey"]);
  });

  it("reads a Pleroma Question as a poll", () => {
    const n = normalizeNote(fx.pleromaQuestion)!;
    expect(n.poll).toEqual({
      options: [
        { title: "yes", votes: 3 },
        { title: "no", votes: 1 },
      ],
      multiple: false,
      endTime: Date.parse("2026-12-01T00:00:00Z"),
      votersCount: 4,
    });
    expect(n.conversation).toBe("https://pleroma.example/contexts/abc");
  });

  it("reads a Pixelfed Create", () => {
    const act = normalizeActivity(fx.pixelfedCreate)!;
    const n = normalizeNote(act.object)!;
    expect(n.attachments[0].description).toBe("sunset over sea");
  });

  it("normalises as:Public spellings and caps arrays and strings (C22)", () => {
    const n = normalizeNote({
      ...fx.gotosocialNote,
      to: ["as:Public"],
      cc: ["Public"],
      content: "x".repeat(1_000_000),
      tag: Array.from({ length: 10_000 }, (_, i) => ({ type: "Hashtag", name: `#t${i}` })),
      attachment: Array.from({ length: 1000 }, (_, i) => ({ type: "Document", url: `https://gts.example/${i}.png` })),
    })!;
    expect(n.to).toEqual([PUBLIC]);
    expect(n.cc).toEqual([PUBLIC]);
    expect(n.content.length).toBe(100_000);
    expect(n.hashtags.length).toBe(100);
    expect(n.attachments.length).toBe(16);
  });

  it("rejects documents without ids, of the wrong type, or nested too deep", () => {
    expect(normalizeNote({ type: "Note", content: "x" })).toBeNull();
    expect(normalizeNote({ ...fx.gotosocialNote, type: "Tombstone" })).toBeNull();
    let deep: any = {};
    for (let i = 0; i < 100; i++) deep = { a: deep };
    expect(normalizeNote({ ...fx.gotosocialNote, extra: deep })).toBeNull();
    expect(normalizeActivity({ type: "Like" })).toBeNull();
  });
});
