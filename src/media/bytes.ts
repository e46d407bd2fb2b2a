// Reading image and media containers byte by byte (sniff.ts reads their headers, strip-metadata.ts rewrites them):
// integer readers, GIF data sub-blocks, the EXIF/TIFF Orientation. Every reader is total: a byte past the end reads as
// 0, so a truncated file gives wrong numbers, never an exception.

/** The byte at `i`, or 0 past the end (the bitwise readers below already treated a missing byte as 0). */
export const u8 = (b: Uint8Array, i: number): number => b[i] ?? 0;
export const u16be = (b: Uint8Array, o: number) => (u8(b, o) << 8) | u8(b, o + 1);
export const u16le = (b: Uint8Array, o: number) => u8(b, o) | (u8(b, o + 1) << 8);
export const u24le = (b: Uint8Array, o: number) => u8(b, o) | (u8(b, o + 1) << 8) | (u8(b, o + 2) << 16);
export const u32be = (b: Uint8Array, o: number) => ((u8(b, o) << 24) | (u8(b, o + 1) << 16) | (u8(b, o + 2) << 8) | u8(b, o + 3)) >>> 0;
export const u32le = (b: Uint8Array, o: number) => ((u8(b, o + 3) << 24) | (u8(b, o + 2) << 16) | (u8(b, o + 1) << 8) | u8(b, o)) >>> 0;
/** `n` bytes at `o` as Latin-1 text, or "" when they are not all inside `b`. */
export const ascii = (b: Uint8Array, o: number, n: number) => (o >= 0 && o + n <= b.length ? String.fromCharCode(...b.subarray(o, o + n)) : "");

/** End of the GIF data sub-blocks starting at `o` (the offset after their terminator), or -1 when truncated. */
export function gifSubBlocksEnd(b: Uint8Array, o: number): number {
  while (o < b.length) {
    const n = u8(b, o); // in range: o < b.length
    if (n === 0) return o + 1;
    o += n + 1;
  }
  return -1;
}

/** Orientation (tag 0x0112 of IFD0) of a TIFF structure at `t`, or 1 when absent or unreadable. */
export function tiffOrientation(b: Uint8Array, t: number, end = b.length): number {
  const order = ascii(b, t, 2);
  if (order !== "II" && order !== "MM") return 1;
  const le = order === "II";
  const r16 = (x: number) => (le ? u16le(b, x) : u16be(b, x));
  const r32 = (x: number) => (le ? u32le(b, x) : u32be(b, x));
  if (t + 8 > end || r16(t + 2) !== 42) return 1;
  const ifd = t + r32(t + 4);
  if (ifd + 2 > end) return 1;
  const n = Math.min(r16(ifd), 512);
  for (let i = 0; i < n; i++) {
    const e = ifd + 2 + i * 12;
    if (e + 12 > end) break;
    if (r16(e) === 0x0112) {
      const v = r16(e + 8);
      return v >= 1 && v <= 8 ? v : 1;
    }
  }
  return 1;
}
