// TOTP (RFC 6238) over HOTP (RFC 4226) with WebCrypto HMAC, and the base32 (RFC 4648) that authenticator apps use
// for secrets. Tern's parameters are the ones every app assumes: SHA-1, 6 digits, 30-second steps.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;

export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (case, spaces and padding ignored); null when a character is outside the alphabet. */
export function base32Decode(text: string): Uint8Array | null {
  const s = text.toUpperCase().replace(/[\s=]/g, "");
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of s) {
    const i = ALPHABET.indexOf(ch);
    if (i < 0) return null;
    value = ((value << 5) | i) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}

/** HOTP value of `counter` (RFC 4226 §5.3, dynamic truncation), `digits` long with leading zeros. */
export async function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS, hash: "SHA-1" | "SHA-256" | "SHA-512" = "SHA-1"): Promise<string> {
  const msg = new Uint8Array(8);
  // The counter is a 64-bit big-endian integer; time steps stay far below 2^53.
  let c = counter;
  for (let i = 7; i >= 0; i--) {
    msg[i] = c & 0xff;
    c = Math.floor(c / 256);
  }
  const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, msg));
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const bin = (((mac[offset] ?? 0) & 0x7f) << 24) | ((mac[offset + 1] ?? 0) << 16) | ((mac[offset + 2] ?? 0) << 8) | (mac[offset + 3] ?? 0);
  return String(bin % 10 ** digits).padStart(digits, "0");
}

/** The RFC 6238 time step of a moment (milliseconds). */
export const timeStep = (ms: number) => Math.floor(ms / 1000 / TOTP_STEP_SECONDS);

export async function totp(secret: Uint8Array, ms: number, digits = TOTP_DIGITS, hash: "SHA-1" | "SHA-256" | "SHA-512" = "SHA-1"): Promise<string> {
  return hotp(secret, timeStep(ms), digits, hash);
}

/**
 * The time step whose code `code` is, within ±`window` steps of `ms`, or null. Every step of the window is computed
 * (no early exit), so the time taken does not tell which one matched.
 */
export async function matchTotp(secret: Uint8Array, code: string, ms: number, window = 1): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const now = timeStep(ms);
  let found: number | null = null;
  for (let d = -window; d <= window; d++) {
    const candidate = await hotp(secret, now + d);
    let diff = 0;
    for (let i = 0; i < TOTP_DIGITS; i++) diff |= candidate.charCodeAt(i) ^ code.charCodeAt(i);
    if (diff === 0 && found === null) found = now + d;
  }
  return found;
}

/** The key URI authenticator apps read (Google Authenticator's format): otpauth://totp/Issuer:label?secret=… */
export function otpauthUri(issuer: string, label: string, secretBase32: string): string {
  const q = new URLSearchParams({ secret: secretBase32, issuer, algorithm: "SHA1", digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) });
  return `otpauth://totp/${encodeURIComponent(issuer)}:${encodeURIComponent(label)}?${q}`;
}
