// Reading a ZIP archive that sits in R2 (an uploaded account archive: src/services/data/import-archive.ts), by ranges.
//
// Why our own central-directory reader and not a zip library (fflate's unzip): an archive with its media can be far
// larger than a Worker's 128 MB of memory, and fflate's unzip wants the whole file in memory, while its streaming Unzip
// reads from the first byte to the last, so reaching one media file means inflating everything before it. The
// central directory at the end of the file names every entry with its sizes, CRC and offset: one ranged read of the
// tail, one of the directory, and then one ranged read per entry that is needed. Inflating is the runtime's own
// `DecompressionStream("deflate-raw")` (native zlib), and the project adds no dependencies (as src/lib/text/zip.ts),
// except for a large entry read over several invocations (`readEntryRound`: the archive's outbox.json), which is
// inflated by inflate.ts, whose state can be kept between two blocks where the runtime's cannot.
//
// What is refused, before anything is inflated (security: zip bombs and path traversal): a missing or inconsistent end
// record or directory, ZIP64, encryption, methods other than STORE and DEFLATE, a name that is absolute, has a `..`
// segment, a backslash, a drive letter or a NUL, two entries of one name, entries whose data overlap (the overlapping
// "better zip bomb"), a declared size over the caller's cap or more than MAX_RATIO times its compressed size. While
// inflating, the output is counted and checked against the declared size and CRC-32, so a lying header stops at the
// declared size instead of filling memory.
import { crc32 } from "./crc32";
import { type InflateCheckpoint, InflateError, type InflateRound, inflateRound, inputFor, inputStart } from "./inflate";

/** Bytes of a file by range: an R2 object, or memory in tests. */
export interface RandomAccess {
  size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  stream(offset: number, length: number): Promise<ReadableStream<Uint8Array>>;
}

export interface ZipEntryInfo {
  name: string;
  method: 0 | 8;
  compressedSize: number;
  size: number;
  crc: number;
  localOffset: number;
}

export class ZipError extends Error {}

/** Deflate seldom shrinks JSON more than ~20 times; an entry that claims more than this is refused unread. */
export const MAX_RATIO = 100;
export const MAX_ENTRIES = 65_535;
const EOCD = 22;
const CENTRAL = 46;
const LOCAL = 30;
const MAX_COMMENT = 0xffff;

const u16 = (b: Uint8Array, o: number) => (b[o] ?? 0) | ((b[o + 1] ?? 0) << 8);
const u32 = (b: Uint8Array, o: number) => ((b[o] ?? 0) | ((b[o + 1] ?? 0) << 8) | ((b[o + 2] ?? 0) << 16) | ((b[o + 3] ?? 0) << 24)) >>> 0;

/** A name is a relative path of plain segments. */
export function safeEntryName(name: string): boolean {
  if (!name || name.length > 1024 || name.includes("\0") || name.includes("\\")) return false;
  if (name.startsWith("/") || /^[a-zA-Z]:/.test(name)) return false;
  return !name.split("/").some((seg) => seg === ".." || seg === ".");
}

export interface DirectoryLimits {
  /** Largest declared uncompressed size of any one entry. */
  maxEntrySize: number;
  /** Largest sum of declared uncompressed sizes. */
  maxTotalSize: number;
}

