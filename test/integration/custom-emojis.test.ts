// Custom emojis in names, bios, fields and statuses (Mastodon's `emojis` on Account and Status): Emoji tags of remote
// Notes and actors are stored per domain and rendered with the status or account that uses them; bad shortcodes and
// non-http(s) images are dropped; local emojis show on local statuses and profiles and travel in the outgoing Note and
// actor document as Emoji tags; announcement reactions can use a remote emoji as `shortcode@domain`; and none of this
// adds a D1 round trip to the home timeline, notifications or verify_credentials.
import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { normalizeActor } from "../../src/federation/remote/normalize";
import { upsertRemoteAccount } from "../../src/federation/remote/remote-accounts";
import { ORIGIN, db, makeUser, type Res, type TestUser } from "./helpers";
import { create, deliver, installFetchMock, newId, note, pad, remoteActor, sql, type RemoteActor } from "./federation-inbox-fixtures";
import { addFollow, remoteAccount, take } from "./federation-outbound-fixtures";

beforeAll(() => installFetchMock());

const roundTrips = (r: Res) => Number(/dur=(\d+)/.exec(r.headers.get("server-timing") ?? "")?.[1] ?? Number.NaN);
const emojiTag = (host: string, name: string, url: unknown, extra: Record<string, unknown> = {}) => ({
  id: `https://${host}/emojis/${name}`,
  type: "Emoji",
  name: `:${name}:`,
  updated: "2026-01-01T00:00:00Z",
  icon: { type: "Image", mediaType: "image/png", url },
  ...extra,
});
const emoji = (shortcode: string, url: string) => ({ shortcode, url, static_url: url, visible_in_picker: true });

async function localEmoji(id: string, shortcode: string, opts: { disabled?: boolean; picker?: boolean } = {}) {
  await env.DB.prepare("INSERT INTO custom_emojis (id, shortcode, domain, image_key, visible_in_picker, disabled, created_at) VALUES (?, ?, NULL, ?, ?, ?, 0)")
    .bind(pad(id), shortcode, `emoji/${shortcode}.png`, opts.picker === false ? 0 : 1, opts.disabled ? 1 : 0)
    .run();
}

/** A remote actor whose name, bio and a field use emojis, known to Tern (fetched when its first activity arrived). */
async function emojiActor(name: string, host: string, tags: unknown[]): Promise<{ actor: RemoteActor; accountId: string }> {
  const actor = await remoteActor(name, host, {
    docPatch: {
      name: `${name.toUpperCase()} :blobcat:`,
      summary: "<p>I :heart_eyes: emoji</p>",
      attachment: [{ type: "PropertyValue", name: "Mood :mood:", value: "<p>:party:</p>" }],
      tag: tags,
    },
  });
  await deliver(actor, { id: newId(actor), type: "Like", actor: actor.uri, object: `${ORIGIN}/x` });
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", actor.uri);
  return { actor, accountId: String(BigInt(row.id)) };
}

async function statusIdOf(uri: string): Promise<string> {
  const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", uri);
  return String(BigInt(row.id));
}

