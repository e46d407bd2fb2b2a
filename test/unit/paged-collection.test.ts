// Reading remote collections (src/federation/remote/paged-collection.ts) in every shape the servers Tern meets send for
// replies and featured collections: Mastodon (a Collection with an embedded first page and a `next` link), GoToSocial
// (a first page by link whose id differs in its query), Hollo/Fedify (cursor pages with `partOf`), Pleroma/Akkoma
// (embedded first page of IRIs), Misskey (no collection), featured collections of embedded Notes or of IRIs, a bare
// page; and what is refused: another host, a page claiming another id, a `next` loop, the fetch and item limits.
import { describe, expect, it, vi } from "vitest";
import { readCollectionItems, sameDocument } from "../../src/federation/remote/paged-collection";

type Doc = Record<string, unknown>;

/** A fake server: the documents by URL; every fetch is recorded. */
function server(docs: Record<string, Doc>) {
  const fetched: string[] = [];
  const fetch = async (url: string) => {
    fetched.push(url);
    return docs[url] ?? null;
  };
  return { fetched, fetch };
}

const OWNER = "https://social.example/users/ann/statuses/1";
const opts = (fetch: (u: string) => Promise<Doc | null>, more: Partial<Parameters<typeof readCollectionItems>[1]> = {}) => ({
  owner: OWNER,
  fetch,
  maxFetches: 5,
  maxItems: 40,
  label: "test",
  ...more,
});

