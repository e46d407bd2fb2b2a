// Payload encryption for Web Push, both encodings Mastodon sends:
// - `aes128gcm` (RFC 8291 over RFC 8188), for subscriptions made with `subscription[standard]=true`. This is
//   @block65/webcrypto-web-push's encryptNotification, without its padding to 4 KB: Mastodon does not pad, and relays
//   that forward the ciphertext base64-encoded inside an APNs/FCM message (the official apps' relay, toot-relay)
//   must fit their own 4 KB limits.
// - `aesgcm` (draft-ietf-webpush-encryption-04 over draft-ietf-httpbis-encryption-encoding-03), the legacy encoding
//   Mastodon still uses for every subscription that does not ask for the standard one. The library has no aesgcm, so
//   it is written here on WebCrypto (ECDH P-256, native HKDF-SHA-256, AES-128-GCM); the salt and the ephemeral
//   public key travel in the `Encryption` and `Crypto-Key` headers instead of a body header.
import { encryptNotification } from "@block65/webcrypto-web-push";
import { concatBytes, decodeBase64, utf8 } from "./base64";

/** Push services must accept 4096 octets of body; this leaves room for the aes128gcm header (86) and tag (17). */
export const MAX_PLAINTEXT = 4096 - 86 - 17;

export interface ClientKeys {
  p256dh: string;
  auth: string;
}

/** Decodes and checks a subscription's keys: a valid uncompressed P-256 point and a 16-byte auth secret. */
export async function parseClientKeys(keys: ClientKeys): Promise<{ publicKey: Uint8Array; auth: Uint8Array } | null> {
  const publicKey = decodeBase64(keys.p256dh);
  const auth = decodeBase64(keys.auth);
  if (publicKey?.length !== 65 || publicKey[0] !== 4 || !auth || auth.length !== 16) return null;
  try {
    await crypto.subtle.importKey("raw", publicKey, { name: "ECDH", namedCurve: "P-256" }, false, []);
  } catch {
    return null; // not a point on the curve
  }
  return { publicKey, auth };
}

export async function encryptAes128gcm(keys: ClientKeys, plaintext: Uint8Array): Promise<Uint8Array> {
  return encryptNotification({ endpoint: "", expirationTime: null, keys }, plaintext, { pad: false });
}

async function hkdf(salt: Uint8Array, ikm: Uint8Array, info: Uint8Array, length: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, length * 8));
}

const u16 = (n: number) => new Uint8Array([n >> 8, n & 0xff]);

export interface AesgcmResult {
  body: Uint8Array;
  salt: Uint8Array;
  /** The ephemeral ECDH public key (`Crypto-Key: dh=`). */
  serverPublicKey: Uint8Array;
}

export async function encryptAesgcm(keys: ClientKeys, plaintext: Uint8Array): Promise<AesgcmResult> {
  if (plaintext.length > MAX_PLAINTEXT) throw new Error(`push payload is ${plaintext.length} bytes, the maximum is ${MAX_PLAINTEXT}`);
  const client = await parseClientKeys(keys);
  if (!client) throw new Error("invalid subscription keys");
  const clientKey = await crypto.subtle.importKey("raw", client.publicKey, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const local = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const serverPublicKey = new Uint8Array((await crypto.subtle.exportKey("raw", local.publicKey)) as ArrayBuffer);
  // The runtime reads `public` (workers-types spells it `$public`).
  const ecdh = { name: "ECDH", public: clientKey } as unknown as SubtleCryptoDeriveKeyAlgorithm;
  const shared = new Uint8Array(await crypto.subtle.deriveBits(ecdh, local.privateKey, 256));
  const salt = crypto.getRandomValues(new Uint8Array(16));
  // The auth secret is mixed in first; the key and nonce infos then carry both public keys ("P-256" context).
  const ikm = await hkdf(client.auth, shared, utf8("Content-Encoding: auth\0"), 32);
  const context = concatBytes(utf8("P-256\0"), u16(65), client.publicKey, u16(65), serverPublicKey);
  const cek = await hkdf(salt, ikm, concatBytes(utf8("Content-Encoding: aesgcm\0"), context), 16);
  const nonce = await hkdf(salt, ikm, concatBytes(utf8("Content-Encoding: nonce\0"), context), 12);
  const key = await crypto.subtle.importKey("raw", cek, "AES-GCM", false, ["encrypt"]);
  // One record: a two-byte padding length (zero), then the data.
  const body = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce }, key, concatBytes(u16(0), plaintext)));
  return { body, salt, serverPublicKey };
}