describe("remote custom emojis", () => {
  it("an actor's Emoji tags are stored and its name, bio and fields render them; bad ones are dropped", async () => {
    const host = "emoji.example";
    const me = await makeUser();
    await localEmoji("9101", "blobcat"); // a local emoji of the same shortcode: never shown for the remote account
    const { accountId } = await emojiActor("emo", host, [
      emojiTag(host, "blobcat", `https://${host}/e/blobcat.png`),
      emojiTag(host, "heart_eyes", { type: "Link", href: `https://${host}/e/heart_eyes.gif` }),
      emojiTag(host, "mood", `https://${host}/e/mood.png`),
      emojiTag(host, "party", "javascript:alert(1)"), // not http(s): dropped
      emojiTag(host, "unused", `https://${host}/e/unused.png`), // stored, but the texts do not use it
      emojiTag(host, "x", `https://${host}/e/x.png`), // one character: not a shortcode
      emojiTag(host, "no<pe", `https://${host}/e/nope.png`),
      { type: "Emoji", name: ":data:", icon: { type: "Image", url: "data:image/png;base64,AAAA" } },
    ]);
    const account = (await me.api.get(`/api/v1/accounts/${accountId}`)).body;
    expect(account.display_name).toBe("EMO :blobcat:");
    expect(account.emojis).toEqual([
      emoji("heart_eyes", `https://${host}/e/heart_eyes.gif`),
      emoji("blobcat", `https://${host}/e/blobcat.png`),
      emoji("mood", `https://${host}/e/mood.png`),
    ]);
    const stored = await sql("SELECT shortcode, domain, image_key, image_remote_url, uri FROM custom_emojis WHERE domain = ? ORDER BY shortcode", host);
    expect(stored).toEqual(
      ["blobcat", "heart_eyes", "mood", "unused"].map((s) => ({
        shortcode: s,
        domain: host,
        image_key: null,
        image_remote_url: `https://${host}/e/${s}.${s === "heart_eyes" ? "gif" : "png"}`,
        uri: `https://${host}/emojis/${s}`,
      })),
    );
    // Remote emojis are not in this server's picker.
    const picker = (await me.api.get("/api/v1/custom_emojis")).body;
    expect(picker.map((e: any) => e.shortcode)).toEqual(["blobcat"]);
    expect(picker[0].url).toBe(`${ORIGIN}/media/emoji/blobcat.png`);
  });

  it("a Note's Emoji tags render in the status's content and content warning; a new image URL replaces the old", async () => {
    const host = "notes.example";
    const fan = await makeUser();
    const { actor, accountId } = await emojiActor("poster", host, [emojiTag(host, "blobcat", `https://${host}/e/blobcat.png`)]);
    await addFollow(fan.id, accountId);
    const first = note(actor, {
      summary: "cw :wave:",
      content: "<p>hello :blobcat: and :wave: and :nothere: and :bad: and a:glued: word</p>",
      tag: [
        emojiTag(host, "blobcat", `https://${host}/e/blobcat.png`),
        emojiTag(host, "wave", `https://${host}/e/wave.png`),
        emojiTag(host, "bad", "ftp://notes.example/e/bad.png"),
        emojiTag(host, "glued", `https://${host}/e/glued.png`),
      ],
    });
    expect((await deliver(actor, create(actor, first))).status).toBe(202);
    const id = await statusIdOf(first.id as string);
    const status = (await fan.api.get(`/api/v1/statuses/${id}`)).body;
    // Text order: the content warning's first, then the content's; `:glued:` is stuck to a word, as Mastodon reads it.
    expect(status.emojis).toEqual([emoji("wave", `https://${host}/e/wave.png`), emoji("blobcat", `https://${host}/e/blobcat.png`)]);
    expect(status.account.emojis.map((e: any) => e.shortcode)).toEqual(["blobcat"]);
    expect((await sql("SELECT count(*) AS n FROM custom_emojis WHERE shortcode = 'bad'"))[0].n).toBe(0);

    const home = await fan.api.get("/api/v1/timelines/home");
    expect(home.body.find((s: any) => s.id === id)?.emojis).toEqual(status.emojis);

    // The server changed the image: the next object carrying the tag updates it, and every status shows the new one.
    const second = note(actor, { content: "<p>again :wave:</p>", tag: [emojiTag(host, "wave", `https://${host}/e/wave-2.png`)] });
    await deliver(actor, create(actor, second));
    const again = (await fan.api.get(`/api/v1/statuses/${id}`)).body;
    expect(again.emojis[0]).toEqual(emoji("wave", `https://${host}/e/wave-2.png`));
    expect((await sql("SELECT count(*) AS n FROM custom_emojis WHERE shortcode = 'wave' AND domain = ?", host))[0].n).toBe(1);

    // An edit that drops the emoji from the text drops it from `emojis`.
    const updated = { ...first, content: "<p>no emoji now</p>", summary: null, updated: new Date(Date.now() + 1000).toISOString() };
    await deliver(actor, { id: newId(actor), type: "Update", actor: actor.uri, to: first.to, cc: first.cc, object: updated });
    expect((await fan.api.get(`/api/v1/statuses/${id}`)).body.emojis).toEqual([]);
  });

  it("a refetched actor (Update{Person}) gets the emojis of its new texts", async () => {
    const host = "refetch.example";
    const me = await makeUser();
    const doc = (name: string, tags: unknown[]) => ({
      id: `https://${host}/users/re`,
      type: "Person",
      preferredUsername: "re",
      name,
      summary: "",
      inbox: `https://${host}/users/re/inbox`,
      tag: tags,
    });
    const first = await upsertRemoteAccount(db(), normalizeActor(doc("Re :one:", [emojiTag(host, "one", `https://${host}/e/one.png`)]))!);
    expect((await me.api.get(`/api/v1/accounts/${first.id}`)).body.emojis).toEqual([emoji("one", `https://${host}/e/one.png`)]);
    const again = await upsertRemoteAccount(db(), normalizeActor(doc("Re :two: :one:", [emojiTag(host, "two", `https://${host}/e/two.png`)]))!);
    expect(again.id).toBe(first.id);
    // `:one:` is still known for the domain, so it still renders (Mastodon's from_text looks the domain's emojis up).
    expect((await me.api.get(`/api/v1/accounts/${first.id}`)).body.emojis).toEqual([
      emoji("two", `https://${host}/e/two.png`),
      emoji("one", `https://${host}/e/one.png`),
    ]);
  });

  it("nothing is stored from a domain whose media is rejected", async () => {
    const host = "nomedia.example";
    await env.DB.prepare("INSERT INTO domain_blocks (id, domain, severity, reject_media, created_at) VALUES (?, ?, 'noop', 1, 0)")
      .bind(pad("9201"), host)
      .run();
    const me = await makeUser();
    const { accountId } = await emojiActor("quiet", `sub.${host}`, [emojiTag(`sub.${host}`, "blobcat", `https://sub.${host}/e/blobcat.png`)]);
    expect((await me.api.get(`/api/v1/accounts/${accountId}`)).body.emojis).toEqual([]);
    expect((await sql("SELECT count(*) AS n FROM custom_emojis WHERE domain = ?", `sub.${host}`))[0].n).toBe(0);
  });
});

