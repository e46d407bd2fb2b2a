// HTTP Signatures, draft-cavage as Mastodon signs and checks them (security §2.7): rsa-sha256 over
// (request-target), host, date and digest. Verification is split so that parsing/format errors (always 401) are
// decided before any key is fetched, and the key's owner can be checked against the activity's actor by the caller.
import { base64 } from "../lib/crypto";
import { rsaSign, rsaVerify } from "./keys";

export class SignatureError extends Error {}

export interface ParsedSignature {
  keyId: string;
  algorithm: string | null;
  headers: string[];
  signature: string;
  created: number | null;
  expires: number | null;
}

const MAX_SKEW_FUTURE_MS = 60 * 60 * 1000; // created at most 1 h in the future
const MAX_AGE_MS = 65 * 60 * 1000; // expires = created + 5 min, plus 1 h clock-skew margin

export function parseSignatureHeader(value: string | null): ParsedSignature {
  if (!value) throw new SignatureError("Request not signed");
  if (value.length > 8192) throw new SignatureError("Signature header too long");
  const params = new Map<string, string>();
  const re = /\s*([a-zA-Z]+)\s*=\s*(?:"([^"]*)"|(\d+))\s*(?:,|$)/y;
  let pos = 0;
  while (pos < value.length) {
    re.lastIndex = pos;
    const m = re.exec(value);
    if (!m) throw new SignatureError("Malformed Signature header");
    const key = m[1].toLowerCase();
    if (params.has(key)) throw new SignatureError("Duplicate parameter in Signature header");
    params.set(key, m[2] ?? m[3]);
    pos = re.lastIndex;
  }
  const keyId = params.get("keyid");
  const signature = params.get("signature");
  if (!keyId || !signature) throw new SignatureError("Incompatible request signature. keyId and signature are required");
  const algorithm = params.get("algorithm") ?? null;
  if (algorithm && !["rsa-sha256", "hs2019"].includes(algorithm.toLowerCase())) throw new SignatureError(`Unsupported signature algorithm ${algorithm}`);
  const headers = (params.get("headers") ?? "date").toLowerCase().split(/\s+/).filter(Boolean);
  const num = (k: string) => (params.has(k) ? Number(params.get(k)) : null);
  return { keyId, algorithm, headers, signature, created: num("created"), expires: num("expires") };
}

export interface VerifiableRequest {
  method: string;
  /** path + query as received */
  target: string;
  headers: Headers;
  body?: Uint8Array | null;
}

async function sha256Base64(body: Uint8Array): Promise<string> {
  return base64(new Uint8Array(await crypto.subtle.digest("SHA-256", body)));
}

/** Checks everything except the cryptographic signature; returns the signing strings to try. */
export async function checkSignedRequest(req: VerifiableRequest, sig: ParsedSignature, now = Date.now()): Promise<string[]> {
  const h = sig.headers;
  const isPost = req.method.toUpperCase() === "POST";
  if (!h.includes("date") && !h.includes("(created)")) throw new SignatureError("Mastodon requires the Date header or (created) pseudo-header to be signed");
  if (!h.includes("(request-target)") && !h.includes("digest")) throw new SignatureError("Mastodon requires the Digest header or (request-target) pseudo-header to be signed");
  if (isPost && !h.includes("digest")) throw new SignatureError("Mastodon requires the Digest header to be signed when doing a POST request");
  if (!isPost && !h.includes("host")) throw new SignatureError("Mastodon requires the Host header to be signed when doing a GET request");

  let created: number;
  if (h.includes("(created)")) {
    if (sig.created == null || !Number.isFinite(sig.created)) throw new SignatureError("Invalid (created) parameter");
    created = sig.created * 1000;
  } else {
    const d = req.headers.get("date");
    const t = d ? Date.parse(d) : NaN;
    if (!Number.isFinite(t)) throw new SignatureError("Invalid Date header");
    created = t;
  }
  if (created - now > MAX_SKEW_FUTURE_MS) throw new SignatureError("Signed request date outside acceptable time window");
  const expires = sig.expires != null ? Math.min(sig.expires * 1000, created + 12 * 3600_000) + 3600_000 : created + MAX_AGE_MS;
  if (now > expires) throw new SignatureError("Signed request date outside acceptable time window");

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
  for (const s of signingStrings) if (await rsaVerify(publicKeyPem, s, sig.signature)) return true;
  return false;
}

/** Signs an outgoing request (Mastodon's header set); returns a new Request with Date, Digest and Signature. */
export async function signRequest(req: Request, keyId: string, privateKeyPem: string, body?: string): Promise<Request> {
  const url = new URL(req.url);
  const headers = new Headers(req.headers);
  headers.set("host", url.host);
  headers.set("date", new Date().toUTCString());
  const names = ["(request-target)", "host", "date"];
  if (req.method === "POST") {
    const bytes = new TextEncoder().encode(body ?? "");
    headers.set("digest", `SHA-256=${await sha256Base64(bytes)}`);
    names.push("digest");
    if (headers.has("content-type")) names.push("content-type");
  } else if (headers.has("accept")) {
    names.push("accept");
  }
  const signing = names
    .map((n) => (n === "(request-target)" ? `(request-target): ${req.method.toLowerCase()} ${url.pathname}${url.search}` : `${n}: ${headers.get(n)}`))
    .join("\n");
  const signature = await rsaSign(privateKeyPem, signing);
  headers.set("signature", `keyId="${keyId}",algorithm="rsa-sha256",headers="${names.join(" ")}",signature="${signature}"`);
  return new Request(req.url, { method: req.method, headers, body: req.method === "POST" ? body : undefined, redirect: "manual", signal: req.signal });
}
