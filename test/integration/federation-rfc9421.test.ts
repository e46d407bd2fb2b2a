// HTTP Message Signatures (RFC 9421, issue 10 point 8): accepted on the inbox next to draft-cavage with the same
// window, key and replay rules (security §2.7, rows C1–C7 for this format), and double knocking on the way out:
// deliveries and signed fetches start with the spec remembered for the host (draft-cavage when none), retry a 400/401
// once with the other one, and remember what worked (`signature_specs`).
import { env, SELF } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resolveActor } from "../../src/federation/remote/remote-accounts";
import { clearSignatureSpecCache } from "../../src/federation/signing/rfc9421";
import { signRequestRfc9421 } from "../support/signed-request";
import { checkSignedRequest, parseRequestSignature, verifyWithKey } from "../../src/federation/signing/signatures";
import { base64 } from "../../src/lib/security/crypto";
import { cfg, db, makeUser, ORIGIN } from "./helpers";
import { deliverNow, pendingDelivery, peer } from "./federation-delivery-fixtures";
import { installFetchMock, newId, remoteActor, runJobs, type RemoteActor } from "./federation-inbox-fixtures";
import { queued } from "./queues";

beforeAll(() => installFetchMock());
beforeEach(() => clearSignatureSpecCache());
afterEach(() => fetchMock.assertNoPendingInterceptors());

const enc = new TextEncoder();
const pad = (id: string) => id.padStart(20, "0");
const specOf = async (host: string) =>
  (await env.DB.prepare("SELECT spec FROM signature_specs WHERE host = ?").bind(host).first<{ spec: string }>())?.spec ?? null;

/** A hand-made RFC 9421 signature (independent of src/federation/signing/rfc9421.ts), for variations Tern never sends. */
async function sign9421(
  url: string,
  body: string,
  opts: {
    keyId: string;
    privateKey: CryptoKey;
    components?: string[];
    created?: number;
    alg?: string | null;
    digest?: string;
    signAlg?: { name: string };
  },
): Promise<Headers> {
  const components = opts.components ?? ["@method", "@target-uri", "content-digest", "date"];
  const headers = new Headers({ "content-type": "application/activity+json", date: new Date().toUTCString() });
  headers.set("content-digest", opts.digest ?? `sha-256=:${base64(new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(body))))}:`);
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  const alg = opts.alg === undefined ? "rsa-v1_5-sha256" : opts.alg;
  const params = `(${components.map((c) => `"${c}"`).join(" ")});created=${created};keyid="${opts.keyId}"${alg ? `;alg="${alg}"` : ""}`;
  const u = new URL(url);
  const value = (c: string) =>
    c === "@method" ? "POST" : c === "@target-uri" ? u.href : c === "@authority" ? u.host : c === "@path" ? u.pathname : headers.get(c);
  const base = [...components.map((c) => `"${c}": ${value(c)}`), `"@signature-params": ${params}`].join("\n");
  const sig = new Uint8Array(await crypto.subtle.sign(opts.signAlg ?? { name: "RSASSA-PKCS1-v1_5" }, opts.privateKey, enc.encode(base)));
  headers.set("signature-input", `sig1=${params}`);
  headers.set("signature", `sig1=:${base64(sig)}:`);
  return headers;
}

const rsaKey = (pem: string) =>
  crypto.subtle.importKey(
    "pkcs8",
    Uint8Array.from(atob(pem.replace(/-----[A-Z ]+-----|\s/g, "")), (c) => c.charCodeAt(0)),
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["sign"],
  );

async function followOf(a: RemoteActor) {
  const u = await makeUser();
  return {
    user: u,
    activity: { "@context": "https://www.w3.org/ns/activitystreams", id: newId(a), type: "Follow", actor: a.uri, object: `${ORIGIN}/users/${u.username}` },
  };
}

const followRows = async (a: RemoteActor) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM follows f JOIN accounts a ON a.id = f.account_id WHERE a.uri = ?").bind(a.uri).first<{ n: number }>())!.n;

async function post(path: string, body: string, headers: Headers) {
  return SELF.fetch(`${ORIGIN}${path}`, { method: "POST", headers, body });
}