/** Every entry of the archive by name (directories left out), checked as described at the top. */
export async function readCentralDirectory(src: RandomAccess, limits: DirectoryLimits): Promise<Map<string, ZipEntryInfo>> {
  if (src.size < EOCD) throw new ZipError("not a zip file");
  const tailLen = Math.min(src.size, EOCD + MAX_COMMENT);
  const tail = await src.read(src.size - tailLen, tailLen);
  let end = -1;
  for (let i = tail.length - EOCD; i >= 0; i--) {
    if (u32(tail, i) === 0x06054b50 && i + EOCD + u16(tail, i + 20) === tail.length) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new ZipError("not a zip file (no end of central directory)");
  const count = u16(tail, end + 10);
  const cdSize = u32(tail, end + 12);
  const cdOffset = u32(tail, end + 16);
  if (u16(tail, end + 4) !== 0 || u16(tail, end + 6) !== 0 || u16(tail, end + 8) !== count) throw new ZipError("multi-part zip files are not supported");
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) throw new ZipError("ZIP64 archives are not supported");
  const eocdAt = src.size - tailLen + end;
  if (cdOffset + cdSize > eocdAt) throw new ZipError("corrupt zip file (central directory out of range)");
  const cd = await src.read(cdOffset, cdSize);
  const out = new Map<string, ZipEntryInfo>();
  const spans: { start: number; end: number }[] = [];
  const dec = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  let total = 0;
  let o = 0;
  for (let n = 0; n < count; n++) {
    if (o + CENTRAL > cd.length || u32(cd, o) !== 0x02014b50) throw new ZipError("corrupt zip file (central directory)");
    const flags = u16(cd, o + 8);
    const method = u16(cd, o + 10);
    const crc = u32(cd, o + 16);
    const compressedSize = u32(cd, o + 20);
    const size = u32(cd, o + 24);
    const nameLen = u16(cd, o + 28);
    const extraLen = u16(cd, o + 30);
    const commentLen = u16(cd, o + 32);
    const localOffset = u32(cd, o + 42);
    if (o + CENTRAL + nameLen > cd.length) throw new ZipError("corrupt zip file (central directory)");
    let name: string;
    try {
      name = dec.decode(cd.subarray(o + CENTRAL, o + CENTRAL + nameLen));
    } catch {
      throw new ZipError("corrupt zip file (a name is not UTF-8)");
    }
    o += CENTRAL + nameLen + extraLen + commentLen;
    if (!safeEntryName(name.endsWith("/") ? name.slice(0, -1) : name)) throw new ZipError(`unsafe path in zip file: ${JSON.stringify(name.slice(0, 100))}`);
    if (compressedSize === 0xffffffff || size === 0xffffffff || localOffset === 0xffffffff) throw new ZipError("ZIP64 archives are not supported");
    if (flags & 1) throw new ZipError("encrypted zip files are not supported");
    if (method !== 0 && method !== 8) throw new ZipError(`unsupported compression method ${method} (${name.slice(0, 100)})`);
    if (localOffset + LOCAL + nameLen + compressedSize > cdOffset) throw new ZipError("corrupt zip file (entry out of range)");
    spans.push({ start: localOffset, end: localOffset + LOCAL + nameLen + compressedSize });
    if (name.endsWith("/")) continue;
    if (out.has(name)) throw new ZipError(`duplicate entry in zip file: ${JSON.stringify(name.slice(0, 100))}`);
    if (method === 0 && size !== compressedSize) throw new ZipError("corrupt zip file (stored entry sizes differ)");
    if (size > limits.maxEntrySize) throw new ZipError(`zip entry too large: ${JSON.stringify(name.slice(0, 100))}`);
    if (method === 8 && size > compressedSize * MAX_RATIO + 1024) throw new ZipError(`zip entry compressed more than ${MAX_RATIO} times (a zip bomb?)`);
    total += size;
    if (total > limits.maxTotalSize) throw new ZipError("zip file expands to more than the limit");
    out.set(name, { name, method: method as 0 | 8, compressedSize, size, crc, localOffset });
    if (out.size > MAX_ENTRIES) throw new ZipError("too many entries in zip file");
  }
  spans.sort((a, b) => a.start - b.start);
  for (let i = 1; i < spans.length; i++) {
    if ((spans[i]?.start ?? 0) < (spans[i - 1]?.end ?? 0)) throw new ZipError("corrupt zip file (entries overlap)");
  }
  return out;
}

/**
 * The entry's bytes as a stream, inflated if need be, that errors (ZipError) once more than the declared size comes
 * out, or when the size or CRC-32 at the end differ from the directory's.
 */
export async function openEntry(src: RandomAccess, e: ZipEntryInfo): Promise<ReadableStream<Uint8Array>> {
  const dataAt = await entryDataAt(src, e);
  let raw: ReadableStream<Uint8Array> = await src.stream(dataAt, e.compressedSize);
  if (e.method === 8) raw = raw.pipeThrough(new DecompressionStream("deflate-raw") as unknown as TransformStream<Uint8Array, Uint8Array>);
  let seen = 0;
  let crc = 0;
  return raw.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        seen += chunk.length;
        if (seen > e.size) throw new ZipError(`zip entry larger than declared: ${e.name.slice(0, 100)}`);
        crc = crc32(chunk, crc);
        c.enqueue(chunk);
      },
      flush() {
        checkWhole(e, seen, crc);
      },
    }),
  );
}

/** Where the entry's (compressed) data starts: after its local header, whose name and extra field may differ in length. */
export async function entryDataAt(src: RandomAccess, e: ZipEntryInfo): Promise<number> {
  const head = await src.read(e.localOffset, LOCAL);
  if (u32(head, 0) !== 0x04034b50) throw new ZipError("corrupt zip file (local header)");
  const dataAt = e.localOffset + LOCAL + u16(head, 26) + u16(head, 28);
  if (dataAt + e.compressedSize > src.size) throw new ZipError("corrupt zip file (entry out of range)");
  return dataAt;
}

/** Where a read of an entry in rounds stands: bytes made, the CRC so far, and the inflater's checkpoint (inflate.ts). */
export interface EntryPosition {
  made: number;
  crc: number;
  /** Deflated entries: the inflater's checkpoint (inflate.ts): the next bit in the entry's data, the window, the block. */
  bit: number;
  window: Uint8Array;
  block?: InflateCheckpoint["block"];
}

