// VAPID (RFC 8292) application-server keys and the JWT that identifies this server to push services.
//
// The operator may set VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY (Mastodon's format: base64url of the uncompressed P-256
// point and of the 32-byte private scalar). Otherwise a pair is made the first time one is needed and kept in D1
// (`vapid_keys`, a single row), so push works on a fresh deploy with no extra step. The private scalar is stored
// sealed (AES-GCM under SECRET_KEY_BASE, like access tokens), so a D1 dump alone cannot sign pushes.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { vapidKeys } from "../db/schema";
import type { Env } from "../env";
import { base64url, decodeBase64, utf8 } from "./base64";

export type VapidRow = typeof vapidKeys.$inferSelect;

export interface VapidKeys {
  /** base64url (no padding) of the 65-byte uncompressed point: `server_key`, `k=`, `p256ecdsa=`. */
  publicKey: string;
  /** ECDSA P-256 signing key. */
  privateKey: CryptoKey;
}

/** What the VAPID keys are read from: the operator's pair, and the secret that seals a generated one. */
export type VapidEnv = Pick<Env, "VAPID_PUBLIC_KEY" | "VAPID_PRIVATE_KEY" | "SECRET_KEY_BASE">;

/** The operator's pair when both halves are set and well-formed, else null. */
function envPair(env: VapidEnv): { publicKey: string; d: string } | null {
  const pub = env.VAPID_PUBLIC_KEY?.trim();
  const priv = env.VAPID_PRIVATE_KEY?.trim();
  if (!pub || !priv) return null;
  const p = decodeBase64(pub);
  const d = decodeBase64(priv);
  if (p?.length !== 65 || p[0] !== 4 || !d || d.length !== 32) {
    console.error("VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY are malformed; using the stored pair");
    return null;
  }
  return { publicKey: base64url(p), d: base64url(d) };
}

/** The stored row (for a caller's batch). */
export function vapidRowQuery(db: DB) {
  return db.select().from(vapidKeys).where(eq(vapidKeys.id, 1)).limit(1);
}

const sealLabel = "tern-vapid-key:";

async function sealingKey(secret: string): Promise<CryptoKey> {
  const raw = await crypto.subtle.digest("SHA-256", utf8(`${sealLabel}${secret}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

async function seal(secret: string, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sealingKey(secret), utf8(text));
  return `${base64url(iv)}.${base64url(new Uint8Array(ct))}`;
}

async function unseal(secret: string, sealed: string): Promise<string | null> {
  const [iv, ct] = sealed.split(".");
  const ivBytes = iv ? decodeBase64(iv) : null;
  const ctBytes = ct ? decodeBase64(ct) : null;
  if (!ivBytes || !ctBytes) return null;
  try {
    return new TextDecoder().decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: ivBytes }, await sealingKey(secret), ctBytes));
  } catch {
    return null;
  }
}

/**
 * The stored pair, made now if there is none. Two isolates racing here both read back the one row that won
 * (INSERT OR IGNORE on the fixed id), so every caller sees the same key.
 */
export async function ensureVapidRow(db: DB, env: VapidEnv, known?: VapidRow | null): Promise<VapidRow> {
  if (known) return known;
  const existing = (await vapidRowQuery(db))[0];
  if (existing) return existing;
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const pub = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const sealed = await seal(env.SECRET_KEY_BASE ?? "", jwk.d!);
  await db.run(sql`INSERT OR IGNORE INTO vapid_keys (id, public_key, private_key_sealed, created_at)
    VALUES (1, ${base64url(pub)}, ${sealed}, ${Date.now()})`);
  const row = (await vapidRowQuery(db))[0];
  if (!row) throw new Error("VAPID key row missing after insert");
  return row;
}

/**
 * The public key clients subscribe with. `stored` is the row when the caller already read it in its own batch
 * (undefined: read it here; null: there is none yet).
 */
export async function vapidPublicKey(db: DB, env: VapidEnv, stored?: VapidRow | null): Promise<string> {
  const fromEnv = envPair(env);
  if (fromEnv) return fromEnv.publicKey;
  return (await ensureVapidRow(db, env, stored ?? null)).publicKey;
}

async function importSigningKey(publicKey: string, d: string): Promise<CryptoKey> {
  const p = decodeBase64(publicKey)!;
  return crypto.subtle.importKey(
    "jwk",
    { kty: "EC", crv: "P-256", x: base64url(p.slice(1, 33)), y: base64url(p.slice(33, 65)), d, ext: false },
    { name: "ECDSA", namedCurve: "P-256" },
    false,
    ["sign"],
  );
}

/** The signing pair: the operator's, else the stored one (made now if needed). */
export async function loadVapidKeys(db: DB, env: VapidEnv, stored?: VapidRow | null): Promise<VapidKeys> {
  const fromEnv = envPair(env);
  if (fromEnv) return { publicKey: fromEnv.publicKey, privateKey: await importSigningKey(fromEnv.publicKey, fromEnv.d) };
  const row = await ensureVapidRow(db, env, stored ?? null);
  const d = await unseal(env.SECRET_KEY_BASE ?? "", row.privateKeySealed);
  // SECRET_KEY_BASE changed since the pair was made: nothing can be signed until the operator restores it (or sets
  // VAPID_* explicitly). Failing loudly beats silently rotating the key under every existing subscription.
  if (!d) throw new Error("the stored VAPID private key cannot be unsealed with the current SECRET_KEY_BASE");
  return { publicKey: row.publicKey, privateKey: await importSigningKey(row.publicKey, d) };
}

const b64json = (o: unknown) => base64url(utf8(JSON.stringify(o)));

/**
 * The VAPID JWT (ES256) for one push service origin. 12 hours of validity: RFC 8292 allows at most 24, and push
 * services reject tokens that look longer than that to a clock running a little ahead.
 */
export async function vapidJwt(keys: VapidKeys, audience: string, subject: string, now = Date.now()): Promise<string> {
  const data = `${b64json({ typ: "JWT", alg: "ES256" })}.${b64json({ aud: audience, exp: Math.floor(now / 1000) + 12 * 3600, sub: subject })}`;
  // WebCrypto's ECDSA signature is already r || s (IEEE P1363), the JWS ES256 form.
  const sig = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, utf8(data)));
  return `${data}.${base64url(sig)}`;
}
