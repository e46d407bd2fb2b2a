// HTTP Message Signatures (RFC 9421) next to draft-cavage (signatures.ts), as Fedify and Mastodon 4.5 speak them.
// Inbound: `Signature-Input` + `Signature` (RFC 8941 dictionaries), one label verified; the covered components must
// include "@method", "@target-uri" (or "@authority" + "@path", + "@query" when there is one) and, on POST,
// "content-digest" (RFC 9530, sha-256/sha-512, checked against the body); `created` is required and held to the same
// window as draft-cavage (at most 1 h ahead; lifetime 5 min, a signed `expires` at most 12 h; +1 h clock skew), a
// covered `date` too. Algorithms: rsa-v1_5-sha256, and ed25519 for an Ed25519 key; anything else is refused before a
// key is fetched. Outbound: "@method" "@target-uri" "date" (+ "content-digest"), rsa-v1_5-sha256, label sig1.
// Double knocking (Fedify's doubleKnock): the first signature is the one remembered for the host (D1
// `signature_specs`, with an isolate cache), else draft-cavage; a 400/401 is retried once with the other spec, and
// the one that worked is remembered. A host that signs its own requests to us with RFC 9421 is remembered as
// speaking it (that is how a server "advertises" it), so our deliveries to it start with RFC 9421.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { signatureSpecs } from "../../db/schema/index";
import { isolateMap } from "../../lib/limits/bounded-map";
import { base64, fromBase64, utf8 } from "../../lib/security/crypto";
import { fromPem, importPublicKey, rsaSign } from "./keys";
import type { SafeFetchOptions } from "../../net/safe-fetch";
import type { Outgoing, Signer } from "../../net/outgoing";

export class Rfc9421Error extends Error {}

export interface Rfc9421Signature {
  spec: "rfc9421";
  label: string;
  keyId: string;
  alg: string | null;
  created: number; // seconds
  expires: number | null;
  components: string[];
  /** The inner list serialized again (the "@signature-params" line's value). */
  params: string;
  signature: Uint8Array;
}

// ---- RFC 8941 structured fields: just what Signature-Input, Signature and Content-Digest use ----

type Bare =
  | { t: "int"; v: number; raw: string }
  | { t: "str"; v: string }
  | { t: "tok"; v: string }
  | { t: "bytes"; v: Uint8Array; raw: string }
  | { t: "bool"; v: boolean };
