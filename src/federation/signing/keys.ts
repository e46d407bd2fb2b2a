// RSA-2048 keys for actors, PEM in and out, on WebCrypto (RSASSA-PKCS1-v1_5 / SHA-256, as Mastodon uses).
import { isolateMap } from "../../lib/limits/bounded-map";
import { base64, fromBase64, utf8 } from "../../lib/security/crypto";

const ALG = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

function toPem(der: ArrayBuffer, label: string): string {
  const b64 = base64(new Uint8Array(der));
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;
}

export function fromPem(pem: string): Uint8Array {
  return fromBase64(pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, ""));
}

export async function generateKeyPair(): Promise<{ publicKeyPem: string; privateKeyPem: string }> {
  const pair = (await crypto.subtle.generateKey({ ...ALG, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const spki = (await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer;
  const pkcs8 = (await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer;
  return { publicKeyPem: toPem(spki, "PUBLIC KEY"), privateKeyPem: toPem(pkcs8, "PRIVATE KEY") };
}

/**
 * A memo of imported keys by PEM (importing parses the DER each time) of at most `max` keys, the oldest leaving first:
 * many remote public keys, few local private ones.
 */
function keyImporter(name: string, format: "spki" | "pkcs8", usage: "sign" | "verify", max: number): (pem: string) => Promise<CryptoKey> {
  const cache = isolateMap<string, Promise<CryptoKey>>(name, max);
  return (pem) => {
    let k = cache.get(pem);
    if (!k) {
      k = crypto.subtle.importKey(format, fromPem(pem), ALG, false, [usage]);
      cache.set(pem, k);
    }
    return k;
  };
}

export const importPublicKey = keyImporter("keys: RSA public keys by PEM", "spki", "verify", 500);
export const importPrivateKey = keyImporter("keys: RSA private keys by PEM", "pkcs8", "sign", 100);

export async function rsaSign(privateKeyPem: string, data: string): Promise<string> {
  const sig = await crypto.subtle.sign(ALG, await importPrivateKey(privateKeyPem), utf8(data));
  return base64(new Uint8Array(sig));
}

export async function rsaVerify(publicKeyPem: string, data: string, signatureB64: string): Promise<boolean> {
  let sig: Uint8Array;
  try {
    sig = fromBase64(signatureB64);
  } catch {
    return false;
  }
  try {
    return await crypto.subtle.verify(ALG, await importPublicKey(publicKeyPem), sig, utf8(data));
  } catch {
    return false;
  }
}