describe("local custom emojis", () => {
  it("render on a local status (in the response and when read) and travel as Emoji tags in the Note", async () => {
    await localEmoji("9301", "tern");
    await localEmoji("9302", "hidden", { picker: false });
    await localEmoji("9303", "off", { disabled: true });
    const u = await makeUser();
    const follower = await remoteAccount("fol", "followers.example");
    await addFollow(follower.id, u.id);
    const res = await u.api.post("/api/v1/statuses", { status: "hi :tern: :hidden: :off: :unknown:", spoiler_text: ":tern: cw" });
    expect(res.status).toBe(200);
    const expected = [emoji("tern", `${ORIGIN}/media/emoji/tern.png`), { ...emoji("hidden", `${ORIGIN}/media/emoji/hidden.png`), visible_in_picker: false }];
    expect(res.body.emojis).toEqual(expected);
    expect((await u.api.get(`/api/v1/statuses/${res.body.id}`)).body.emojis).toEqual(expected);

    const [created] = await take("Create");
    const emojiTags = created.activity.object.tag.filter((t: any) => t.type === "Emoji");
    expect(emojiTags).toEqual([
      { id: `${ORIGIN}/emojis/9301`, type: "Emoji", name: ":tern:", icon: { type: "Image", mediaType: "image/png", url: `${ORIGIN}/media/emoji/tern.png` } },
      {
        id: `${ORIGIN}/emojis/9302`,
        type: "Emoji",
        name: ":hidden:",
        icon: { type: "Image", mediaType: "image/png", url: `${ORIGIN}/media/emoji/hidden.png` },
      },
    ]);
    expect(created.activity["@context"][1].Emoji).toBe("toot:Emoji");

    // An edit that removes them removes them.
    const edited = await u.api.put(`/api/v1/statuses/${res.body.id}`, { status: "plain now", spoiler_text: "" });
    expect(edited.body.emojis).toEqual([]);
  });

  it("render on a local profile and travel in the actor document", async () => {
    await localEmoji("9401", "tern");
    const u = await makeUser();
    const res = await u.api.patch("/api/v1/accounts/update_credentials", {
      display_name: "Tern :tern:",
      note: "bio :nothere:",
      fields_attributes: { "0": { name: "emoji", value: ":tern:" } },
    });
    expect(res.status).toBe(200);
    expect(res.body.emojis).toEqual([emoji("tern", `${ORIGIN}/media/emoji/tern.png`)]);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).body.emojis).toEqual(res.body.emojis);
    expect((await u.api.get(`/api/v1/accounts/${u.id}`)).body.emojis).toEqual(res.body.emojis);

    const doc = (await (await SELF.fetch(`${ORIGIN}/users/${u.username}`, { headers: { accept: "application/activity+json" } })).json()) as any;
    expect(doc.tag).toEqual([
      { id: `${ORIGIN}/emojis/9401`, type: "Emoji", name: ":tern:", icon: { type: "Image", mediaType: "image/png", url: `${ORIGIN}/media/emoji/tern.png` } },
    ]);

    const cleared = await u.api.patch("/api/v1/accounts/update_credentials", { display_name: "Tern", fields_attributes: { "0": { name: "", value: "" } } });
    expect(cleared.body.emojis).toEqual([]);
  });
});

