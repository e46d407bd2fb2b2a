// DEFLATE in rounds (src/lib/text/inflate.ts): whatever the data and wherever a round stops (between blocks, inside a
// block, inside a stored block), the rounds' outputs joined are what the runtime's own inflater makes, each round makes
// at most `want` bytes plus one copy, and a checkpoint survives JSON (it travels between invocations). Corrupt data
// is refused, and more output than the declared size stops the round.
import { describe, expect, it } from "vitest";
import { type InflateCheckpoint, InflateError, inflateRound, inputFor, inputStart } from "../../src/lib/text/inflate";
import { entryDataAt, entryStart, memoryAccess, readCentralDirectory, readEntryRound, ZipError } from "../../src/lib/text/zip-read";
import { zipOf } from "../integration/archive-fixtures";

async function through(bytes: Uint8Array, stream: TransformStream<Uint8Array, Uint8Array>): Promise<Uint8Array> {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}
const deflate = (b: Uint8Array) => through(b, new CompressionStream("deflate-raw") as unknown as TransformStream<Uint8Array, Uint8Array>);

/** Every round of `comp`, `want` bytes a round, the checkpoint sent through JSON between rounds. */
function inflateAll(comp: Uint8Array, want: number, slice?: number): { out: Uint8Array; rounds: number; largest: number } {
  let cp: InflateCheckpoint = { bit: 0, window: new Uint8Array(0) };
  const parts: Uint8Array[] = [];
  let made = 0;
  let largest = 0;
  for (let rounds = 1; ; rounds++) {
    const from = inputStart(cp);
    let n = slice ?? inputFor(want) + ((cp.bit >> 3) - from);
    let r = null;
    for (;;) {
      r = inflateRound(comp.subarray(from, from + n), cp, want, made, 1 << 30, from + n >= comp.length);
      if (r) break;
      n *= 2;
    }
    parts.push(r.output);
    made += r.output.length;
    largest = Math.max(largest, r.output.length);
    if (!r.next) {
      const out = new Uint8Array(made);
      let at = 0;
      for (const p of parts) {
        out.set(p, at);
        at += p.length;
      }
      return { out, rounds, largest };
    }
    const j = JSON.parse(JSON.stringify({ ...r.next, window: [...r.next.window] }));
    cp = { ...j, window: Uint8Array.from(j.window) };
  }
}

const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

function jsonText(n: number): Uint8Array {
  const items = Array.from({ length: n }, (_, i) => ({
    id: `https://old.example/users/alice/statuses/${1000 + i}`,
    type: "Create",
    content: `<p>Post ${i} — ${"naïve café 🐦 ".repeat(i % 7)}</p>`,
    published: new Date(Date.UTC(2020, 0, 1) + i * 3_600_000).toISOString(),
  }));
  return new TextEncoder().encode(JSON.stringify({ orderedItems: items }));
}

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65_536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65_536)));
  return out;
}

describe("inflating in rounds", () => {
  it("makes what the runtime's inflater makes, whatever the rounds, each round within its bound", async () => {
    const inputs: [string, Uint8Array][] = [
      ["JSON (dynamic blocks)", jsonText(3000)],
      ["a little JSON (one dynamic block)", jsonText(40)],
      ["random bytes (stored blocks)", randomBytes(150_000)],
      ["one byte (a fixed block)", new TextEncoder().encode("a")],
      ["nothing", new Uint8Array(0)],
      ["one byte repeated (long copies)", new Uint8Array(200_000).fill(7)],
    ];
    for (const [name, raw] of inputs) {
      const comp = await deflate(raw);
      expect(equal(await through(comp, new DecompressionStream("deflate-raw") as unknown as TransformStream<Uint8Array, Uint8Array>), raw)).toBe(true);
      for (const want of raw.length > 20_000 ? [1 << 30, 50_000, 3000] : [1 << 30, 1000, 37]) {
        const { out, rounds, largest } = inflateAll(comp, want);
        expect(equal(out, raw), `${name}, ${want} a round`).toBe(true);
        expect(largest, `${name}, ${want} a round`).toBeLessThanOrEqual(want + 258);
        if (raw.length > 2 * want) expect(rounds).toBeGreaterThan(raw.length / (want + 258) - 1);
      }
      // input handed out short (not the stream's end): a round stops before what it cannot finish, or asks for more
      expect(equal(inflateAll(comp, 5000, 700).out, raw), `${name}, short slices`).toBe(true);
    }
  });

  it("refuses corrupt data, and output beyond the declared size", async () => {
    const start: InflateCheckpoint = { bit: 0, window: new Uint8Array(0) };
    // block type 3
    expect(() => inflateRound(new Uint8Array([0x07]), start, 100, 0, 100, true)).toThrow(InflateError);
    // a stored block whose length's complement is wrong
    expect(() => inflateRound(new Uint8Array([0x01, 0x05, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5]), start, 100, 0, 100, true)).toThrow(/stored length/);
    // a stored block of 5 bytes with 3 of them: truncated at the stream's end
    expect(() => inflateRound(new Uint8Array([0x01, 0x05, 0x00, 0xfa, 0xff, 1, 2, 3]), start, 100, 0, 100, true)).toThrow(/truncated/);
    // …and when more may come, nothing is made yet
    expect(inflateRound(new Uint8Array([0x01, 0x05, 0x00, 0xfa, 0xff, 1, 2, 3]), start, 100, 0, 100, false)).toBeNull();
    // a copy from before the first byte (fixed block: length 3, distance 1, with nothing made)
    expect(() => inflateRound(new Uint8Array([0x03, 0x02, 0x00]), start, 100, 0, 100, true)).toThrow(/too far back/);
    // more than declared: a zip bomb stops at the declared size
    const comp = await deflate(new Uint8Array(100_000));
    expect(() => inflateRound(comp, start, 1 << 30, 0, 99_999, true)).toThrow(/larger than declared/);
    expect(() => inflateRound(comp, start, 1 << 30, 0, 100_000, true)).not.toThrow();
  });

  it("reads a deflated zip entry in rounds, its size and CRC checked at the end", async () => {
    const text = jsonText(2000);
    const zip = await zipOf([{ name: "outbox.json", data: text }]);
    const src = memoryAccess(zip);
    const e = (await readCentralDirectory(src, { maxEntrySize: 1 << 30, maxTotalSize: 1 << 30 })).get("outbox.json");
    if (!e) throw new Error("no entry");
    expect(e.method).toBe(8);
    const dataAt = await entryDataAt(src, e);
    const read = async (entry: typeof e) => {
      const parts: Uint8Array[] = [];
      for (let at = entryStart(); ; ) {
        const r = await readEntryRound(src, entry, dataAt, at, 10_000);
        parts.push(r.bytes);
        if (!r.next) return parts;
        at = r.next;
      }
    };
    const parts = await read(e);
    expect(parts.length).toBeGreaterThan(text.length / 10_258);
    expect(new TextDecoder().decode(await new Blob(parts).arrayBuffer())).toBe(new TextDecoder().decode(text));
    await expect(read({ ...e, crc: (e.crc + 1) >>> 0 })).rejects.toThrow(ZipError);
    await expect(read({ ...e, size: e.size - 1 })).rejects.toThrow(/larger than declared/);
  });
});
