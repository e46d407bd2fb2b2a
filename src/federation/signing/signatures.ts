// HTTP Signatures, draft-cavage as Mastodon signs and checks them (security §2.7): rsa-sha256 over
// (request-target), host, date and digest. Verification is split so that parsing/format errors (always 401) are
// decided before any key is fetched, and the key's owner can be checked against the activity's actor by the caller.
// RFC 9421 (HTTP Message Signatures) is parsed, checked and verified in rfc9421.ts; parseRequestSignature,
// checkSignedRequest and verifyWithKey dispatch on which one a request carries (`Signature-Input` → RFC 9421).
import { base64, utf8 } from "../../lib/security/crypto";
import { rsaSign, rsaVerify } from "./keys";
import type { Outgoing } from "../../net/outgoing";
import type { DB } from "../../db/client";
import { checkRfc9421Request, parseRfc9421, rememberSpec, Rfc9421Error, type Rfc9421Signature, verifyRfc9421WithKey } from "./rfc9421";

export class SignatureError extends Error {}

/** A draft-cavage signature or an RFC 9421 one (`spec: "rfc9421"`). */
export type ParsedSignature = CavageSignature | Rfc9421Signature;

const isRfc9421 = (sig: ParsedSignature): sig is Rfc9421Signature => "spec" in sig && sig.spec === "rfc9421";

/** The signature a request carries: RFC 9421 when it has `Signature-Input`, else draft-cavage. Throws SignatureError. */
export function parseRequestSignature(headers: Headers): ParsedSignature {
  if (!headers.has("signature-input")) return parseSignatureHeader(headers.get("signature"));
  try {
    return parseRfc9421(headers.get("signature-input"), headers.get("signature"));
  } catch (e) {
    if (e instanceof Rfc9421Error) throw new SignatureError(e.message);
    throw e;
  }
}

/**
 * After a verified request: a host that signed with RFC 9421 speaks it, so our deliveries and fetches to it start
 * with RFC 9421 (double knocking). One write per host and isolate at most, none for draft-cavage signers.
 */
export async function noteSignatureSpec(db: DB, sig: ParsedSignature): Promise<void> {
  if (!isRfc9421(sig)) return;
  let host: string;
  try {
    host = new URL(sig.keyId).host;
  } catch {
    return;
  }
  await rememberSpec(db, host, "rfc9421", true).catch(() => {});
}

export interface CavageSignature {
  keyId: string;
  algorithm: string | null;
  headers: string[];
  signature: string;
  /** The `created` / `expires` parameters as sent; they count only when `headers` covers `(created)` / `(expires)`. */
  created: string | null;
  expires: string | null;
}

const MAX_SKEW_FUTURE_MS = 60 * 60 * 1000; // created at most 1 h in the future
const CLOCK_SKEW_MS = 60 * 60 * 1000; // accepted after expiry (Mastodon's CLOCK_SKEW_MARGIN)
const DEFAULT_LIFETIME_MS = 5 * 60 * 1000; // a signature without a signed (expires) lives 5 min
const MAX_LIFETIME_MS = 12 * 3600 * 1000; // a signed (expires) never reaches further than 12 h (EXPIRATION_WINDOW_LIMIT)

/** The parameters that mean something here; any other parameter is ignored, whatever it says and however often. */
const KNOWN_PARAMS = new Set(["keyid", "signature", "algorithm", "headers", "created", "expires"]);
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
// RFC 9110 auth-param: token BWS "=" BWS ( token / quoted-string ), separated by commas.
const PARAM = new RegExp(`[ \\t]*(${TOKEN})[ \\t]*=[ \\t]*(?:"((?:[^"\\\\]|\\\\.)*)"|(${TOKEN}))[ \\t]*(?:,|$)`, "y");

