// CRC-32 (IEEE 802.3, the polynomial of zip and PNG), one table built on first use: the zip writer and reader, and the
// PNG chunks the metadata strip rewrites.
import { lazy } from "../limits/lazy";

const crcTable = lazy((): Uint32Array => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
});

/** Continues a CRC-32 (start with 0) over `bytes`. */
export function crc32(bytes: Uint8Array, crc = 0): number {
  const t = crcTable();
  let c = ~crc >>> 0;
  for (let i = 0; i < bytes.length; i++) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}
