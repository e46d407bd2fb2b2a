// Push keys arrive as base64 or base64url, padded or not (browsers give base64url without padding, Mastodon's own
// tools pad). Decode any of these strictly; encode as base64url without padding (RFC 8292 `k=`, RFC 8291 keys).
import { base64url } from "../lib/security/crypto";

export { base64url };

/** Bytes of a base64 / base64url string, or null when it is not one. */
export function decodeBase64(s: string): Uint8Array | null {
  const t = s.trim().replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]*$/.test(t) || t.length % 4 === 1) return null;
  let bin: string;
  try {
    bin = atob(t + "=".repeat((4 - (t.length % 4)) % 4));
  } catch {
    return null;
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export { utf8 } from "../lib/security/crypto";

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
