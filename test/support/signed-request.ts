// Signing a whole Request, for tests that build inbox POSTs and signed GETs by hand. Tern itself signs plain data
// (src/net/outgoing.ts: signCavage, signOutgoingRfc9421) and never makes a Request to sign.
import { type Outgoing, outgoingOf } from "../../src/net/outgoing";
import { signOutgoingRfc9421 } from "../../src/federation/signing/rfc9421";
import { signCavage } from "../../src/federation/signing/signatures";

function outgoingFromRequest(req: Request, body?: string): Outgoing {
  const method = req.method.toUpperCase() === "POST" ? "POST" : "GET";
  return outgoingOf(new URL(req.url), method, Object.fromEntries(req.headers), body);
}

function requestFrom(o: Outgoing, req: Request, body?: string): Request {
  return new Request(o.url, { method: o.method, headers: o.headers, body: o.method === "POST" ? body : undefined, redirect: "manual", signal: req.signal });
}

/** draft-cavage (Mastodon's header set): a new Request with Host, Date, Digest (POST) and Signature. */
export async function signRequest(req: Request, keyId: string, privateKeyPem: string, body?: string): Promise<Request> {
  return requestFrom(await signCavage(outgoingFromRequest(req, body), keyId, privateKeyPem, body), req, body);
}

/** RFC 9421: a new Request with Date, Content-Digest (POST), Signature-Input and Signature. */
export async function signRequestRfc9421(req: Request, keyId: string, privateKeyPem: string, body?: string, now = Date.now()): Promise<Request> {
  return requestFrom(await signOutgoingRfc9421(outgoingFromRequest(req, body), keyId, privateKeyPem, body, now), req, body);
}
