import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/federation/signing/keys";
import { checkSignedRequest, parseSignatureHeader, SignatureError, verifyWithKey } from "../../src/federation/signing/signatures";
import { signRequest } from "../support/signed-request";

const keys = await generateKeyPair();
const KEY_ID = "https://a.example/users/alice#main-key";
const body = JSON.stringify({ type: "Follow", actor: "https://a.example/users/alice" });

async function signed(method = "POST", path = "/users/bob/inbox") {
  const req = new Request(`https://b.example${path}`, {
    method,
    headers: { "content-type": "application/activity+json", accept: "application/activity+json" },
    body: method === "POST" ? body : undefined,
  });
  return signRequest(req, KEY_ID, keys.privateKeyPem, method === "POST" ? body : undefined);
}

async function verify(req: Request, opts: { body?: string; target?: string; now?: number } = {}) {
  const sig = parseSignatureHeader(req.headers.get("signature"));
  const u = new URL(req.url);
  const strings = await checkSignedRequest(
    { method: req.method, target: opts.target ?? u.pathname + u.search, headers: req.headers, body: new TextEncoder().encode(opts.body ?? body) },
    sig,
    opts.now,
  );
  return verifyWithKey(strings, sig, keys.publicKeyPem);
}

describe("HTTP signatures", () => {
  it("round-trips a signed POST and GET", async () => {
    expect(await verify(await signed())).toBe(true);
    const g = await signed("GET", "/users/bob");
    const sig = parseSignatureHeader(g.headers.get("signature"));
    const strings = await checkSignedRequest({ method: "GET", target: "/users/bob", headers: g.headers, body: null }, sig);
    expect(await verifyWithKey(strings, sig, keys.publicKeyPem)).toBe(true);
  });

  it("C1/C7: missing or malformed headers are errors, not crashes", () => {
    expect(() => parseSignatureHeader(null)).toThrow("Request not signed");
    for (const bad of [
      'keyId="x",algorithm="hmac-sha256",signature="a"',
      'keyId="x",signature=""',
      'keyId="x",signature="a", keyId="y",signature="b"',
      "garbage",
      'keyId="x"',
    ]) {
      expect(() => parseSignatureHeader(bad), bad).toThrow(SignatureError);
    }
  });

  it("C2: dates outside the window are refused", async () => {
    const req = await signed();
    const date = Date.parse(req.headers.get("date")!);
    await expect(verify(req, { now: date + 2 * 3600_000 })).rejects.toThrow(/time window/);
    await expect(verify(req, { now: date - 2 * 3600_000 })).rejects.toThrow(/time window/);
    expect(await verify(req, { now: date + 30 * 60_000 })).toBe(true);
  });

  it("C4: POST without a signed digest, GET without host", async () => {
    const req = await signed();
    const h = new Headers(req.headers);
    h.set("signature", h.get("signature")!.replace(/headers="[^"]+"/, 'headers="(request-target) host date"'));
    await expect(verify(new Request(req.url, { method: "POST", headers: h, body }))).rejects.toThrow(/Digest header to be signed/);
    const h2 = new Headers(req.headers);
    h2.set("signature", h2.get("signature")!.replace(/headers="[^"]+"/, 'headers="date"'));
    await expect(verify(new Request(req.url, { method: "POST", headers: h2, body }))).rejects.toThrow(SignatureError);
  });

  it("C5: tampered body, SHA-512 only, non-base64 digest", async () => {
    await expect(verify(await signed(), { body: `${body} ` })).rejects.toThrow(/Invalid Digest/);
    const req = await signed();
    const h = new Headers(req.headers);
    h.set("digest", "SHA-512=abc");
    await expect(verify(new Request(req.url, { method: "POST", headers: h, body }))).rejects.toThrow(/SHA-256/);
    h.set("digest", "SHA-256=***");
    await expect(verify(new Request(req.url, { method: "POST", headers: h, body }))).rejects.toThrow(/base64/);
  });

  it("C6: a signature for another path or host does not verify", async () => {
    expect(await verify(await signed(), { target: "/inbox" })).toBe(false);
    const req = await signed();
    const h = new Headers(req.headers);
    h.set("host", "evil.example");
    expect(await verify(new Request(req.url, { method: "POST", headers: h, body }))).toBe(false);
  });
});
