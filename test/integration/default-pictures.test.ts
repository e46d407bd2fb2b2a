// The default avatar and header are valid PNGs (other servers thumbnail them): every chunk's CRC holds and the image
// data inflates to exactly the size its header declares.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Uint8Array) => {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};

async function inflate(data: Uint8Array): Promise<number> {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate"));
  return (await new Response(stream).arrayBuffer()).byteLength;
}

describe("default pictures", () => {
  for (const path of ["/avatars/original/missing.png", "/headers/original/missing.png"]) {
    it(`${path} is a valid PNG`, async () => {
      const res = await SELF.fetch(`http://tern.test${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      const b = new Uint8Array(await res.arrayBuffer());
      expect([...b.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      const view = new DataView(b.buffer);
      let width = 0;
      let height = 0;
      let idat = new Uint8Array(0);
      let sawEnd = false;
      for (let i = 8; i < b.length; ) {
        const len = view.getUint32(i);
        const type = new TextDecoder().decode(b.slice(i + 4, i + 8));
        const body = b.slice(i + 8, i + 8 + len);
        expect(crc32(b.slice(i + 4, i + 8 + len)), `${type} CRC`).toBe(view.getUint32(i + 8 + len));
        if (type === "IHDR") {
          width = view.getUint32(i + 8);
          height = view.getUint32(i + 12);
          expect([body[8], body[9]]).toEqual([8, 2]); // 8-bit RGB
        }
        if (type === "IDAT") idat = new Uint8Array([...idat, ...body]);
        if (type === "IEND") sawEnd = true;
        i += 12 + len;
      }
      expect(sawEnd).toBe(true);
      expect(await inflate(idat)).toBe(height * (1 + width * 3));
    });
  }
});
