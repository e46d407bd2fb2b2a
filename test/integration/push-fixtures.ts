// The user agent's side of Web Push, on WebCrypto, for the push tests: a subscription's key pair and auth secret,
// RFC 8291 (aes128gcm) and legacy aesgcm decryption, and VAPID JWT verification (RFC 8292) against the server key.
// Written from the RFCs, independently of src/push, so a mistake there cannot cancel out here.
import { fetchMock } from "../support/fetch-mock";
import { expect, vi } from "vitest";

const te = new TextEncoder();

export function b64u(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function unb64u(s: string): Uint8Array {
  const t = s.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  const bin = atob(t + "=".repeat((4 - (t.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

const cat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let i = 0;
  for (const p of parts) {
    out.set(p, i);
    i += p.length;
  }
  return out;
};

export interface PushClient {
  p256dh: string;
  auth: string;
  publicKey: Uint8Array;
  authSecret: Uint8Array;
  privateKey: CryptoKey;
}

/** A browser-like subscription key pair (ECDH P-256) and a 16-byte auth secret. */
export async function makePushClient(): Promise<PushClient> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const publicKey = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const authSecret = crypto.getRandomValues(new Uint8Array(16));
  return { p256dh: b64u(publicKey), auth: b64u(authSecret), publicKey, authSecret, privateKey: pair.privateKey };
}

async function hkdf(salt: Uint8Array, ikm: Uint8Array, info: Uint8Array, bytes: number): Promise<Uint8Array> {
  // HKDF by hand (RFC 5869) rather than WebCrypto's HKDF, to stay independent of the implementation under test.
  const hmac = async (key: Uint8Array, data: Uint8Array) => {
    const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Uint8Array(await crypto.subtle.sign("HMAC", k, data));
  };
  const prk = await hmac(salt, ikm);
  let t = new Uint8Array(0);
  let out = new Uint8Array(0);
  for (let i = 1; out.length < bytes; i++) {
    t = await hmac(prk, cat(t, info, new Uint8Array([i])));
    out = cat(out, t);
  }
  return out.slice(0, bytes);
}

async function ecdh(client: PushClient, serverPublic: Uint8Array): Promise<Uint8Array> {
  const pub = await crypto.subtle.importKey("raw", serverPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const alg = { name: "ECDH", public: pub } as unknown as SubtleCryptoDeriveKeyAlgorithm;
  return new Uint8Array(await crypto.subtle.deriveBits(alg, client.privateKey, 256));
}

async function aesGcmDecrypt(key: Uint8Array, iv: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
  return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, k, data));
}

/** RFC 8291 / RFC 8188, one record: header (salt, rs, idlen, keyid = sender's public key), then the record. */
export async function decryptAes128gcm(client: PushClient, body: Uint8Array): Promise<string> {
  const salt = body.slice(0, 16);
  const rs = new DataView(body.buffer, body.byteOffset + 16, 4).getUint32(0);
  const idlen = body[20];
  expect(idlen).toBe(65);
  const asPublic = body.slice(21, 21 + idlen);
  const record = body.slice(21 + idlen);
  expect(record.length).toBeLessThanOrEqual(rs);
  const shared = await ecdh(client, asPublic);
  const ikm = await hkdf(client.authSecret, shared, cat(te.encode("WebPush: info\0"), client.publicKey, asPublic), 32);
  const cek = await hkdf(salt, ikm, te.encode("Content-Encoding: aes128gcm\0"), 16);
  const nonce = await hkdf(salt, ikm, te.encode("Content-Encoding: nonce\0"), 12);
  const plain = await aesGcmDecrypt(cek, nonce, record);
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  expect(plain[end]).toBe(2); // the last record's delimiter
  return new TextDecoder().decode(plain.slice(0, end));
}

function headerParam(h: string | null, name: string): string {
  for (const part of (h ?? "").split(/[;,]/)) {
    const [k, v] = part.trim().split("=");
    if (k === name && v) return v.trim();
  }
  throw new Error(`no ${name} in ${h}`);
}

/** Legacy aesgcm: salt in `Encryption`, the sender's key in `Crypto-Key: dh=`, a 2-byte padding length in front. */
export async function decryptAesgcm(client: PushClient, body: Uint8Array, headers: Headers): Promise<string> {
  const salt = unb64u(headerParam(headers.get("encryption"), "salt"));
  const dh = unb64u(headerParam(headers.get("crypto-key"), "dh"));
  const shared = await ecdh(client, dh);
  const ikm = await hkdf(client.authSecret, shared, te.encode("Content-Encoding: auth\0"), 32);
  const len = (n: number) => new Uint8Array([n >> 8, n & 255]);
  const context = cat(te.encode("P-256\0"), len(65), client.publicKey, len(65), dh);
  const cek = await hkdf(salt, ikm, cat(te.encode("Content-Encoding: aesgcm\0"), context), 16);
  const nonce = await hkdf(salt, ikm, cat(te.encode("Content-Encoding: nonce\0"), context), 12);
  const plain = await aesGcmDecrypt(cek, nonce, body);
  const pad = (plain[0] << 8) | plain[1];
  return new TextDecoder().decode(plain.slice(2 + pad));
}

/**
 * Checks the VAPID identification of a push request, in either form Mastodon sends (`vapid t=…, k=…`, or `WebPush
 * <jwt>` with `Crypto-Key: p256ecdsa=`): the key is the server's, the ES256 signature verifies, aud is the push
 * service's origin, exp is within 24 hours, sub is set. Returns the claims.
 */
export async function verifyVapid(headers: Headers, serverKey: string, endpoint: string) {
  const auth = headers.get("authorization") ?? "";
  let jwt: string;
  let key: string;
  if (auth.startsWith("vapid ")) {
    jwt = headerParam(auth.slice(6), "t");
    key = headerParam(auth.slice(6), "k");
  } else {
    expect(auth).toMatch(/^WebPush [\w-]+\.[\w-]+\.[\w-]+$/);
    jwt = auth.slice(8);
    key = headerParam(headers.get("crypto-key"), "p256ecdsa");
  }
  expect(key).toBe(serverKey);
  const [h, p, s] = jwt.split(".");
  expect(JSON.parse(new TextDecoder().decode(unb64u(h)))).toMatchObject({ alg: "ES256" });
  const pub = await crypto.subtle.importKey("raw", unb64u(key), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const ok = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, unb64u(s), te.encode(`${h}.${p}`));
  expect(ok).toBe(true);
  const claims = JSON.parse(new TextDecoder().decode(unb64u(p))) as { aud: string; exp: number; sub: string };
  expect(claims.aud).toBe(new URL(endpoint).origin);
  const now = Date.now() / 1000;
  expect(claims.exp).toBeGreaterThan(now);
  expect(claims.exp).toBeLessThanOrEqual(now + 24 * 3600);
  expect(claims.sub).toMatch(/^(mailto:|https?:)/);
  return claims;
}

export interface SeenPush {
  path: string;
  headers: Headers;
  body: Uint8Array;
}

// fetchMock hands interceptors the request body as UTF-8-decoded text, which mangles ciphertext. So the exact bytes
// are taken from the request itself, by a spy in front of the mocked fetch, in the order requests are made.
const rawBodies: Uint8Array[] = [];
let spying = false;

function captureRawBodies(): void {
  if (spying) return;
  spying = true;
  const mocked = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    if (new URL(req.url).host === "push.example") rawBodies.push(new Uint8Array(await req.clone().arrayBuffer()));
    return mocked(req);
  });
}

/** A simulated push service on https://push.example: the next POST to `path` answers `status`; calls are recorded. */
export function pushService(path: string, status: number, headers: Record<string, string> = {}, seen: SeenPush[] = []) {
  captureRawBodies();
  fetchMock
    .get("https://push.example")
    .intercept({ path, method: "POST" })
    .reply((opts) => {
      seen.push({ path: opts.path, headers: new Headers(opts.headers as Record<string, string>), body: rawBodies.shift()! });
      return { statusCode: status, data: "", responseOptions: { headers } };
    });
  return seen;
}
