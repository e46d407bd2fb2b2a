// An account archive exactly as Mastodon's BackupService writes one (app/services/backup_service.rb, 4.x): a zip made by
// rubyzip (entries DEFLATEd) holding outbox.json (an OrderedCollection with the full @context whose orderedItems are the
// account's statuses as Create{Note|Question} and Announce activities, `@context` removed from each, attachment URLs cut
// to their path without `/system/`), the media files under that path (media_attachments/files/…), likes.json and
// bookmarks.json (collections of status URIs, no totalItems), actor.json (the Person, icon/image URLs renamed to
// avatar.<ext> / header.<ext>, outbox/likes/bookmarks pointing at the files), then avatar and header.
import { crc32 } from "../../src/lib/text/crc32";

export const OLD = "https://old.example";
export const ALICE = `${OLD}/users/alice`;
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const FOLLOWERS = `${ALICE}/followers`;
const enc = new TextEncoder();

export interface ZipInput {
  name: string;
  data: Uint8Array;
  /** STORE instead of DEFLATE. */
  store?: boolean;
}

async function deflate(data: Uint8Array): Promise<Uint8Array> {
  const out = new Response(new Blob([data]).stream().pipeThrough(new CompressionStream("deflate-raw")));
  return new Uint8Array(await out.arrayBuffer());
}

/** A zip file as rubyzip writes it (local headers with sizes, then the central directory); `tweak` corrupts it. */
export async function zipOf(entries: ZipInput[], tweak: { declaredSize?: (name: string, size: number) => number } = {}): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = enc.encode(e.name);
    const body = e.store ? e.data : await deflate(e.data);
    const crc = crc32(e.data);
    const size = tweak.declaredSize ? tweak.declaredSize(e.name, e.data.length) : e.data.length;
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(6, 0x0800, true);
    local.setUint16(8, e.store ? 0 : 8, true);
    local.setUint32(14, crc, true);
    local.setUint32(18, body.length, true);
    local.setUint32(22, size, true);
    local.setUint16(26, name.length, true);
    const cd = new DataView(new ArrayBuffer(46));
    cd.setUint32(0, 0x02014b50, true);
    cd.setUint16(4, 20, true);
    cd.setUint16(6, 20, true);
    cd.setUint16(8, 0x0800, true);
    cd.setUint16(10, e.store ? 0 : 8, true);
    cd.setUint32(16, crc, true);
    cd.setUint32(20, body.length, true);
    cd.setUint32(24, size, true);
    cd.setUint16(28, name.length, true);
    cd.setUint32(42, offset, true);
    chunks.push(new Uint8Array(local.buffer), name, body);
    central.push(new Uint8Array(cd.buffer), name);
    offset += 30 + name.length + body.length;
  }
  const cdSize = central.reduce((n, c) => n + c.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, cdSize, true);
  end.setUint32(16, offset, true);
  const all = [...chunks, ...central, new Uint8Array(end.buffer)];
  const out = new Uint8Array(all.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of all) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

const iso = (s: string) => new Date(s).toISOString().replace(/\.000Z$/, "Z");

function note(n: number, published: string, o: Record<string, unknown> = {}) {
  const id = `${ALICE}/statuses/${n}`;
  return {
    id,
    type: "Note",
    summary: null,
    inReplyTo: null,
    published: iso(published),
    url: `${OLD}/@alice/${n}`,
    attributedTo: ALICE,
    to: [PUBLIC],
    cc: [FOLLOWERS],
    sensitive: false,
    atomUri: id,
    inReplyToAtomUri: null,
    conversation: `tag:old.example,2019-01-01:objectId=${n}:objectType=Conversation`,
    context: `${OLD}/contexts/${n}`,
    content: `<p>Post ${n}</p>`,
    contentMap: { en: `<p>Post ${n}</p>` },
    attachment: [],
    tag: [],
    replies: {
      id: `${id}/replies`,
      type: "Collection",
      first: { type: "CollectionPage", next: `${id}/replies?only_other_accounts=true&page=true`, partOf: `${id}/replies`, items: [] },
    },
    likes: { id: `${id}/likes`, type: "Collection", totalItems: 0 },
    shares: { id: `${id}/shares`, type: "Collection", totalItems: 0 },
    ...o,
  };
}