interface Param {
  name: string;
  value: Bare;
}
interface Member {
  key: string;
  /** An inner list (`(...)`) or a single item. */
  list: { value: Bare; params: Param[] }[] | null;
  item: Bare | null;
  params: Param[];
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}
  fail(): never {
    throw new Rfc9421Error("Malformed structured field");
  }
  peek() {
    return this.s[this.i];
  }
  ows() {
    while (this.s[this.i] === " " || this.s[this.i] === "\t") this.i++;
  }
  sp() {
    while (this.s[this.i] === " ") this.i++;
  }
  key(): string {
    const m = /^[a-z*][a-z0-9_\-.*]*/.exec(this.s.slice(this.i, this.i + 128));
    if (!m) this.fail();
    this.i += m[0].length;
    return m[0];
  }
  bare(): Bare {
    const rest = this.s.slice(this.i);
    const c = rest[0];
    if (c === '"') {
      let v = "";
      for (let j = 1; j < rest.length; j++) {
        const ch = rest[j]!;
        if (ch === "\\") {
          const n = rest[j + 1];
          if (n !== '"' && n !== "\\") this.fail();
          v += n;
          j++;
        } else if (ch === '"') {
          this.i += j + 1;
          return { t: "str", v };
        } else {
          const code = ch.charCodeAt(0);
          if (code < 0x20 || code > 0x7e) this.fail();
          v += ch;
        }
      }
      this.fail();
    }
    if (c === ":") {
      const m = /^:([A-Za-z0-9+/=]*):/.exec(rest);
      if (!m) this.fail();
      this.i += m[0].length;
      let v: Uint8Array;
      try {
        v = fromBase64(m[1]!);
      } catch {
        this.fail();
      }
      return { t: "bytes", v, raw: m[1]! };
    }
    if (c === "?") {
      if (rest[1] !== "0" && rest[1] !== "1") this.fail();
      this.i += 2;
      return { t: "bool", v: rest[1] === "1" };
    }
    const num = /^-?\d{1,15}(\.\d{1,3})?/.exec(rest);
    if (num) {
      this.i += num[0].length;
      return num[1] ? { t: "tok", v: num[0] } : { t: "int", v: Number(num[0]), raw: String(Number(num[0])) };
    }
    const tok = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(rest);
    if (!tok) this.fail();
    this.i += tok[0].length;
    return { t: "tok", v: tok[0] };
  }
  params(): Param[] {
    const out: Param[] = [];
    while (this.peek() === ";") {
      if (out.length >= 32) this.fail();
      this.i++;
      this.sp();
      const name = this.key();
      let value: Bare = { t: "bool", v: true };
      if (this.peek() === "=") {
        this.i++;
        value = this.bare();
      }
      const prev = out.findIndex((p) => p.name === name);
      if (prev >= 0) out.splice(prev, 1); // RFC 8941: a later parameter overwrites
      out.push({ name, value });
    }
    return out;
  }
  dict(): Member[] {
    const out: Member[] = [];
    this.sp();
    while (this.i < this.s.length) {
      if (out.length >= 16) this.fail();
      const key = this.key();
      let member: Member;
      if (this.peek() === "=") {
        this.i++;
        if (this.peek() === "(") {
          this.i++;
          const list: { value: Bare; params: Param[] }[] = [];
          for (;;) {
            this.sp();
            if (this.peek() === ")") {
              this.i++;
              break;
            }
            if (list.length >= 32) this.fail();
            const value = this.bare();
            list.push({ value, params: this.params() });
            const n = this.peek();
            if (n !== " " && n !== ")") this.fail();
          }
          member = { key, list, item: null, params: this.params() };
        } else {
          const item = this.bare();
          member = { key, list: null, item, params: this.params() };
        }
      } else {
        member = { key, list: null, item: { t: "bool", v: true }, params: this.params() };
      }
      const prev = out.findIndex((m) => m.key === key);
      if (prev >= 0) out.splice(prev, 1);
      out.push(member);
      this.ows();
      if (this.i >= this.s.length) break;
      if (this.peek() !== ",") this.fail();
      this.i++;
      this.ows();
      if (this.i >= this.s.length) this.fail(); // trailing comma
    }
    return out;
  }
}

function parseDict(value: string): Member[] {
  if (value.length > 8192) throw new Rfc9421Error("Signature header too long");
  return new Parser(value).dict();
}