describe("announcement reactions with custom emojis", () => {
  it("accept a known remote emoji as shortcode@domain and render its image", async () => {
    const host = "react.example";
    const staff = await makeUser(undefined, { roleId: "2", scopes: "read write admin:read admin:write" });
    await env.DB.prepare(
      "INSERT INTO custom_emojis (id, shortcode, domain, image_remote_url, visible_in_picker, disabled, created_at) VALUES (?, 'blobcat', ?, ?, 1, 0, 0), (?, 'gone', ?, ?, 1, 1, 0)",
    )
      .bind(pad("9501"), host, `https://${host}/e/blobcat.png`, pad("9502"), host, `https://${host}/e/gone.png`)
      .run();
    const a = await staff.api.post("/api/v1/admin/announcements", { text: "react!", published: true });
    expect(a.status).toBe(200);
    const u = await makeUser();
    const react = (name: string) => u.api.put(`/api/v1/announcements/${a.body.id}/reactions/${encodeURIComponent(name)}`);
    expect((await react(`blobcat@${host}`)).status).toBe(200);
    expect((await react(`:blobcat@REACT.example:`)).status).toBe(200); // the same one
    for (const bad of [`gone@${host}`, "blobcat@elsewhere.example", `nope@${host}`, "blobcat@", "@react.example"]) expect((await react(bad)).status).toBe(422);
    const [seen] = (await u.api.get("/api/v1/announcements")).body.filter((x: any) => x.id === a.body.id);
    expect(seen.reactions).toEqual([
      { name: `blobcat@${host}`, count: 1, me: true, url: `https://${host}/e/blobcat.png`, static_url: `https://${host}/e/blobcat.png` },
    ]);
    expect((await u.api.delete(`/api/v1/announcements/${a.body.id}/reactions/${encodeURIComponent(`blobcat@React.example`)}`)).status).toBe(200);
    expect((await u.api.get("/api/v1/announcements")).body.find((x: any) => x.id === a.body.id).reactions).toEqual([]);
  });
});

describe("round trips", () => {
  it("emojis add none to the home timeline, notifications and verify_credentials", async () => {
    await localEmoji("9601", "tern");
    const host = "trips.example";
    const plain = await makeUser();
    const fancy = await makeUser();
    await fancy.api.patch("/api/v1/accounts/update_credentials", { display_name: "Fancy :tern:" });
    const { actor, accountId } = await emojiActor("trip", host, [emojiTag(host, "blobcat", `https://${host}/e/blobcat.png`)]);
    const author = await makeUser();
    await author.api.patch("/api/v1/accounts/update_credentials", { display_name: "Author :tern:" });
    const dull = await makeUser();
    await addFollow(fancy.id, author.id);
    await addFollow(fancy.id, accountId);
    await addFollow(plain.id, dull.id);

    // `plain`'s home and notifications hold statuses without any emoji; `fancy`'s as many, full of them.
    const texts = ["one :tern:", "two :tern: :tern:", "three"];
    for (const t of texts) {
      await author.api.post("/api/v1/statuses", { status: `@${fancy.username} ${t}` });
      await dull.api.post("/api/v1/statuses", { status: `@${plain.username} ${t.replace(/:tern:/g, "")}` });
    }
    await dull.api.post("/api/v1/statuses", { status: "four" });
    await deliver(actor, create(actor, note(actor, { content: "<p>remote :blobcat:</p>", tag: [emojiTag(host, "blobcat", `https://${host}/e/blobcat.png`)] })));
    await take();
    const home = async (u: TestUser) => {
      const r = await u.api.get("/api/v1/timelines/home");
      expect(r.status).toBe(200);
      return r;
    };
    const fancyHome = await home(fancy);
    expect(fancyHome.body.length).toBeGreaterThanOrEqual(4);
    expect(fancyHome.body.filter((s: any) => s.emojis.length).length).toBe(3);
    expect(fancyHome.body.find((s: any) => s.account.id === author.id).account.emojis).toEqual([emoji("tern", `${ORIGIN}/media/emoji/tern.png`)]);
    const plainHome = await home(plain);
    expect(roundTrips(fancyHome)).toBe(roundTrips(plainHome));
    expect(roundTrips(fancyHome)).toBeLessThanOrEqual(3);

    const notes = await fancy.api.get("/api/v1/notifications");
    expect(notes.body.some((n: any) => n.status?.emojis.length && n.account.emojis.length)).toBe(true);
    const plainNotes = await plain.api.get("/api/v1/notifications");
    expect(roundTrips(notes)).toBe(roundTrips(plainNotes));

    const vc = await fancy.api.get("/api/v1/accounts/verify_credentials");
    expect(vc.body.emojis).toHaveLength(1);
    expect(roundTrips(vc)).toBe(roundTrips(await plain.api.get("/api/v1/accounts/verify_credentials")));
  });
});
