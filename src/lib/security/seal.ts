// Small secrets kept in D1 sealed with AES-GCM under SECRET_KEY_BASE (as access tokens and the VAPID key are), each
// kind under its own label so one kind's ciphertext never opens as another's. A D1 dump alone reveals none of them.
import { base64url, fromBase64 } from "./crypto";

const enc = new TextEncoder();

async function sealingKey(secret: string, label: string): Promise<CryptoKey> {
  const raw = await crypto.subtle.digest("SHA-256", enc.encode(`${label}:${secret}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

export async function sealText(secret: string, label: string, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sealingKey(secret, label), enc.encode(text));
  return `${base64url(iv)}.${base64url(new Uint8Array(ct))}`;
}

export async function unsealText(secret: string, label: string, sealed: string): Promise<string | null> {
  const [iv, ct] = sealed.split(".");
  if (!iv || !ct) return null;
  try {
    const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(iv) }, await sealingKey(secret, label), fromBase64(ct));
    return new TextDecoder().decode(pt);
  } catch {
    return null;
  }
}

/** HMAC-SHA-256 hex of `text` under SECRET_KEY_BASE and a label: a keyed hash for short codes. */
export async function keyedHash(secret: string, label: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", enc.encode(`${label}:${secret}`), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(text)));
  let s = "";
  for (const x of mac) s += x.toString(16).padStart(2, "0");
  return s;
}