export const entryStart = (): EntryPosition => ({ made: 0, crc: 0, bit: 0, window: new Uint8Array(0) });

/**
 * The next bytes of an entry, about `want` of them (a deflated entry's copy may add up to 257 more),
 * and where to go on: null once the entry is whole, its size and CRC-32 checked against the directory's (ZipError).
 * Each call's CPU follows `want`, not the entry's size: a large entry is read over several invocations.
 */
export async function readEntryRound(
  src: RandomAccess,
  e: ZipEntryInfo,
  dataAt: number,
  at: EntryPosition,
  want: number,
): Promise<{ bytes: Uint8Array; next: EntryPosition | null }> {
  let bytes: Uint8Array;
  let bit: number;
  let window: Uint8Array = new Uint8Array(0);
  let block: InflateCheckpoint["block"];
  let more: boolean;
  if (e.method === 0) {
    bytes = await src.read(dataAt + at.made, Math.min(want, e.size - at.made));
    if (at.made + bytes.length > e.size || (bytes.length === 0 && at.made < e.size)) throw new ZipError(`corrupt zip file (size of ${e.name.slice(0, 100)})`);
    bit = (at.made + bytes.length) * 8;
    more = at.made + bytes.length < e.size;
  } else {
    const cp: InflateCheckpoint = { bit: at.bit, window: at.window, ...(at.block ? { block: at.block } : {}) };
    const from = inputStart(cp);
    // The compressed bytes to read: enough for `want` bytes out (inflate.ts inputFor), doubled while that made nothing
    // (blocks of no output).
    let n = Math.min(e.compressedSize - from, inputFor(want) + ((at.bit >> 3) - from));
    let round: InflateRound | null = null;
    try {
      for (;;) {
        const data = await src.read(dataAt + from, n);
        round = inflateRound(data, cp, want, at.made, e.size, from + n >= e.compressedSize);
        if (round || from + n >= e.compressedSize) break;
        n = Math.min(e.compressedSize - from, n * 2);
      }
    } catch (err) {
      if (err instanceof InflateError) throw new ZipError(`corrupt zip file (${e.name.slice(0, 100)}: ${err.message})`);
      throw err;
    }
    if (!round) throw new ZipError(`corrupt zip file (${e.name.slice(0, 100)} ends in the middle of a block)`);
    bytes = round.output;
    more = !!round.next;
    bit = round.next?.bit ?? e.compressedSize * 8;
    window = round.next?.window ?? window;
    block = round.next?.block;
  }
  const next: EntryPosition = { made: at.made + bytes.length, crc: crc32(bytes, at.crc), bit, window, ...(block ? { block } : {}) };
  if (more) return { bytes, next };
  checkWhole(e, next.made, next.crc);
  return { bytes, next: null };
}

/** An entry read to its end: its size and CRC-32 are the directory's, or it is corrupt. */
function checkWhole(e: ZipEntryInfo, made: number, crc: number): void {
  if (made !== e.size) throw new ZipError(`corrupt zip file (size of ${e.name.slice(0, 100)})`);
  if (crc !== e.crc) throw new ZipError(`corrupt zip file (CRC of ${e.name.slice(0, 100)})`);
}

/** A whole entry in memory (callers keep to small entries: actor.json, an image). */
export async function readEntry(src: RandomAccess, e: ZipEntryInfo): Promise<Uint8Array> {
  const out = new Uint8Array(e.size);
  let at = 0;
  const reader = (await openEntry(src, e)).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out.set(value, at);
    at += value.length;
  }
  return out;
}

/** An R2 object read by ranges. */
export function r2Access(bucket: R2Bucket, key: string, size: number): RandomAccess {
  const get = async (offset: number, length: number) => {
    if (length === 0) return null;
    const o = await bucket.get(key, { range: { offset, length } });
    if (!o) throw new Error(`R2 object ${key} is gone`);
    return o;
  };
  return {
    size,
    async read(offset, length) {
      const o = await get(offset, length);
      return o ? new Uint8Array(await o.arrayBuffer()) : new Uint8Array(0);
    },
    async stream(offset, length) {
      const o = await get(offset, length);
      return o ? o.body : new ReadableStream({ start: (c) => c.close() });
    },
  };
}

/** Bytes in memory (tests, and an upload checked before it is stored). */
export function memoryAccess(bytes: Uint8Array): RandomAccess {
  return {
    size: bytes.length,
    read: async (offset, length) => bytes.slice(offset, offset + length),
    stream: async (offset, length) =>
      new ReadableStream({
        start(c) {
          c.enqueue(bytes.slice(offset, offset + length));
          c.close();
        },
      }),
  };
}
