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

export function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const x of bytes) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function base64(bytes: Uint8Array): string {
  let s = "";
  // A chunk of bytes per String.fromCharCode call: one string per 8 KiB, not one per byte (a signature was 256).
  // (apply takes the typed array as its argument list directly; a spread would iterate it element by element.)
  for (let i = 0; i < bytes.length; i += 0x2000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x2000) as unknown as number[]);
  return btoa(s);
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