const serializeBare = (b: Bare): string => {
  switch (b.t) {
    case "int":
      return b.raw;
    case "str":
      return `"${b.v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
    case "tok":
      return b.v;
    case "bytes":
      return `:${b.raw}:`;
    case "bool":
      return b.v ? "?1" : "?0";
  }
};
const serializeParams = (ps: Param[]) => ps.map((p) => (p.value.t === "bool" && p.value.v ? `;${p.name}` : `;${p.name}=${serializeBare(p.value)}`)).join("");

// ---- inbound ----

const DERIVED = new Set(["@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query"]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const ALGORITHMS = new Set(["rsa-v1_5-sha256", "ed25519"]);
const MAX_SKEW_FUTURE_MS = 60 * 60 * 1000;
const CLOCK_SKEW_MS = 60 * 60 * 1000;
const DEFAULT_LIFETIME_MS = 5 * 60 * 1000;
const MAX_LIFETIME_MS = 12 * 3600 * 1000;

/** Parses the two headers; throws Rfc9421Error (always a 401) before any key is fetched. */
export function parseRfc9421(signatureInput: string | null, signature: string | null): Rfc9421Signature {
  if (!signatureInput || !signature) throw new Rfc9421Error("Request not signed");
  const inputs = parseDict(signatureInput);
  const sigs = parseDict(signature);
  // One label is verified: the first one both headers carry (Fedify signs one, labelled sig1).
  const input = inputs.find((m) => m.list && sigs.some((s) => s.key === m.key));
  if (!input?.list) throw new Rfc9421Error("No signature label in both Signature-Input and Signature");
  const sigItem = sigs.find((s) => s.key === input.key)?.item;
  if (sigItem?.t !== "bytes" || sigItem.v.length === 0) throw new Rfc9421Error("Signature is not a byte sequence");
  const components: string[] = [];
  for (const c of input.list) {
    if (c.value.t !== "str") throw new Rfc9421Error("Component identifiers must be strings");
    if (c.params.length) throw new Rfc9421Error(`Unsupported component parameters on ${c.value.v.slice(0, 64)}`);
    const name = c.value.v;
    if (name.startsWith("@") ? !DERIVED.has(name) : !HEADER_NAME.test(name)) throw new Rfc9421Error(`Unsupported component ${name.slice(0, 64)}`);
    if (components.includes(name)) throw new Rfc9421Error(`Duplicate component ${name}`);
    components.push(name);
  }
  const p = new Map(input.params.map((x) => [x.name, x.value]));
  const keyid = p.get("keyid");
  if (keyid?.t !== "str" || !keyid.v) throw new Rfc9421Error("keyid is required");
  const created = p.get("created");
  if (created?.t !== "int" || created.v <= 0) throw new Rfc9421Error("created is required");
  const expires = p.get("expires");
  if (expires && expires.t !== "int") throw new Rfc9421Error("Invalid expires parameter");
  const alg = p.get("alg");
  if (alg && (alg.t !== "str" || !ALGORITHMS.has(alg.v)))
    throw new Rfc9421Error(`Unsupported signature algorithm ${alg.t === "str" ? alg.v.slice(0, 32) : ""}`);
  const params = `(${components.map((c) => `"${c}"`).join(" ")})${serializeParams(input.params)}`;
  return {
    spec: "rfc9421",
    label: input.key,
    keyId: keyid.v,
    alg: alg?.t === "str" ? alg.v : null,
    created: created.v,
    expires: expires?.t === "int" ? expires.v : null,
    components,
    params,
    signature: sigItem.v,
  };
}

export interface Rfc9421Request {
  method: string;
  /** The absolute URL as received. */
  url: string;
  headers: Headers;
  body?: Uint8Array | null;
}

async function checkContentDigest(value: string | null, body: Uint8Array): Promise<void> {
  if (!value) throw new Rfc9421Error("Content-Digest header missing");
  let members: Member[];
  try {
    members = parseDict(value);
  } catch {
    throw new Rfc9421Error("Invalid Content-Digest header");
  }
  let checked = 0;
  for (const m of members) {
    const hash = m.key === "sha-256" ? "SHA-256" : m.key === "sha-512" ? "SHA-512" : null;
    if (!hash) continue;
    if (m.item?.t !== "bytes") throw new Rfc9421Error("Invalid Content-Digest value: not a byte sequence");
    const actual = new Uint8Array(await crypto.subtle.digest(hash, body));
    if (base64(actual) !== base64(m.item.v)) throw new Rfc9421Error(`Invalid Content-Digest value (${m.key})`);
    checked++;
  }
  if (!checked) throw new Rfc9421Error("Content-Digest needs sha-256 or sha-512");
}

function componentValue(name: string, req: Rfc9421Request, url: URL): string {
  switch (name) {
    case "@method":
      return req.method.toUpperCase();
    case "@target-uri":
      return url.href;
    case "@authority":
      return url.host.toLowerCase();
    case "@scheme":
      return url.protocol.slice(0, -1).toLowerCase();
    case "@request-target":
      return `${url.pathname}${url.search}`;
    case "@path":
      return url.pathname || "/";
    case "@query":
      return url.search || "?";
  }
  const v = req.headers.get(name);
  if (v == null) throw new Rfc9421Error(`Signed header ${name} missing`);
  return v.trim();
}

/** Checks everything except the cryptographic signature; returns the signature base. */
export async function checkRfc9421Request(req: Rfc9421Request, sig: Rfc9421Signature, now = Date.now()): Promise<string[]> {
  const c = sig.components;
  const url = new URL(req.url);
  const isPost = req.method.toUpperCase() === "POST";
  if (!c.includes("@method")) throw new Rfc9421Error("The signature must cover @method");
  if (!c.includes("@target-uri") && !(c.includes("@authority") && c.includes("@path") && (!url.search || c.includes("@query"))))
    throw new Rfc9421Error("The signature must cover @target-uri (or @authority and @path)");
  if (isPost && !c.includes("content-digest")) throw new Rfc9421Error("The signature must cover content-digest on a POST");

  const window = (createdMs: number, expiresSec: number | null) => {
    if (createdMs - now > MAX_SKEW_FUTURE_MS) throw new Rfc9421Error("Signed request date outside acceptable time window");
    const expires = expiresSec == null ? createdMs + DEFAULT_LIFETIME_MS : Math.min(expiresSec * 1000, createdMs + MAX_LIFETIME_MS);
    if (now > expires + CLOCK_SKEW_MS) throw new Rfc9421Error("Signed request date outside acceptable time window");
  };
  window(sig.created * 1000, sig.expires);
  if (c.includes("date")) {
    const t = Date.parse(req.headers.get("date") ?? "");
    if (!Number.isFinite(t)) throw new Rfc9421Error("Invalid Date header");
    window(t, null);
  }
  if (c.includes("content-digest") || isPost) await checkContentDigest(req.headers.get("content-digest"), req.body ?? new Uint8Array(0));

  const lines = c.map((name) => `"${name}": ${componentValue(name, req, url)}`);
  for (const l of lines) if (/[\r\n]/.test(l)) throw new Rfc9421Error("Invalid component value");
  lines.push(`"@signature-params": ${sig.params}`);
  return [lines.join("\n")];
}

/** Ed25519 keys by PEM (RSA ones are keys.ts's importPublicKey); null for a PEM that is not one. The oldest leave first. */
const ed25519Cache = isolateMap<string, Promise<CryptoKey | null>>("rfc9421: Ed25519 keys by PEM", 500);
function importVerifyKey(pem: string, kind: "rsa" | "ed25519"): Promise<CryptoKey | null> {
  if (kind === "rsa") return importPublicKey(pem).catch(() => null);
  let p = ed25519Cache.get(pem);
  if (!p) {
    p = (async () => {
      try {
        return await crypto.subtle.importKey("spki", fromPem(pem), { name: "Ed25519" }, false, ["verify"]);
      } catch {
        return null;
      }
    })();
    ed25519Cache.set(pem, p);
  }
  return p;
}

/** Verifies the signature base with the key: rsa-v1_5-sha256, or ed25519 if the key is Ed25519 (`alg` may be left out). */
export async function verifyRfc9421WithKey(bases: string[], sig: Rfc9421Signature, publicKeyPem: string): Promise<boolean> {
  const kinds: ("rsa" | "ed25519")[] = sig.alg === "ed25519" ? ["ed25519"] : sig.alg ? ["rsa"] : ["rsa", "ed25519"];
  for (const kind of kinds) {
    const key = await importVerifyKey(publicKeyPem, kind);
    if (!key) continue;
    const alg = kind === "rsa" ? { name: "RSASSA-PKCS1-v1_5" } : { name: "Ed25519" };
    for (const b of bases) {
      try {
        if (await crypto.subtle.verify(alg, key, sig.signature, utf8(b))) return true;
      } catch {
        /* a malformed signature for this key type */
      }
    }
  }
  return false;
}

// ---- outbound ----

/** Signs an outgoing request with RFC 9421: adds Date, Content-Digest (POST), Signature-Input and Signature. */
export async function signOutgoingRfc9421(o: Outgoing, keyId: string, privateKeyPem: string, body?: string, now = Date.now()): Promise<Outgoing> {
  const headers: Record<string, string> = { ...o.headers };
  delete headers.signature;
  delete headers["signature-input"];
  delete headers.digest;
  headers.date = new Date(now).toUTCString();
  const components = ["@method", "@target-uri", "date"];
  if (o.method === "POST") {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(body ?? "")));
    headers["content-digest"] = `sha-256=:${base64(digest)}:`;
    components.push("content-digest");
  }
  const params = `(${components.map((c) => `"${c}"`).join(" ")});created=${Math.floor(now / 1000)};keyid="${keyId.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}";alg="rsa-v1_5-sha256"`;
  const base = [
    ...components.map((c) => `"${c}": ${c === "@method" ? o.method : c === "@target-uri" ? o.url : (headers[c] ?? "")}`),
    `"@signature-params": ${params}`,
  ].join("\n");
  headers["signature-input"] = `sig1=${params}`;
  headers.signature = `sig1=:${await rsaSign(privateKeyPem, base)}:`;
  return { ...o, headers };
}

// ---- double knocking: which spec to try first per host ----

export type SignatureSpec = "rfc9421" | "draft-cavage";
const DEFAULT_SPEC: SignatureSpec = "draft-cavage";
/** host → remembered spec (null: no row), for this isolate: signed fetches read D1 once per host (the oldest hosts leave first). */
const specCache = isolateMap<string, SignatureSpec | null>("rfc9421: signature spec by host", 5000);

/** Test hook: forget the isolate's memory (D1 stays). */
export function clearSignatureSpecCache(): void {
  specCache.clear();
}

function cacheSpec(host: string, spec: SignatureSpec | null) {
  specCache.set(host, spec);
}

/** The spec to try first for `host`: the one remembered, else draft-cavage (what most of the fediverse verifies). */
export async function specForHost(db: DB, host: string): Promise<SignatureSpec> {
  const known = specCache.get(host);
  if (known !== undefined) return known ?? DEFAULT_SPEC;
  const [row] = await db.select({ spec: signatureSpecs.spec }).from(signatureSpecs).where(eq(signatureSpecs.host, host)).limit(1);
  return primeSpec(host, row?.spec);
}

/** The spec from a row already read (the delivery consumer reads them with its batch); D1 wins over the isolate. */
export function primeSpec(host: string, spec: string | null | undefined): SignatureSpec {
  const s: SignatureSpec | null = spec === "rfc9421" || spec === "draft-cavage" ? spec : null;
  cacheSpec(host, s);
  return s ?? DEFAULT_SPEC;
}

/**
 * Remembers that `host` verified `spec` (one write, only when it changes what this isolate knows). `ifUnknown`: only
 * for a host without a row (a host seen signing with RFC 9421; what a knock proved it verifies is not overwritten).
 */
export async function rememberSpec(db: DB, host: string, spec: SignatureSpec, ifUnknown = false): Promise<void> {
  const cached = specCache.get(host);
  if (cached === spec || (ifUnknown && cached)) return;
  cacheSpec(host, spec);
  const now = Date.now();
  const insert = db.insert(signatureSpecs).values({ host, spec, updatedAt: now });
  if (ifUnknown) await insert.onConflictDoNothing();
  else await insert.onConflictDoUpdate({ target: signatureSpecs.host, set: { spec, updatedAt: now } });
}

export type { Signer };

/**
 * safeFetch options for a double knock: each hop is signed first with `firstFor(host)`, and on 400/401 signed again
 * with the other spec and sent once more; a second spec that got an answer other than 400/401 is remembered for the
 * host (a first one that worked is already what the host gets).
 */
export function knockOptions(
  db: DB,
  signers: Record<SignatureSpec, Signer>,
  firstFor: (host: string) => Promise<SignatureSpec> = (host) => specForHost(db, host),
): Pick<SafeFetchOptions, "knock"> {
  return {
    knock: async (host) => {
      const first = await firstFor(host);
      const second: SignatureSpec = first === "rfc9421" ? "draft-cavage" : "rfc9421";
      return {
        first: signers[first],
        second: signers[second],
        // Only a second knock that worked teaches something; a first one that worked is what we already assumed.
        done: async (usedSecond, status) => {
          if (!usedSecond || status === 400 || status === 401) return;
          await rememberSpec(db, host, second).catch(() => {});
        },
      };
    },
  };
}