describe("inbound RFC 9421", () => {
  it("accepts a valid RFC 9421 signature (Tern's own signer), processes the activity once, and remembers the host", async () => {
    const a = await remoteActor("nine", "rfc.example");
    const { activity } = await followOf(a);
    const body = JSON.stringify(activity);
    const signed = await signRequestRfc9421(
      new Request(`${ORIGIN}/inbox`, { method: "POST", headers: { "content-type": "application/activity+json" }, body }),
      a.keyId,
      a.keys.privateKeyPem,
      body,
    );
    expect(signed.headers.get("signature-input")).toMatch(/^sig1=\("@method" "@target-uri" "date" "content-digest"\);created=\d+;keyid=/);
    const res = await post("/inbox", body, signed.headers);
    expect(res.status).toBe(202);
    // C3: a replay inside the window is accepted and processed once.
    expect((await post("/inbox", body, signed.headers)).status).toBe(202);
    await runJobs();
    expect(await followRows(a)).toBe(1);
    expect(await specOf("rfc.example")).toBe("rfc9421");
  });

  it("accepts @authority + @path instead of @target-uri, and alg left out for an RSA key", async () => {
    const a = await remoteActor("nine2", "rfc.example");
    const { activity } = await followOf(a);
    const body = JSON.stringify(activity);
    const headers = await sign9421(`${ORIGIN}/inbox`, body, {
      keyId: a.keyId,
      privateKey: await rsaKey(a.keys.privateKeyPem),
      components: ["@method", "@authority", "@path", "content-digest"],
      alg: null,
    });
    expect((await post("/inbox", body, headers)).status).toBe(202);
    await runJobs();
    expect(await followRows(a)).toBe(1);
  });

  it("accepts ed25519 when the actor's key is Ed25519", async () => {
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const spki = new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer);
    const pem = `-----BEGIN PUBLIC KEY-----\n${base64(spki)}\n-----END PUBLIC KEY-----\n`;
    const uri = "https://ed.example/users/ed";
    const a = await remoteActor("ed", "ed.example", { docPatch: { publicKey: { id: `${uri}#main-key`, owner: uri, publicKeyPem: pem } } });
    const { activity } = await followOf(a);
    const body = JSON.stringify(activity);
    const headers = await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: pair.privateKey, alg: "ed25519", signAlg: { name: "Ed25519" } });
    expect((await post("/inbox", body, headers)).status).toBe(202);
    await runJobs();
    expect(await followRows(a)).toBe(1);
  });

  it("refuses a tampered body (content-digest), a wrong digest algorithm only, and an unparsable digest: 401, nothing stored", async () => {
    const a = await remoteActor("tamper", "rfc.example", { serve: false }); // refused before any key fetch
    const { activity } = await followOf(a);
    const body = JSON.stringify(activity);
    const key = await rsaKey(a.keys.privateKeyPem);
    const headers = await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: key });
    const tampered = await post("/inbox", body.replace("Follow", "Block"), headers);
    expect(tampered.status).toBe(401);
    expect(await tampered.json()).toEqual({ error: expect.stringMatching(/Content-Digest/) });
    for (const digest of [`sha-1=:${base64(new Uint8Array(20))}:`, "sha-256=notbytes", `sha-256=:${base64(new Uint8Array(32))}:`]) {
      const h = await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: key, digest });
      expect((await post("/inbox", body, h)).status).toBe(401);
    }
    await runJobs();
    expect(await followRows(a)).toBe(0);
  });

  it("refuses a signature made with another key: 401 Verification failed", async () => {
    const a = await remoteActor("victim9", "rfc.example");
    const evil = await remoteActor("evil9", "rfc.example", { serve: false });
    const { activity } = await followOf(a);
    const body = JSON.stringify(activity);
    const headers = await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: await rsaKey(evil.keys.privateKeyPem) });
    const res = await post("/inbox", body, headers);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "Verification failed" });
    await runJobs();
    expect(await followRows(a)).toBe(0);
    expect(await specOf("rfc.example")).toBeNull();
  });

  it("C8: a valid RFC 9421 signature from another host's key does not act for the activity's actor", async () => {
    const victim = await remoteActor("victim", "victim.example", { serve: false });
    const evil = await remoteActor("evil", "evil.example");
    const { activity } = await followOf(victim);
    const body = JSON.stringify(activity);
    const headers = await sign9421(`${ORIGIN}/inbox`, body, { keyId: evil.keyId, privateKey: await rsaKey(evil.keys.privateKeyPem) });
    const res = await post("/inbox", body, headers);
    expect(res.status).toBe(401);
    await runJobs();
    expect(await followRows(victim)).toBe(0);
  });

  it("refuses `created` 2 h old or 2 h ahead (C2), and a covered Date outside the window", async () => {
    const a = await remoteActor("stale", "rfc.example", { serve: false }); // refused before any key fetch
    const key = await rsaKey(a.keys.privateKeyPem);
    const body = JSON.stringify((await followOf(a)).activity);
    for (const created of [Math.floor(Date.now() / 1000) - 7200, Math.floor(Date.now() / 1000) + 7200]) {
      const res = await post("/inbox", body, await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: key, created }));
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Signed request date outside acceptable time window" });
    }
    const oldDate = await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: key });
    oldDate.set("date", new Date(Date.now() - 3 * 3600_000).toUTCString());
    expect((await post("/inbox", body, oldDate)).status).toBe(401);
  });

  it("refuses missing components (C4): no @method, no target, no content-digest on POST; a target for another path (C6)", async () => {
    const a = await remoteActor("partial", "rfc.example", { serve: false });
    const key = await rsaKey(a.keys.privateKeyPem);
    const body = JSON.stringify((await followOf(a)).activity);
    const cases: [string[], RegExp][] = [
      [["@target-uri", "content-digest"], /@method/],
      [["@method", "content-digest"], /@target-uri/],
      [["@method", "@authority", "content-digest"], /@target-uri/],
      [["@method", "@target-uri"], /content-digest/],
    ];
    for (const [components, error] of cases) {
      const res = await post("/inbox", body, await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: key, components }));
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
    }
    // Signed for alice's inbox, posted to the shared one: the base differs, the signature does not verify.
    serveActor(a);
    const elsewhere = await sign9421(`${ORIGIN}/users/alice/inbox`, body, { keyId: a.keyId, privateKey: key });
    expect((await post("/inbox", body, elsewhere)).status).toBe(401);
  });

  it("refuses an unknown alg, component parameters, malformed headers and a label missing from Signature (C7): 401, never 500", async () => {
    const a = await remoteActor("odd", "rfc.example", { serve: false });
    const key = await rsaKey(a.keys.privateKeyPem);
    const body = JSON.stringify((await followOf(a)).activity);
    const hmac = await post("/inbox", body, await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: key, alg: "hmac-sha256" }));
    expect(hmac.status).toBe(401);
    expect(await hmac.json()).toEqual({ error: expect.stringMatching(/Unsupported signature algorithm/) });
    const good = await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: key });
    const variants: [string, string][] = [
      ["signature-input", good.get("signature-input")!.replace('"@method"', '"@method";req')],
      ["signature-input", "sig1=(@method"],
      ["signature-input", `${good.get("signature-input")}, `],
      ["signature-input", good.get("signature-input")!.replace(/;created=\d+/, "")],
      ["signature-input", good.get("signature-input")!.replace(/;keyid="[^"]*"/, "")],
      ["signature", "sig2=:AAAA:"],
      ["signature", 'sig1="not bytes"'],
      ["signature", "sig1=::"],
    ];
    for (const [name, value] of variants) {
      const h = new Headers(good);
      h.set(name, value);
      const res = await post("/inbox", body, h);
      expect(res.status, `${name}: ${value}`).toBe(401);
    }
    const noSig = new Headers(good);
    noSig.delete("signature");
    expect((await post("/inbox", body, noSig)).status).toBe(401);
  });
});