export function parseSignatureHeader(value: string | null): CavageSignature {
  if (!value) throw new SignatureError("Request not signed");
  if (value.length > 8192) throw new SignatureError("Signature header too long");
  const params = new Map<string, string>();
  const repeated = new Set<string>();
  let pos = 0;
  for (let n = 0; pos < value.length; n++) {
    if (n >= 64) throw new SignatureError("Malformed Signature header");
    PARAM.lastIndex = pos;
    const m = PARAM.exec(value);
    if (!m) throw new SignatureError("Malformed Signature header");
    pos = PARAM.lastIndex;
    const key = (m[1] ?? "").toLowerCase(); // the name group always participates
    if (!KNOWN_PARAMS.has(key)) continue;
    if (params.has(key)) repeated.add(key);
    // Exactly one of the quoted (2) and token (3) alternatives participates.
    params.set(key, m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? ""));
  }
  // A repeated parameter that decides what is verified (key, signature, algorithm, covered headers) is ambiguous:
  // refused. A repeated created/expires is refused only if it is signed (checkSignedRequest), else it changes nothing.
  for (const k of ["keyid", "signature", "algorithm", "headers"]) {
    if (repeated.has(k)) throw new SignatureError("Duplicate parameter in Signature header");
  }
  const keyId = params.get("keyid");
  const signature = params.get("signature");
  if (!keyId || !signature) throw new SignatureError("Incompatible request signature. keyId and signature are required");
  const algorithm = params.get("algorithm") ?? null;
  if (algorithm && !["rsa-sha256", "hs2019"].includes(algorithm.toLowerCase())) throw new SignatureError(`Unsupported signature algorithm ${algorithm}`);
  const headers = (params.get("headers") ?? "date").toLowerCase().split(/\s+/).filter(Boolean);
  const raw = (k: string) => (repeated.has(k) ? "" : (params.get(k) ?? null)); // "" never passes as a time
  return { keyId, algorithm, headers, signature, created: raw("created"), expires: raw("expires") };
}

const PSEUDO_HEADERS = new Set(["(request-target)", "(created)", "(expires)"]);
const HEADER_NAME = new RegExp(`^${TOKEN}$`);

/** Seconds since the epoch as a signature parameter (digits only), in ms; null when not a plausible time. */
function epochParam(v: string | null): number | null {
  if (v == null || !/^\d{1,12}$/.test(v)) return null;
  return Number(v) * 1000;
}

export interface VerifiableRequest {
  method: string;
  /** path + query as received */
  target: string;
  /** The absolute URL as received (RFC 9421's "@target-uri"; without it, `target` on this origin cannot be rebuilt). */
  url?: string;
  headers: Headers;
  body?: Uint8Array | null;
}

async function sha256Base64(body: Uint8Array): Promise<string> {
  return base64(new Uint8Array(await crypto.subtle.digest("SHA-256", body)));
}

/** Checks everything except the cryptographic signature; returns the signing strings to try. */
export async function checkSignedRequest(req: VerifiableRequest, sig: ParsedSignature, now = Date.now()): Promise<string[]> {
  if (isRfc9421(sig)) {
    if (!req.url) throw new SignatureError("RFC 9421 signatures need the request URL");
    try {
      return await checkRfc9421Request({ method: req.method, url: req.url, headers: req.headers, body: req.body }, sig, now);
    } catch (e) {
      if (e instanceof Rfc9421Error) throw new SignatureError(e.message);
      throw e;
    }
  }
  return checkCavageRequest(req, sig, now);
}