function create(obj: ReturnType<typeof note>) {
  return { id: `${obj.id}/activity`, type: "Create", actor: ALICE, published: obj.published, to: obj.to, cc: obj.cc, object: obj };
}

function announce(n: number, published: string, object: string, author: string) {
  return { id: `${ALICE}/statuses/${n}/activity`, type: "Announce", actor: ALICE, published: iso(published), to: [PUBLIC], cc: [author, FOLLOWERS], object };
}

export const MEDIA_PATH = "media_attachments/files/101/234/567/890/123/456/original/0a1b2c3d4e5f6789.png";
export const BLURHASH = "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH";

export interface ArchiveOptions {
  /** A status on the importing server that the archive boosts, likes and bookmarks. */
  localUri: string;
  localAuthor: string;
  png: Uint8Array;
  /** More plain posts after the fixed ones (the bench's 5,000). */
  extraPosts?: number;
  actor?: string;
}

/** The outbox items: a post with an image, a self-reply thread, a poll, a direct message, followers-only, a CW post, a reply to someone else, two boosts. */
export function outboxItems(o: ArchiveOptions): unknown[] {
  const items: unknown[] = [
    create(
      note(1, "2019-03-01T10:00:00Z", {
        content: `<p>Hello <a href="${OLD}/tags/hello" class="mention hashtag" rel="tag">#<span>hello</span></a> world</p>`,
        attachment: [
          {
            type: "Document",
            mediaType: "image/png",
            url: MEDIA_PATH,
            name: "A blue square",
            blurhash: BLURHASH,
            focalPoint: [0.5, -0.25],
            width: 8,
            height: 8,
          },
        ],
        tag: [{ type: "Hashtag", href: `${OLD}/tags/hello`, name: "#hello" }],
      }),
    ),
    create(note(2, "2019-03-01T10:05:00Z", { inReplyTo: `${ALICE}/statuses/1`, content: "<p>and a reply to myself</p>" })),
    create(note(3, "2019-03-01T10:10:00Z", { inReplyTo: `${ALICE}/statuses/2`, content: "<p>and another</p>" })),
    create({
      ...note(4, "2019-04-01T12:00:00Z", { content: "<p>Tea or coffee?</p>" }),
      type: "Question",
      endTime: iso("2019-04-02T12:00:00Z"),
      closed: iso("2019-04-02T12:00:00Z"),
      votersCount: 8,
      oneOf: [
        { type: "Note", name: "Tea", replies: { type: "Collection", totalItems: 3 } },
        { type: "Note", name: "Coffee", replies: { type: "Collection", totalItems: 5 } },
      ],
    } as ReturnType<typeof note>),
    create(
      note(5, "2019-05-01T08:00:00Z", {
        to: ["https://else.example/users/bob"],
        cc: [],
        content: `<p><span class="h-card"><a href="https://else.example/@bob" class="u-url mention">@<span>bob</span></a></span> a secret</p>`,
        tag: [{ type: "Mention", href: "https://else.example/users/bob", name: "@bob@else.example" }],
      }),
    ),
    create(note(6, "2019-05-02T08:00:00Z", { to: [FOLLOWERS], cc: [], content: "<p>for followers only</p>" })),
    create(
      note(7, "2019-06-01T08:00:00Z", {
        to: [FOLLOWERS],
        cc: [PUBLIC],
        summary: "spoilers",
        sensitive: true,
        content: "<p>Ein Geheimnis</p>",
        contentMap: { de: "<p>Ein Geheimnis</p>" },
      }),
    ),
    create(note(8, "2019-06-02T08:00:00Z", { inReplyTo: "https://else.example/users/bob/statuses/77", content: "<p>replying to bob</p>" })),
    announce(9, "2019-07-01T08:00:00Z", o.localUri, o.localAuthor),
    announce(10, "2019-07-02T08:00:00Z", "https://gone.example/users/x/statuses/1", "https://gone.example/users/x"),
  ];
  for (let i = 0; i < (o.extraPosts ?? 0); i++) {
    const at = new Date(Date.UTC(2020, 0, 1) + i * 3600_000).toISOString();
    items.push(
      create(
        note(1000 + i, at, {
          content: `<p>Post number ${i} <a href="${OLD}/tags/bench" class="mention hashtag" rel="tag">#<span>bench</span></a></p>`,
          tag: [{ type: "Hashtag", href: `${OLD}/tags/bench`, name: "#bench" }],
        }),
      ),
    );
  }
  return items;
}

