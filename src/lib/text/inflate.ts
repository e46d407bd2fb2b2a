// DEFLATE (RFC 1951) decoding that can stop and go on later, in another invocation. The runtime's DecompressionStream
// is faster (~5×), but its state cannot be kept: inflating an archive's 40 MB outbox.json with it is one step whose CPU
// grows with the file (issue 33). Here a round inflates until it has made `want` bytes (a copy may add up to 257 more),
// and hands back a checkpoint of plain data: the next symbol's bit, the last 32 KiB made (the window later copies may
// reach into) and, inside a block, where its header is (its Huffman tables are read again from it: cheaper to keep
// than the tables) or, in a stored block, how many bytes are left of it.
// What is refused (InflateError): a block type 3, a stored block whose length check fails, Huffman codes that are
// over-subscribed or incomplete (one-symbol distance codes aside, as zlib allows), a copy from before the start, a
// symbol out of range, and more output than `limit` (a zip bomb: the caller passes the size the directory declared).

export class InflateError extends Error {}

/** Where to go on: the next bit to read in the compressed data, the window (≤ 32 KiB of output before it), the block. */
export interface InflateCheckpoint {
  bit: number;
  window: Uint8Array;
  /** Inside a block: whether it is the last, its type, and its header's first bit (after the type) or stored bytes left. */
  block?: { final: boolean; type: 0 | 1 | 2; header: number; left: number };
}

/** The first byte a round must be given: the block's header when it resumes inside a block with tables of its own. */
export const inputStart = (from: InflateCheckpoint): number => (from.block?.type === 2 ? Math.min(from.block.header, from.bit) : from.bit) >> 3;

export interface InflateRound {
  /** The bytes the round's blocks made. */
  output: Uint8Array;
  /** After the last block made: null once the final block is done. */
  next: InflateCheckpoint | null;
}

const WINDOW = 32 * 1024;

// Lengths 257..285 and distances 0..29: base values and extra bits.
const LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
/** The order in which a dynamic block sends its code-length code's lengths. */
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/**
 * A Huffman code as one lookup table indexed by the next `bits` input bits (LSB first): each entry is
 * `symbol << 4 | code length`, 0 where no code fits (only in the one-code case zlib allows).
 */
interface Table {
  entries: Uint16Array;
  bits: number;
}

/** `codeLengths`: the code-length code, which must be complete; the others may be incomplete with one code of 1 bit or none (zlib's rule). */
function buildTable(lengths: Uint8Array, count: number, codeLengths = false): Table {
  const blCount = new Uint16Array(16);
  let max = 0;
  for (let i = 0; i < count; i++) {
    const l = lengths[i] as number;
    blCount[l] = (blCount[l] as number) + 1;
    if (l > max) max = l;
  }
  blCount[0] = 0;
  // Kraft: over-subscribed is never valid; incomplete only for a code of at most one symbol (zlib's rule).
  let left = 1;
  for (let l = 1; l <= 15; l++) {
    left = left * 2 - (blCount[l] as number);
    if (left < 0) throw new InflateError("corrupt deflate data (over-subscribed code)");
  }
  if (left > 0 && (codeLengths || max > 1)) throw new InflateError("corrupt deflate data (incomplete code)");
  const bits = Math.max(max, 1);
  const entries = new Uint16Array(1 << bits);
  const next = new Uint16Array(16);
  for (let code = 0, l = 1; l <= 15; l++) {
    code = (code + (blCount[l - 1] as number)) << 1;
    next[l] = code;
  }
  for (let sym = 0; sym < count; sym++) {
    const l = lengths[sym] as number;
    if (!l) continue;
    const code = next[l] as number;
    next[l] = code + 1;
    // Deflate sends a code's bits from its most significant one: the table is indexed by them reversed.
    let rev = 0;
    for (let i = 0; i < l; i++) rev |= ((code >> i) & 1) << (l - 1 - i);
    for (let i = rev; i < entries.length; i += 1 << l) entries[i] = (sym << 4) | l;
  }
  return { entries, bits };
}