async function checkCavageRequest(req: VerifiableRequest, sig: CavageSignature, now: number): Promise<string[]> {
  const h = sig.headers;
  const isPost = req.method.toUpperCase() === "POST";
  if (!h.includes("date") && !h.includes("(created)")) throw new SignatureError("Mastodon requires the Date header or (created) pseudo-header to be signed");
  if (!h.includes("(request-target)") && !h.includes("digest"))
    throw new SignatureError("Mastodon requires the Digest header or (request-target) pseudo-header to be signed");
  if (isPost && !h.includes("digest")) throw new SignatureError("Mastodon requires the Digest header to be signed when doing a POST request");
  if (!isPost && !h.includes("host")) throw new SignatureError("Mastodon requires the Host header to be signed when doing a GET request");

  for (const name of h) {
    if (name.startsWith("(") ? !PSEUDO_HEADERS.has(name) : !HEADER_NAME.test(name)) throw new SignatureError(`Unsupported signed header ${name.slice(0, 64)}`);
  }

  // The time window is decided only by what the signature covers: `created`/`expires` parameters that are not in
  // `headers` (or are repeated) change nothing, so an unsigned parameter can never widen the window.
  let created: number;
  if (h.includes("(created)")) {
    const t = epochParam(sig.created);
    if (t == null) throw new SignatureError("Invalid (created) parameter");
    created = t;
  } else {
    const d = req.headers.get("date");
    const t = d ? Date.parse(d) : NaN;
    if (!Number.isFinite(t)) throw new SignatureError("Invalid Date header");
    created = t;
  }
  if (created - now > MAX_SKEW_FUTURE_MS) throw new SignatureError("Signed request date outside acceptable time window");
  let expires = created + DEFAULT_LIFETIME_MS;
  if (h.includes("(expires)")) {
    const t = epochParam(sig.expires);
    if (t == null) throw new SignatureError("Invalid (expires) parameter");
    expires = Math.min(t, created + MAX_LIFETIME_MS);
  }
  if (now > expires + CLOCK_SKEW_MS) throw new SignatureError("Signed request date outside acceptable time window");

  if (h.includes("digest") || isPost) {
    const digest = req.headers.get("digest");
    if (!digest) throw new SignatureError("Digest header missing");
    const parts = new Map(
      digest.split(",").map((p) => {
        const i = p.indexOf("=");
        return [p.slice(0, i).trim().toLowerCase(), p.slice(i + 1).trim()] as [string, string];
      }),
    );
    const sha = parts.get("sha-256");
    if (!sha) throw new SignatureError("Mastodon only supports SHA-256 in Digest header");
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(sha)) throw new SignatureError("Invalid Digest value: not a valid base64 string");
    const actual = await sha256Base64(req.body ?? new Uint8Array(0));
    if (actual !== sha) throw new SignatureError(`Invalid Digest value. Computed SHA-256 digest: ${actual}; given: ${sha}`);
  }

  const build = (target: string) =>
    h
      .map((name) => {
        if (name === "(request-target)") return `(request-target): ${req.method.toLowerCase()} ${target}`;
        if (name === "(created)") return `(created): ${sig.created}`;
        if (name === "(expires)") return `(expires): ${sig.expires}`;
        const v = req.headers.get(name);
        if (v == null) throw new SignatureError(`Signed header ${name} missing`);
        return `${name}: ${v}`;
      })
      .join("\n");
  const targets = [req.target];
  const q = req.target.indexOf("?");
  if (q >= 0) targets.push(req.target.slice(0, q)); // Mastodon tries with and without the query
  return targets.map(build);
}

export async function verifyWithKey(signingStrings: string[], sig: ParsedSignature, publicKeyPem: string): Promise<boolean> {
  if (isRfc9421(sig)) return verifyRfc9421WithKey(signingStrings, sig, publicKeyPem);
  for (const s of signingStrings) if (await rsaVerify(publicKeyPem, s, sig.signature)) return true;
  return false;
}

/** The Digest header of a body (draft-cavage). */
export async function cavageDigest(body: string): Promise<string> {
  return `SHA-256=${await sha256Base64(utf8(body))}`;
}

/**
 * Signs an outgoing request (Mastodon's header set): adds Host, Date, Digest (POST) and Signature. `digest`, when the
 * caller has it (a delivery pack sends one body to each of its inboxes), is the body's Digest header already made.
 */
export async function signCavage(o: Outgoing, keyId: string, privateKeyPem: string, body?: string, digest?: string): Promise<Outgoing> {
  const headers: Record<string, string> = { ...o.headers, host: o.host, date: new Date().toUTCString() };
  const names = ["(request-target)", "host", "date"];
  if (o.method === "POST") {
    headers.digest = digest ?? (await cavageDigest(body ?? ""));
    names.push("digest");
    if (headers["content-type"] !== undefined) names.push("content-type");
  } else if (headers.accept !== undefined) {
    names.push("accept");
  }
  const signing = names.map((n) => (n === "(request-target)" ? `(request-target): ${o.method.toLowerCase()} ${o.target}` : `${n}: ${headers[n]}`)).join("\n");
  const signature = await rsaSign(privateKeyPem, signing);
  headers.signature = `keyId="${keyId}",algorithm="rsa-sha256",headers="${names.join(" ")}",signature="${signature}"`;
  return { ...o, headers };
}
