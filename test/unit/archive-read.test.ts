// The two readers an archive import stands on: the collection splitter (src/lib/text/json-items.ts), fed the same
// document cut at every possible place, and the zip reader (src/lib/text/zip-read.ts) on a zip written by Tern's own
// writer and on hand-made bad ones.
import { describe, expect, it } from "vitest";
import { CollectionItemSplitter, JsonItemsError } from "../../src/lib/text/json-items";
import { type ZipEntry, writeZip, zipSize } from "../../src/lib/text/zip";
import { MAX_RATIO, memoryAccess, readCentralDirectory, readEntry, safeEntryName, ZipError } from "../../src/lib/text/zip-read";
import { outboxJson, outboxItems, zipOf } from "../integration/archive-fixtures";

const limits = { maxItemChars: 1_000_000, maxItems: 100_000 };

function split(text: string, cuts: number[]): string[] {
  const s = new CollectionItemSplitter(limits);
  const out: string[] = [];
  let from = 0;
  for (const c of [...cuts, text.length]) {
    out.push(...s.push(text.slice(from, c)));
    from = c;
  }
  s.end();
  return out;
}

describe("CollectionItemSplitter", () => {
  const tricky = [
    { type: "Create", note: 'quotes \\" and ] and } and , inside', nested: [[1, { a: "[" }], {}] },
    "https://example.com/a,b",
    { orderedItems: ["not", "the", "top", "level"] },
  ];
  const doc = JSON.stringify({
    "@context": ["x", { orderedItems: "as:x" }],
    id: "outbox.json",
    "orderedItems\\u": 1,
    totalItems: 3,
    orderedItems: tricky,
    after: [1, 2],
  });

  it("hands out each item whole, whatever the chunks", () => {
    const expected = tricky.map((t) => JSON.stringify(t));
    expect(split(doc, [])).toEqual(expected);
    for (let c = 1; c < doc.length; c++) expect(split(doc, [c]), `cut at ${c}`).toEqual(expected);
    for (let c = 1; c + 7 < doc.length; c += 3) expect(split(doc, [c, c + 7])).toEqual(expected);
  });

  it("reads an outbox as Mastodon writes it, with whitespace too", () => {
    const items = outboxItems({ localUri: "https://x.example/1", localAuthor: "https://x.example/u", png: new Uint8Array() });
    const text = outboxJson(items);
    expect(split(text, [100, 1000, 1001]).map((t) => JSON.parse(t))).toEqual(items);
    const pretty = JSON.stringify(JSON.parse(text), null, 2);
    expect(split(pretty, [50]).map((t) => JSON.parse(t))).toEqual(items);
    expect(split('{"orderedItems": [ ]}', [])).toEqual([]);
    // Mastodon 4.0's outbox: an empty orderedItems, then the real one under the same key
    const twice = outboxJson(items, { emptyFirst: true });
    expect(twice).toContain('"orderedItems":[],"orderedItems":[{');
    expect(JSON.parse(twice).orderedItems).toEqual(items);
    for (const cut of [twice.indexOf("],") + 1, twice.lastIndexOf('"orderedItems"') + 5]) expect(split(twice, [cut]).map((t) => JSON.parse(t))).toEqual(items);
  });

  it("refuses what is not one whole object, and items or counts over the limits", () => {
    expect(() => split('{"orderedItems": [1, 2', [])).toThrow(JsonItemsError);
    expect(() => split("[1,2]", [])).toThrow(JsonItemsError);
    expect(() => split("", [])).toThrow(JsonItemsError);
    const s = new CollectionItemSplitter({ maxItemChars: 10, maxItems: 5 });
    expect(() => s.push(`{"orderedItems": ["${"x".repeat(20)}"]}`)).toThrow(/too large/);
    const t = new CollectionItemSplitter({ maxItemChars: 10, maxItems: 2 });
    expect(() => t.push('{"orderedItems": [1,2,3]}')).toThrow(/more than 2/);
  });
});