function serveActor(a: RemoteActor) {
  fetchMock
    .get(`https://${a.host}`)
    .intercept({ path: `/users/${a.name}` })
    .reply(200, JSON.stringify(a.doc), { headers: { "content-type": "application/activity+json" } })
    .persist();
}

type Seen = { headers: Headers; body: string; path: string };
const isRfc9421 = (h: Headers) => h.has("signature-input");

/** Verifies a captured delivery with the author's public key, whichever spec signed it. */
async function verifies(seen: Seen, userId: string): Promise<boolean> {
  const headers = new Headers(seen.headers);
  if (!headers.has("host")) headers.set("host", "a.example");
  const sig = parseRequestSignature(headers);
  const strings = await checkSignedRequest(
    { method: "POST", target: seen.path, url: `https://a.example${seen.path}`, headers, body: enc.encode(seen.body) },
    sig,
  );
  const key = await env.DB.prepare("SELECT public_key_pem AS pem FROM accounts WHERE id = ?").bind(pad(userId)).first<{ pem: string }>();
  return verifyWithKey(strings, sig, key!.pem);
}

/** The next POST to a.example/inbox: recorded, answered `status`. */
function knock(status: number, into: Seen[]) {
  peer().reply((opts) => {
    into.push({
      headers: new Headers(opts.headers as Record<string, string>),
      body: typeof opts.body === "string" ? opts.body : new TextDecoder().decode(opts.body as Uint8Array),
      path: opts.path,
    });
    return { statusCode: status, data: "" };
  });
}

