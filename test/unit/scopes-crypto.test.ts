import { describe, expect, it } from "vitest";
import { base64, base64url, fromBase64, hashPassword, PASSWORD_ITERATIONS, verifyPassword } from "../../src/lib/security/crypto";
import { parseScopes, scopeAllows } from "../../src/oauth/scopes";

describe("scopes", () => {
  it("parents cover children and follow is covered by read+write", () => {
    const g = new Set(["read", "write"]);
    expect(scopeAllows(g, "read:statuses")).toBe(true);
    expect(scopeAllows(g, "follow")).toBe(true);
    expect(scopeAllows(new Set(["follow"]), "write:follows")).toBe(true);
    expect(scopeAllows(new Set(["write:favourites"]), "write:statuses")).toBe(false);
    expect(scopeAllows(new Set(["admin:read"]), "admin:read:accounts")).toBe(true);
    expect(scopeAllows(new Set(["read"]), "admin:read")).toBe(false);
  });

  it("rejects unknown scopes", () => {
    expect(parseScopes("read write follow push")).toEqual(["read", "write", "follow", "push"]);
    expect(parseScopes("read nonsense")).toBeNull();
    expect(parseScopes("")).toEqual(["read"]);
  });
});

describe("passwords", () => {
  it("stay within the Workers PBKDF2 ceiling and verify", async () => {
    expect(PASSWORD_ITERATIONS).toBeLessThanOrEqual(100_000);
    const h = await hashPassword("hunter22hunter22", "pepper");
    expect(h.split("$")[1]).toBe("100000");
    expect(await verifyPassword("hunter22hunter22", h, "pepper")).toBe(true);
    expect(await verifyPassword("hunter22hunter22", h, "other")).toBe(false);
    expect(await verifyPassword("wrong", h, "pepper")).toBe(false);
    await expect(hashPassword("x", "", 100_001)).rejects.toThrow();
  });
});

describe("base64", () => {
  it("encodes as btoa does, across the chunk boundary, and round-trips", () => {
    expect(base64(new TextEncoder().encode("hello"))).toBe("aGVsbG8=");
    expect(base64(new Uint8Array(0))).toBe("");
    for (const n of [1, 255, 256, 0x2000 - 1, 0x2000, 0x2000 + 1, 3 * 0x2000 + 7]) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 131 + n) & 0xff);
      let bin = "";
      for (const b of bytes) bin += String.fromCharCode(b);
      expect(base64(bytes)).toBe(btoa(bin));
      expect(fromBase64(base64(bytes))).toEqual(bytes);
    }
  });

  it("encodes every length and byte value as btoa does, URL-safe without padding too", () => {
    for (let n = 0; n < 70; n++) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 97 + n * 31 + 255) & 0xff);
      let bin = "";
      for (const b of bytes) bin += String.fromCharCode(b);
      const std = btoa(bin);
      expect(base64(bytes)).toBe(std);
      expect(base64url(bytes)).toBe(std.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
      expect(fromBase64(base64url(bytes))).toEqual(bytes);
    }
    const all = new Uint8Array(256).map((_, i) => i);
    expect(fromBase64(base64(all))).toEqual(all);
    // Past the reused 4 KiB buffer (an output over 4,096 characters gets its own), and the buffer reused after it.
    const big = new Uint8Array(5000).map((_, i) => (i * 131) & 0xff);
    let bigBin = "";
    for (const b of big) bigBin += String.fromCharCode(b);
    expect(base64(big)).toBe(btoa(bigBin));
    expect(base64(all)).toBe(btoa(String.fromCharCode(...all)));
  });
});