/**
 * outbox.json as BackupService writes it. `emptyFirst`: as Mastodon 4.0 wrote it (a real export of 2023 has it): the
 * serializer's empty `orderedItems` list, then the streamed one under the same key (JSON.parse reads the second).
 */
export function outboxJson(items: unknown[], { emptyFirst = false } = {}): string {
  if (emptyFirst)
    return outboxJson([]).replace(/"orderedItems":\[\]\}$/, `"orderedItems":[],"orderedItems":[${items.map((i) => JSON.stringify(i)).join(",")}]}`);
  return JSON.stringify({
    "@context": [
      "https://www.w3.org/ns/activitystreams",
      { ostatus: "http://ostatus.org#", atomUri: "ostatus:atomUri", sensitive: "as:sensitive", Hashtag: "as:Hashtag" },
    ],
    id: "outbox.json",
    type: "OrderedCollection",
    totalItems: items.length,
    orderedItems: items,
  });
}

function uriCollection(id: string, items: string[]): string {
  return JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id, type: "OrderedCollection", orderedItems: items });
}

export function actorJson(actor = ALICE): string {
  return JSON.stringify({
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id: actor,
    type: "Person",
    following: `${actor}/following`,
    followers: `${actor}/followers`,
    inbox: `${actor}/inbox`,
    outbox: "outbox.json",
    featured: `${actor}/collections/featured`,
    preferredUsername: "alice",
    name: "Alice Old",
    summary: "<p>My old bio</p>",
    url: `${OLD}/@alice`,
    manuallyApprovesFollowers: false,
    discoverable: true,
    published: "2018-01-01T00:00:00Z",
    publicKey: { id: `${actor}#main-key`, owner: actor, publicKeyPem: "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n" },
    tag: [],
    attachment: [{ type: "PropertyValue", name: "Site", value: '<a href="https://alice.example">alice.example</a>' }],
    endpoints: { sharedInbox: `${OLD}/inbox` },
    icon: { type: "Image", mediaType: "image/png", url: "avatar.png" },
    image: { type: "Image", mediaType: "image/png", url: "header.png" },
    likes: "likes.json",
    bookmarks: "bookmarks.json",
  });
}

/** The whole archive zip, in BackupService's order: outbox, media, likes, bookmarks, actor (+ avatar, header). */
export async function mastodonArchive(o: ArchiveOptions): Promise<Uint8Array> {
  return zipOf([
    { name: "outbox.json", data: enc.encode(outboxJson(outboxItems(o))) },
    { name: MEDIA_PATH, data: o.png },
    { name: "likes.json", data: enc.encode(uriCollection("likes.json", [o.localUri, "https://gone.example/users/x/statuses/2"])) },
    { name: "bookmarks.json", data: enc.encode(uriCollection("bookmarks.json", [o.localUri])) },
    { name: "avatar.png", data: o.png },
    { name: "header.png", data: o.png },
    { name: "actor.json", data: enc.encode(actorJson(o.actor)) },
  ]);
}