describe("zip reader", () => {
  const enc = new TextEncoder();

  it("reads Tern's own STORE zips (sizes in data descriptors) and deflated ones", async () => {
    const entries: ZipEntry[] = [
      { name: "outbox.json", size: 5, open: async () => enc.encode("hello") },
      { name: "media_attachments/a/b.png", size: 3, open: async () => new Uint8Array([1, 2, 3]) },
    ];
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const [bytes] = await Promise.all([new Response(readable).arrayBuffer(), writeZip(writable, entries)]);
    expect(bytes.byteLength).toBe(zipSize(entries));
    const src = memoryAccess(new Uint8Array(bytes));
    const dir = await readCentralDirectory(src, { maxEntrySize: 1000, maxTotalSize: 1000 });
    expect([...dir.keys()]).toEqual(["outbox.json", "media_attachments/a/b.png"]);
    expect(new TextDecoder().decode(await readEntry(src, dir.get("outbox.json")!))).toBe("hello");

    const deflated = await zipOf([{ name: "a.json", data: enc.encode("x".repeat(500)) }]);
    const d = memoryAccess(deflated);
    const e = (await readCentralDirectory(d, { maxEntrySize: 1000, maxTotalSize: 1000 })).get("a.json")!;
    expect(e.method).toBe(8);
    expect(new TextDecoder().decode(await readEntry(d, e))).toBe("x".repeat(500));
  });

  it("refuses unsafe names", () => {
    for (const bad of ["../a", "a/../../b", "/abs", "C:/x", "a\\b", "a/./b", "", "a\0b"]) expect(safeEntryName(bad), bad).toBe(false);
    for (const ok of ["outbox.json", "media_attachments/files/1/2/original/x.png", "a..b/c"]) expect(safeEntryName(ok), ok).toBe(true);
  });

  it("refuses declared sizes over the caps or the ratio, and an entry that inflates past what it declared", async () => {
    const zeros = new Uint8Array(MAX_RATIO * 2000);
    const bomb = memoryAccess(await zipOf([{ name: "z", data: zeros }]));
    await expect(readCentralDirectory(bomb, { maxEntrySize: 1e9, maxTotalSize: 1e9 })).rejects.toThrow(/zip bomb/);
    const big = memoryAccess(await zipOf([{ name: "z", data: new Uint8Array(100), store: true }]));
    await expect(readCentralDirectory(big, { maxEntrySize: 99, maxTotalSize: 1e9 })).rejects.toThrow(/too large/);
    await expect(readCentralDirectory(big, { maxEntrySize: 1e9, maxTotalSize: 99 })).rejects.toThrow(/expands/);
    const liar = memoryAccess(await zipOf([{ name: "a", data: enc.encode("y".repeat(300)) }], { declaredSize: () => 50 }));
    const e = (await readCentralDirectory(liar, { maxEntrySize: 1e9, maxTotalSize: 1e9 })).get("a")!;
    await expect(readEntry(liar, e)).rejects.toThrow(ZipError);
  });

  it("refuses a file that is not a zip, a truncated one, and duplicate names", async () => {
    const good = await zipOf([{ name: "a", data: enc.encode("1") }]);
    await expect(readCentralDirectory(memoryAccess(enc.encode("nope")), { maxEntrySize: 9, maxTotalSize: 9 })).rejects.toThrow(ZipError);
    await expect(readCentralDirectory(memoryAccess(good.slice(0, good.length - 5)), { maxEntrySize: 9, maxTotalSize: 9 })).rejects.toThrow(ZipError);
    const dup = await zipOf([
      { name: "a", data: enc.encode("1") },
      { name: "a", data: enc.encode("2") },
    ]);
    await expect(readCentralDirectory(memoryAccess(dup), { maxEntrySize: 9, maxTotalSize: 9 })).rejects.toThrow(/duplicate/);
  });
});