describe("readCollectionItems", () => {
  it("Mastodon: an embedded first page (self-replies) and a next page by link", async () => {
    const base = `${OWNER}/replies`;
    const s = server({
      [`${base}?only_other_accounts=true&page=true`]: {
        id: `${base}?only_other_accounts=true&page=true`,
        type: "CollectionPage",
        partOf: base,
        items: ["https://social.example/users/bob/statuses/2", "https://other.example/notes/3"],
      },
    });
    const replies = {
      id: base,
      type: "Collection",
      first: { type: "CollectionPage", partOf: base, items: [`${OWNER}/self`], next: `${base}?only_other_accounts=true&page=true` },
    };
    expect(await readCollectionItems(replies, opts(s.fetch))).toEqual([
      `${OWNER}/self`,
      "https://social.example/users/bob/statuses/2",
      "https://other.example/notes/3",
    ]);
    expect(s.fetched).toEqual([`${base}?only_other_accounts=true&page=true`]);
  });

  it("GoToSocial: the first page by link, served with an id that differs in its query", async () => {
    const base = "https://gts.example/users/ann/statuses/01ABC/replies";
    const s = server({
      [base]: { id: base, type: "OrderedCollection", first: `${base}?only_other_accounts=false&page=true` },
      [`${base}?only_other_accounts=false&page=true`]: {
        id: `${base}?limit=20&only_other_accounts=false`,
        type: "OrderedCollectionPage",
        partOf: base,
        orderedItems: ["https://gts.example/users/bob/statuses/01DEF"],
      },
    });
    const owner = "https://gts.example/users/ann/statuses/01ABC";
    expect(await readCollectionItems(base, opts(s.fetch, { owner }))).toEqual(["https://gts.example/users/bob/statuses/01DEF"]);
  });

  it("Hollo (Fedify): cursor pages by link with partOf, chained by next", async () => {
    const base = "https://hollo.example/@ann/01/replies";
    const s = server({
      [base]: { id: base, type: "OrderedCollection", totalItems: 3, first: `${base}?cursor=a` },
      [`${base}?cursor=a`]: {
        id: `${base}?cursor=a`,
        type: "OrderedCollectionPage",
        partOf: base,
        orderedItems: ["https://hollo.example/@bob/02"],
        next: `${base}?cursor=b`,
      },
      [`${base}?cursor=b`]: { id: `${base}?cursor=b`, type: "OrderedCollectionPage", partOf: base, orderedItems: ["https://hollo.example/@cat/03"] },
    });
    expect(await readCollectionItems(base, opts(s.fetch, { owner: "https://hollo.example/@ann/01" }))).toEqual([
      "https://hollo.example/@bob/02",
      "https://hollo.example/@cat/03",
    ]);
  });

  it("a page whose id differs but whose partOf is the collection counts; one that claims another collection does not", async () => {
    const base = "https://social.example/users/ann/statuses/1/replies";
    const s = server({
      [`${base}/p1`]: { id: "https://social.example/pages/xyz", type: "CollectionPage", partOf: base, items: ["https://social.example/a"], next: `${base}/p2` },
      [`${base}/p2`]: {
        id: "https://social.example/pages/other",
        type: "CollectionPage",
        partOf: "https://social.example/else",
        items: ["https://social.example/b"],
      },
    });
    const log = vi.spyOn(console, "info").mockImplementation(() => {});
    expect(await readCollectionItems({ id: base, type: "Collection", first: `${base}/p1` }, opts(s.fetch))).toEqual(["https://social.example/a"]);
    expect(log.mock.calls.some((c) => String(c[0]).includes("served with the id https://social.example/pages/other"))).toBe(true);
    log.mockRestore();
  });

  it("Pleroma / Akkoma: an embedded first page of IRIs; Misskey: no collection at all", async () => {
    const replies = {
      id: "https://pl.example/objects/1/replies",
      type: "OrderedCollection",
      first: { id: "https://pl.example/objects/1/replies?page=true", type: "OrderedCollectionPage", orderedItems: ["https://pl.example/objects/2"] },
    };
    const s = server({});
    expect(await readCollectionItems(replies, opts(s.fetch, { owner: "https://pl.example/objects/1" }))).toEqual(["https://pl.example/objects/2"]);
    expect(s.fetched).toEqual([]);
    expect(await readCollectionItems(undefined, opts(s.fetch))).toBeNull();
  });

  it("featured: embedded Notes (Mastodon) or IRIs (GoToSocial), items kept as given, up to maxItems", async () => {
    const notes = [1, 2, 3].map((n) => ({ id: `https://social.example/users/ann/statuses/${n}`, type: "Note" }));
    const s = server({
      "https://social.example/users/ann/collections/featured": {
        id: "https://social.example/users/ann/collections/featured",
        type: "OrderedCollection",
        orderedItems: notes,
      },
    });
    expect(await readCollectionItems("https://social.example/users/ann/collections/featured", opts(s.fetch, { maxItems: 2 }))).toEqual(notes.slice(0, 2));
    const gts = {
      id: "https://gts.example/users/ann/collections/featured",
      type: "OrderedCollection",
      orderedItems: ["https://gts.example/users/ann/statuses/01"],
    };
    expect(await readCollectionItems(gts, opts(s.fetch, { owner: "https://gts.example/users/ann" }))).toEqual(["https://gts.example/users/ann/statuses/01"]);
  });

  it("a bare page given instead of a collection is read, with its next pages", async () => {
    const s = server({
      "https://social.example/c?page=2": { id: "https://social.example/c?page=2", type: "CollectionPage", items: [{ id: "https://social.example/z" }] },
    });
    const page = {
      id: "https://social.example/c?page=1",
      type: "CollectionPage",
      items: ["https://social.example/y"],
      next: "https://social.example/c?page=2",
    };
    expect(await readCollectionItems(page, opts(s.fetch))).toEqual(["https://social.example/y", { id: "https://social.example/z" }]);
  });

  it("never fetches from another host, stops on a next loop and at the fetch limit", async () => {
    const s = server({
      "https://social.example/loop": {
        id: "https://social.example/loop",
        type: "CollectionPage",
        items: ["https://social.example/1"],
        next: "https://social.example/loop",
      },
    });
    const log = vi.spyOn(console, "info").mockImplementation(() => {});
    expect(await readCollectionItems("https://evil.example/replies", opts(s.fetch))).toBeNull();
    expect(s.fetched).toEqual([]);
    expect(await readCollectionItems({ type: "Collection", first: "https://social.example/loop" }, opts(s.fetch))).toEqual(["https://social.example/1"]);
    expect(s.fetched).toEqual(["https://social.example/loop"]);

    const many: Record<string, Doc> = {};
    for (let i = 0; i < 10; i++)
      many[`https://social.example/p${i}`] = {
        id: `https://social.example/p${i}`,
        type: "CollectionPage",
        items: [`https://social.example/s${i}`],
        next: `https://social.example/p${i + 1}`,
      };
    const m = server(many);
    expect(await readCollectionItems("https://social.example/p0", opts(m.fetch, { maxFetches: 3 }))).toEqual([
      "https://social.example/s0",
      "https://social.example/s1",
      "https://social.example/s2",
    ]);
    expect(m.fetched.length).toBe(3);
    log.mockRestore();
  });

  it("something that is no collection is refused", async () => {
    const log = vi.spyOn(console, "info").mockImplementation(() => {});
    expect(await readCollectionItems({ id: "https://social.example/n", type: "Note" }, opts(server({}).fetch))).toBeNull();
    log.mockRestore();
  });
});

describe("sameDocument", () => {
  it("is the same URL, or the same but for the query", () => {
    expect(sameDocument("https://a.example/x?limit=20", "https://a.example/x?page=true")).toBe(true);
    expect(sameDocument("https://a.example/x", "https://a.example/x")).toBe(true);
    expect(sameDocument("https://a.example/y", "https://a.example/x")).toBe(false);
    expect(sameDocument("https://b.example/x", "https://a.example/x")).toBe(false);
    expect(sameDocument("not a url", "https://a.example/x")).toBe(false);
  });
});
