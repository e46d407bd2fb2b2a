// Tokens, hashes and password hashing on WebCrypto.

const enc = new TextEncoder();

/** UTF-8 bytes of `s`, through the module's one TextEncoder (each encoder is a runtime object). */
export const utf8 = (s: string): Uint8Array => enc.encode(s);

export function toHex(buf: ArrayBuffer | Uint8Array): string {
  const b = buf instanceof Uint8Array ? buf : new Uint8Array(buf);
  let s = "";
  for (const x of b) s += x.toString(16).padStart(2, "0");
  return s;
}

const B64 = utf8("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
const B64URL = utf8("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
const ascii = new TextDecoder();
/** Where encode64 writes (reused: it runs to its end synchronously); a larger output gets a buffer of its own. */
const scratch = new Uint8Array(4096);

/**
 * Base64 of `bytes` written as ASCII codes into one buffer, decoded to a string once: `btoa` wants a binary string
 * first, and making one from bytes (`String.fromCharCode.apply`) lists every byte as an argument, a few KiB of
 * garbage for each signature a delivery sends. The buffer is reused, not made per call: every new ArrayBuffer is one
 * more the young-generation collections sweep.
 */
function encode64(bytes: Uint8Array, table: Uint8Array, pad: boolean): string {
  const n = bytes.length;
  const rest = n % 3;
  const size = Math.floor(n / 3) * 4 + (rest === 0 ? 0 : pad ? 4 : rest + 1);
  const out = size <= scratch.length ? scratch : new Uint8Array(size);
  let o = 0;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = table[v >> 18]!;
    out[o++] = table[(v >> 12) & 63]!;
    out[o++] = table[(v >> 6) & 63]!;
    out[o++] = table[v & 63]!;
  }
  if (rest) {
    const v = (bytes[i]! << 16) | (rest === 2 ? bytes[i + 1]! << 8 : 0);
    out[o++] = table[v >> 18]!;
    out[o++] = table[(v >> 12) & 63]!;
    if (rest === 2) out[o++] = table[(v >> 6) & 63]!;
    else if (pad) out[o++] = 61; // "="
    if (pad) out[o++] = 61;
  }
  return ascii.decode(out.subarray(0, size));
}

export function base64url(bytes: Uint8Array): string {
  return encode64(bytes, B64URL, false);
}

export function base64(bytes: Uint8Array): string {
  return encode64(bytes, B64, true);
}

export function fromBase64(s: string): Uint8Array {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** 256-bit random secret, URL-safe. */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", enc.encode(text)));
}

export async function sha256Base64url(text: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(text))));
}

/** Constant-time comparison of two strings. */
export function safeEqual(a: string, b: string): boolean {
  const x = enc.encode(a);
  const y = enc.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

// Passwords: PBKDF2-SHA-256 over an HMAC(pepper) of the password. Workers cap PBKDF2 at 100,000 iterations in
// production (wrangler dev does not), so that is the ceiling; the pepper is a Worker secret, not in D1, so a database
// dump alone cannot be brute-forced. Format `pbkdf2-sha256$<iterations>$<salt>$<hash>` leaves room to upgrade.
export const PASSWORD_ITERATIONS = 100_000;

async function pepper(password: string, pepperKey: string): Promise<Uint8Array> {
  if (!pepperKey) return enc.encode(password);
  const key = await crypto.subtle.importKey("raw", enc.encode(pepperKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(password)));
}

async function derive(password: string, salt: Uint8Array, iterations: number, pepperKey: string): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey("raw", await pepper(password, pepperKey), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, material, 256);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string, pepperKey = "", iterations = PASSWORD_ITERATIONS): Promise<string> {
  if (iterations > 100_000) throw new Error("PBKDF2 iterations above 100000 fail on Workers");
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(password, salt, iterations, pepperKey);
  return `pbkdf2-sha256$${iterations}$${base64url(salt)}$${base64url(hash)}`;
}

export async function verifyPassword(password: string, stored: string, pepperKey = ""): Promise<boolean> {
  const [scheme, iter, salt, hash] = stored.split("$");
  if (scheme !== "pbkdf2-sha256" || !iter || !salt || !hash) return false;
  const iterations = Number(iter);
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > 100_000) return false;
  const got = await derive(password, fromBase64(salt), iterations, pepperKey);
  return safeEqual(base64url(got), hash);
}