describe("outbound double knocking", () => {
  it("a host without a row: draft-cavage first; a 401 is retried once with RFC 9421, which is remembered and used first next time", async () => {
    const { msg, userId } = await pendingDelivery();
    const seen: Seen[] = [];
    knock(401, seen);
    knock(202, seen);
    const out = await deliverNow(msg);
    expect(out.acked).toHaveLength(1);
    expect(queued.deliveries).toEqual([]); // delivered: no retry
    expect(seen.map((s) => isRfc9421(s.headers))).toEqual([false, true]);
    expect(await verifies(seen[0]!, userId)).toBe(true);
    expect(await verifies(seen[1]!, userId)).toBe(true);
    expect(seen[1]!.headers.get("content-digest")).toMatch(/^sha-256=:[A-Za-z0-9+/]+=*:$/);
    expect(await specOf("a.example")).toBe("rfc9421");

    // Remembered: the next delivery is one RFC 9421 request.
    clearSignatureSpecCache(); // D1 alone decides (another isolate)
    const again: Seen[] = [];
    knock(202, again);
    await deliverNow(msg);
    expect(again.map((s) => isRfc9421(s.headers))).toEqual([true]);
  });

  it("a host remembered as RFC 9421 that answers 401: retried with draft-cavage, which is remembered", async () => {
    const { msg, userId } = await pendingDelivery();
    await env.DB.prepare("INSERT INTO signature_specs (host, spec, updated_at) VALUES ('a.example', 'rfc9421', 0)").run();
    const seen: Seen[] = [];
    knock(401, seen);
    knock(202, seen);
    const out = await deliverNow(msg);
    expect(out.acked).toHaveLength(1);
    expect(seen.map((s) => isRfc9421(s.headers))).toEqual([true, false]);
    expect(await verifies(seen[1]!, userId)).toBe(true);
    expect(await specOf("a.example")).toBe("draft-cavage");
    const again: Seen[] = [];
    knock(202, again);
    await deliverNow(msg);
    expect(again.map((s) => isRfc9421(s.headers))).toEqual([false]);
  });

  it("both knocks refused: one retry of the delivery later, nothing remembered; a 400 knocks too; other 4xx do not", async () => {
    const { msg } = await pendingDelivery();
    const seen: Seen[] = [];
    knock(401, seen);
    knock(401, seen);
    await deliverNow(msg);
    expect(seen).toHaveLength(2);
    expect(queued.deliveries.shift()).toMatchObject({ attempt: 1 });
    expect(await specOf("a.example")).toBeNull();

    const bad: Seen[] = [];
    knock(400, bad);
    knock(400, bad);
    const dropped = await deliverNow(msg);
    expect(bad).toHaveLength(2);
    expect(dropped.acked).toHaveLength(1);
    expect(queued.deliveries).toEqual([]); // 400 stays unsalvageable

    const gone: Seen[] = [];
    knock(404, gone);
    await deliverNow(msg);
    expect(gone).toHaveLength(1);
    expect(await specOf("a.example")).toBeNull();
  });

  it("a host that signed its own request with RFC 9421 gets our next delivery signed with RFC 9421 first", async () => {
    const a = await remoteActor("talker", "a.example");
    const { activity } = await followOf(a);
    const body = JSON.stringify(activity);
    const headers = await sign9421(`${ORIGIN}/inbox`, body, { keyId: a.keyId, privateKey: await rsaKey(a.keys.privateKeyPem) });
    expect((await post("/inbox", body, headers)).status).toBe(202);
    expect(await specOf("a.example")).toBe("rfc9421");
    queued.jobs.length = 0;
    const { msg } = await pendingDelivery();
    const seen: Seen[] = [];
    knock(202, seen);
    await deliverNow(msg);
    expect(seen.map((s) => isRfc9421(s.headers))).toEqual([true]);
  });

  it("signed fetches double-knock too: an actor served only to RFC 9421 is resolved, and the host remembered", async () => {
    const uri = "https://strict.example/users/s";
    const keyHolder = await remoteActor("s", "strict.example", { serve: false });
    const gets: boolean[] = [];
    fetchMock
      .get("https://strict.example")
      .intercept({ path: "/users/s" })
      .reply((opts) => {
        const h = new Headers(opts.headers as Record<string, string>);
        gets.push(isRfc9421(h));
        return isRfc9421(h)
          ? { statusCode: 200, data: JSON.stringify(keyHolder.doc), responseOptions: { headers: { "content-type": "application/activity+json" } } }
          : { statusCode: 401, data: "" };
      })
      .times(2);
    const account = await resolveActor(db(), cfg(), uri, { refresh: true });
    expect(account.uri).toBe(uri);
    expect(gets).toEqual([false, true]);
    expect(await specOf("strict.example")).toBe("rfc9421");
  });
});
