// A small streaming ZIP writer, STORE only (no compression), for the account archive (src/services/data/export-archive.ts).
//
// Why STORE and not deflate (CompressionStream("deflate-raw")): R2's put() takes a stream only when its length is
// known up front (a FixedLengthStream), and the archive must be streamed into R2 without holding it in memory. With
// STORE the archive's size is the sum of its entries' sizes plus fixed headers, known before a byte is written; a
// deflated entry's size is known only after it has been compressed. Most of an archive's bytes are media (JPEG, PNG,
// MP4 …) that deflate does not shrink anyway. No zip library: the format is a few fixed headers (APPNOTE 6.3), and the
// project adds no dependencies. Each entry's CRC-32 is computed while it streams and written in a data descriptor
// after it (general purpose flag bit 3) and in the central directory. No ZIP64: at most 65,535 entries and 4 GiB.

import { crc32 } from "./crc32";

export interface ZipEntry {
  /** Path inside the archive (UTF-8, flag bit 11). */
  name: string;
  /** Exact byte length of the data. */
  size: number;
  /** The data, opened only when the entry is written. */
  open: () => Promise<ReadableStream<Uint8Array> | Uint8Array>;
}

const LOCAL = 30;
const DESCRIPTOR = 16;
const CENTRAL = 46;
const END = 22;
const FLAGS = 0x0808; // bit 3: sizes and CRC follow the data; bit 11: names are UTF-8
export const ZIP_MAX_BYTES = 0xffffffff;
export const ZIP_MAX_ENTRIES = 0xffff;

const enc = new TextEncoder();

/** The archive's exact size for these entries. */
export function zipSize(entries: readonly Pick<ZipEntry, "name" | "size">[]): number {
  let total = END;
  for (const e of entries) {
    const n = enc.encode(e.name).length;
    total += LOCAL + n + e.size + DESCRIPTOR + CENTRAL + n;
  }
  return total;
}

function dosTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getUTCFullYear());
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

interface Written {
  name: Uint8Array;
  crc: number;
  size: number;
  offset: number;
}

/**
 * Writes the archive to `out` (then closes it). Throws when an entry's data is not exactly its declared size, so a
 * FixedLengthStream of `zipSize(entries)` bytes is either filled exactly or fails.
 */
export async function writeZip(out: WritableStream<Uint8Array>, entries: readonly ZipEntry[], at = new Date()): Promise<void> {
  if (entries.length > ZIP_MAX_ENTRIES) throw new Error("too many entries for a ZIP without ZIP64");
  if (zipSize(entries) > ZIP_MAX_BYTES) throw new Error("archive larger than 4 GiB (no ZIP64)");
  const w = out.getWriter();
  const { time, date } = dosTime(at);
  const written: Written[] = [];
  let offset = 0;
  const put = async (b: Uint8Array) => {
    await w.write(b);
    offset += b.length;
  };
  try {
    for (const e of entries) {
      const name = enc.encode(e.name);
      const start = offset;
      const h = new DataView(new ArrayBuffer(LOCAL));
      h.setUint32(0, 0x04034b50, true);
      h.setUint16(4, 20, true);
      h.setUint16(6, FLAGS, true);
      h.setUint16(8, 0, true); // STORE
      h.setUint16(10, time, true);
      h.setUint16(12, date, true);
      // CRC and sizes (offsets 14, 18, 22) stay 0: they are in the data descriptor (bit 3).
      h.setUint16(26, name.length, true);
      await put(new Uint8Array(h.buffer));
      await put(name);
      let crc = 0;
      let size = 0;
      const data = await e.open();
      if (data instanceof Uint8Array) {
        crc = crc32(data);
        size = data.length;
        await put(data);
      } else {
        const reader = data.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          crc = crc32(value, crc);
          size += value.length;
          await put(value);
        }
      }
      if (size !== e.size) throw new Error(`zip entry ${e.name}: ${size} bytes, ${e.size} declared`);
      const d = new DataView(new ArrayBuffer(DESCRIPTOR));
      d.setUint32(0, 0x08074b50, true);
      d.setUint32(4, crc, true);
      d.setUint32(8, size, true);
      d.setUint32(12, size, true);
      await put(new Uint8Array(d.buffer));
      written.push({ name, crc, size, offset: start });
    }
    const cdStart = offset;
    for (const f of written) {
      const c = new DataView(new ArrayBuffer(CENTRAL));
      c.setUint32(0, 0x02014b50, true);
      c.setUint16(4, 20, true);
      c.setUint16(6, 20, true);
      c.setUint16(8, FLAGS, true);
      c.setUint16(10, 0, true);
      c.setUint16(12, time, true);
      c.setUint16(14, date, true);
      c.setUint32(16, f.crc, true);
      c.setUint32(20, f.size, true);
      c.setUint32(24, f.size, true);
      c.setUint16(28, f.name.length, true);
      c.setUint32(42, f.offset, true);
      await put(new Uint8Array(c.buffer));
      await put(f.name);
    }
    const endRec = new DataView(new ArrayBuffer(END));
    endRec.setUint32(0, 0x06054b50, true);
    endRec.setUint16(8, written.length, true);
    endRec.setUint16(10, written.length, true);
    endRec.setUint32(12, offset - cdStart, true);
    endRec.setUint32(16, cdStart, true);
    await put(new Uint8Array(endRec.buffer));
    await w.close();
  } catch (e) {
    await w.abort(e).catch(() => {});
    throw e;
  }
}