const FIXED_LIT = (() => {
  const l = new Uint8Array(288);
  l.fill(8, 0, 144);
  l.fill(9, 144, 256);
  l.fill(7, 256, 280);
  l.fill(8, 280, 288);
  return buildTable(l, 288);
})();
// 32 codes of 5 bits (a complete code); 30 and 31 never occur in valid data.
const FIXED_DIST = buildTable(new Uint8Array(32).fill(5), 32);

/** Thrown inside a round when the input slice ends in the middle of a block (the caller gives more, or stops before). */
class OutOfInput extends Error {}

/**
 * Compressed bytes a round needs to make `want` bytes when the blocks carry output: a literal's code is at most 15 bits,
 * a copy of 3 bytes or more at most 48, so never more than 2 bytes of input an output byte, plus headers.
 */
export const inputFor = (want: number): number => 2 * want + 4096;

/**
 * Inflates from `from` until `want` bytes are made or the stream ends. `data` holds the compressed bytes from byte
 * `inputStart(from)` on; `last`: it runs to the end of the stream (so running out of it is corruption, not a short
 * read). `made`: bytes made before this round, with `limit` the size the output may reach. Returns null when `data`
 * ended before anything could be made (read more and call again).
 */
export function inflateRound(data: Uint8Array, from: InflateCheckpoint, want: number, made: number, limit: number, last: boolean): InflateRound | null {
  const src = data;
  const base = inputStart(from) * 8;
  let pos = 0;
  let buf = 0;
  let cnt = 0;
  const fill = (n: number) => {
    while (cnt < n) {
      if (pos >= src.length) {
        // Zeros past the end let a final code be read; overran() says whether the input was really short.
        if (pos >= src.length + 4) throw last ? new InflateError("corrupt deflate data (truncated)") : new OutOfInput();
        pos++;
      } else buf |= (src[pos++] as number) << cnt;
      cnt += 8;
    }
  };
  const bits = (n: number): number => {
    if (n === 0) return 0;
    fill(n);
    const v = buf & ((1 << n) - 1);
    buf >>>= n;
    cnt -= n;
    return v;
  };
  const decode = (t: Table): number => {
    fill(t.bits);
    const e = t.entries[buf & ((1 << t.bits) - 1)] as number;
    const l = e & 15;
    if (!l) throw new InflateError("corrupt deflate data (bad code)");
    buf >>>= l;
    cnt -= l;
    return e >> 4;
  };
  const at = () => base + pos * 8 - cnt;
  const seek = (bit: number) => {
    pos = (bit - base) >> 3;
    buf = 0;
    cnt = 0;
    bits((bit - base) & 7);
  };
  const overran = () => pos > src.length && pos * 8 - cnt > src.length * 8;

  // Output: the window first (copies reach back into it), then what this round makes.
  const win = from.window;
  let out = new Uint8Array(win.length + Math.min(want, Math.max(0, limit - made)) + 1024);
  out.set(win);
  let o = win.length;
  const room = (n: number) => {
    if (made + (o - win.length) + n > limit) throw new InflateError("deflate data larger than declared");
    if (o + n <= out.length) return;
    const bigger = new Uint8Array(Math.max(out.length * 2, o + n));
    bigger.set(out.subarray(0, o));
    out = bigger;
  };

  const lengths = new Uint8Array(320);
  /** A dynamic block's tables, read from its header (at the current bit). */
  const readTables = (): [Table, Table] => {
    const hlit = bits(5) + 257;
    const hdist = bits(5) + 1;
    const hclen = bits(4) + 4;
    if (hlit > 286 || hdist > 30) throw new InflateError("corrupt deflate data (too many codes)");
    const cl = new Uint8Array(19);
    for (let i = 0; i < hclen; i++) cl[CL_ORDER[i] as number] = bits(3);
    const clTable = buildTable(cl, 19, true);
    lengths.fill(0);
    for (let i = 0; i < hlit + hdist; ) {
      const sym = decode(clTable);
      if (sym < 16) lengths[i++] = sym;
      else {
        let repeat: number;
        let value = 0;
        if (sym === 16) {
          if (i === 0) throw new InflateError("corrupt deflate data (repeat with nothing before)");
          value = lengths[i - 1] as number;
          repeat = 3 + bits(2);
        } else if (sym === 17) repeat = 3 + bits(3);
        else repeat = 11 + bits(7);
        if (i + repeat > hlit + hdist) throw new InflateError("corrupt deflate data (repeat past the end)");
        lengths.fill(value, i, i + repeat);
        i += repeat;
      }
    }
    if (!lengths[256]) throw new InflateError("corrupt deflate data (no end of block code)");
    return [buildTable(lengths.subarray(0, hlit), hlit), buildTable(lengths.slice(hlit, hlit + hdist), hdist)];
  };

  // The block under way: none, or its kind with its tables (or its stored bytes left).
  let inBlock = false;
  let final = false;
  let type: 0 | 1 | 2 = 0;
  let header = 0;
  let left = 0;
  let lit = FIXED_LIT;
  let dist = FIXED_DIST;
  let done = false;
  try {
    if (from.block) {
      ({ final, type, header, left } = from.block);
      inBlock = true;
      if (type === 2) {
        seek(header);
        [lit, dist] = readTables();
      }
    }
    seek(from.bit);
  } catch (e) {
    // `data` does not reach the block's header and the point to go on from.
    if (e instanceof OutOfInput || (e instanceof InflateError && !last && pos > src.length)) return null;
    throw e;
  }

  // Where the last block began, to stop there if the input runs out inside the next one.
  const start = { pos, buf, cnt, o, inBlock, final, type, header, left, lit, dist };
  let blockStart = start;
  try {
    while (!done && o - win.length < want) {
      if (!inBlock) {
        blockStart = { pos, buf, cnt, o, inBlock, final, type, header, left, lit, dist };
        final = bits(1) === 1;
        const t = bits(2);
        if (t === 3) throw new InflateError("corrupt deflate data (block type 3)");
        type = t as 0 | 1 | 2;
        header = at();
        inBlock = true;
        if (type === 0) {
          // Stored: to the byte boundary, LEN and its complement, then LEN bytes as they are.
          bits(cnt & 7);
          left = bits(16);
          if ((bits(16) ^ 0xffff) !== left) throw new InflateError("corrupt deflate data (stored length)");
        } else if (type === 1) {
          lit = FIXED_LIT;
          dist = FIXED_DIST;
        } else [lit, dist] = readTables();
      }
      if (type === 0) {
        const take = Math.min(left, Math.max(1, want - (o - win.length)));
        room(take);
        let n = take;
        // Whole bytes still in the bit buffer come first.
        while (n > 0 && cnt >= 8) {
          out[o++] = bits(8);
          n--;
        }
        if (pos + n > src.length) throw last ? new InflateError("corrupt deflate data (truncated)") : new OutOfInput();
        out.set(src.subarray(pos, pos + n), o);
        o += n;
        pos += n;
        left -= take;
        if (overran()) throw last ? new InflateError("corrupt deflate data (truncated)") : new OutOfInput();
        if (left === 0) {
          inBlock = false;
          done = final;
        }
        continue;
      }
      const goal = win.length + want;
      // The fast path: while the input is not near its end and the output has room for a whole copy, the bit buffer
      // lives in locals (the closures' variables are context slots, each access a load and a store), refilled two
      // bytes at a time without end checks. Anything else (the input's last bytes, growing the output, the limit)
      // falls to the careful loop below, which goes on from the same point.
      const inputEnd = src.length - 8;
      let blockEnded = false;
      {
        const litE = lit.entries;
        const litM = (1 << lit.bits) - 1;
        const distE = dist.entries;
        const distM = (1 << dist.bits) - 1;
        const cap = Math.min(out.length, win.length + (limit - made)) - 258;
        let p = pos;
        let b = buf;
        let c = cnt;
        try {
          while (o < goal && o <= cap && p < inputEnd) {
            if (c < 16) {
              b |= ((src[p] as number) << c) | ((src[p + 1] as number) << (c + 8));
              p += 2;
              c += 16;
            }
            let e = litE[b & litM] as number;
            let l = e & 15;
            if (!l) throw new InflateError("corrupt deflate data (bad code)");
            b >>>= l;
            c -= l;
            const sym = e >> 4;
            if (sym < 256) {
              out[o++] = sym;
              continue;
            }
            if (sym === 256) {
              blockEnded = true;
              break;
            }
            const li = sym - 257;
            if (li >= 29) throw new InflateError("corrupt deflate data (bad length)");
            if (c < 16) {
              b |= ((src[p] as number) << c) | ((src[p + 1] as number) << (c + 8));
              p += 2;
              c += 16;
            }
            const xl = LEN_EXTRA[li] as number;
            const len = (LEN_BASE[li] as number) + (b & ((1 << xl) - 1));
            b >>>= xl;
            c -= xl;
            if (c < 16) {
              b |= ((src[p] as number) << c) | ((src[p + 1] as number) << (c + 8));
              p += 2;
              c += 16;
            }
            e = distE[b & distM] as number;
            l = e & 15;
            if (!l) throw new InflateError("corrupt deflate data (bad code)");
            b >>>= l;
            c -= l;
            const di = e >> 4;
            if (di >= 30) throw new InflateError("corrupt deflate data (bad distance)");
            if (c < 16) {
              b |= ((src[p] as number) << c) | ((src[p + 1] as number) << (c + 8));
              p += 2;
              c += 16;
            }
            const xd = DIST_EXTRA[di] as number;
            const d = (DIST_BASE[di] as number) + (b & ((1 << xd) - 1));
            b >>>= xd;
            c -= xd;
            if (d > o) throw new InflateError("corrupt deflate data (distance too far back)");
            let back = o - d;
            for (let k = 0; k < len; k++) out[o++] = out[back++] as number;
          }
        } finally {
          pos = p;
          buf = b;
          cnt = c;
        }
      }
      if (blockEnded) {
        inBlock = false;
        done = final;
      }
      for (;;) {
        if (blockEnded || o >= goal) break;
        const sym = decode(lit);
        if (sym < 256) {
          if (o >= out.length || made + (o - win.length) >= limit) room(1);
          out[o++] = sym;
        } else if (sym === 256) {
          inBlock = false;
          done = final;
          break;
        } else {
          const li = sym - 257;
          if (li >= 29) throw new InflateError("corrupt deflate data (bad length)");
          const len = (LEN_BASE[li] as number) + bits(LEN_EXTRA[li] as number);
          const di = decode(dist);
          if (di >= 30) throw new InflateError("corrupt deflate data (bad distance)");
          const d = (DIST_BASE[di] as number) + bits(DIST_EXTRA[di] as number);
          if (d > o) throw new InflateError("corrupt deflate data (distance too far back)");
          room(len);
          let back = o - d;
          for (let k = 0; k < len; k++) out[o++] = out[back++] as number;
        }
      }
      if (overran()) throw last ? new InflateError("corrupt deflate data (truncated)") : new OutOfInput();
    }
  } catch (e) {
    // Past the end of a slice that is not the stream's end, what the zeros after it decode to says nothing.
    const short = e instanceof OutOfInput || (e instanceof InflateError && !last && pos > src.length);
    if (!short) throw e;
    // Stop where the last block began, or ask for more input when that is where this round began.
    if (blockStart === start) return null;
    // Blocks of no output that left the round where it began are no progress either.
    if (blockStart.o === win.length && base + blockStart.pos * 8 - blockStart.cnt === from.bit && !from.block) return null;
    ({ pos, buf, cnt, o, inBlock, final, type, header, left, lit, dist } = blockStart);
    done = false;
  }
  const output = out.slice(win.length, o);
  if (done) return { output, next: null };
  const next: InflateCheckpoint = { bit: at(), window: out.slice(Math.max(0, o - WINDOW), o) };
  if (inBlock) next.block = { final, type, header, left };
  return { output, next };
}
