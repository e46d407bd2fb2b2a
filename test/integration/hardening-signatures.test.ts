// Security (issue, class 6): inbound signatures. The key fetch's SSRF guard refuses every spelling of this machine
// and of internal names; a 401 says only that the signature did not verify, whatever went wrong behind it; and
// Signature parameters that the signature does not cover (unknown ones, unsigned created/expires, repeats of them)
// change nothing, in particular not the accepted time window.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { rsaSign } from "../../src/federation/signing/keys";
import { checkUrl, FetchRefused } from "../../src/net/safe-fetch";
import { base64 } from "../../src/lib/security/crypto";
import { ORIGIN } from "./helpers";
import { installFetchMock, newId, remoteActor, serveJson, type RemoteActor } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

describe("outbound fetch guard: names of this machine and of internal networks", () => {
  const refusedSpellings = [
    "http://localhost./",
    "https://localhost../x",
    "https://LOCALHOST./",
    "http://127.0.0.1./",
    "http://127.1./",
    "https://foo.localhost./",
    "https://a.b.localhost/",
    "https://intranet/",
    "https://intranet./",
    "https://printer/",
    "http://metadata/computeMetadata/v1/",
    "http://metadata./",
    "http://metadata.google.internal/",
    "http://metadata.google.internal./",
    "http://instance-data/latest/",
    "http://instance-data.ec2.internal/",
    "https://router.local/",
    "https://nas.local./",
    "https://box.localdomain/",
    "https://printer.home.arpa/",
    "https://x.internal./",
    "https://files.lan/",
    "https://wiki.corp/",
    "https://api.default.svc.cluster.local/",
    "https://kubernetes.default.svc/",
    "https://1.0.0.127.in-addr.arpa/",
    "https://127.0.0.1.nip.io/",
    "https://www-10-0-0-1.sslip.io/",
    "https://169.254.169.254.nip.io/",
    "https://7f000001.nip.io/",
    "https://app.192-168-1-1.example.com/",
    "https://0a000001.example.net/",
    "https://x.invalid/",
    "https://y.onion/",
    "http://[::1]./",
  ];

  it("refuses each spelling, loopback flag or not (except loopback itself under the flag)", () => {
    for (const url of refusedSpellings) {
      let ok = true;
      try {
        checkUrl(url);
      } catch (e) {
        ok = false;
        expect(e, url).toBeInstanceOf(FetchRefused);
      }
      expect(ok, url).toBe(false);
    }
    for (const url of [
      "https://intranet./",
      "http://metadata.google.internal./",
      "https://printer.home.arpa/",
      "https://127.0.0.1.nip.io/",
      "http://10.0.0.1./",
    ]) {
      expect(() => checkUrl(url, { allowLoopback: true }), url).toThrow(FetchRefused);
    }
  });

  it("still lets loopback through when allowLoopbackFetch is on (tests), in its own spellings, and public names always", () => {
    expect(checkUrl("http://127.0.0.1:9000/x", { allowLoopback: true }).host).toBe("127.0.0.1:9000");
    expect(checkUrl("http://localhost.:9000/x", { allowLoopback: true }).hostname).toBe("localhost");
    expect(checkUrl("https://mastodon.social./users/Gargron").hostname).toBe("mastodon.social"); // fetched without the dot
    expect(checkUrl("https://remote.example/users/a").hostname).toBe("remote.example");
    expect(checkUrl("https://deadbeef.example.com/").hostname).toBe("deadbeef.example.com"); // hex that spells a public address
    expect(checkUrl("https://node-8-8-8-8.example.org/").hostname).toBe("node-8-8-8-8.example.org");
    expect(() => checkUrl("https://tern.example./users/a", { ownHosts: ["tern.example"] })).toThrow(FetchRefused);
  });
});

const sha256 = async (s: string) => base64(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s))));

interface SignOpts {
  date?: string;
  names?: string[];
  /** Appended to the Signature header after the four usual parameters, e.g. `,expires="123"`. */
  extra?: string;
  /** Replaces the whole parameter list (for repeats of the usual ones). */
  header?: (usual: string) => string;
  created?: string;
  expires?: string;
  keyId?: string;
}

/** A signed POST to /inbox built by hand, so that parameters signRequest() would never write can be added. */
async function signedPost(a: RemoteActor, o: SignOpts = {}): Promise<Response> {
  const body = JSON.stringify({ id: newId(a, "likes"), type: "Like", actor: a.uri, object: `${ORIGIN}/users/nobody/statuses/1` });
  const date = o.date ?? new Date().toUTCString();
  const digest = `SHA-256=${await sha256(body)}`;
  const names = o.names ?? ["(request-target)", "host", "date", "digest"];
  const values: Record<string, string> = {
    "(request-target)": "post /inbox",
    host: "tern.test",
    date,
    digest,
    "(created)": o.created ?? "",
    "(expires)": o.expires ?? "",
  };
  const signature = await rsaSign(a.keys.privateKeyPem, names.map((n) => `${n}: ${values[n]}`).join("\n"));
  const params = [`keyId="${o.keyId ?? a.keyId}"`, `algorithm="hs2019"`, `headers="${names.join(" ")}"`, `signature="${signature}"`];
  if (o.created !== undefined && names.includes("(created)")) params.push(`created=${o.created}`);
  if (o.expires !== undefined && names.includes("(expires)")) params.push(`expires=${o.expires}`);
  const usual = params.join(",");
  const sig = o.header ? o.header(usual) : usual + (o.extra ?? "");
  return SELF.fetch(`${ORIGIN}/inbox`, {
    method: "POST",
    headers: { "content-type": "application/activity+json", host: "tern.test", date, digest, signature: sig },
    body,
  });
}

const epoch = (ms: number) => String(Math.floor(ms / 1000));
const HOUR = 3600_000;

describe("Signature parameters the signature does not cover change nothing", () => {
  it("an unsigned expires does not widen the Date window (2 h old request, expires 10 h ahead)", async () => {
    const a = await remoteActor("sigwindow");
    const old = new Date(Date.now() - 2 * HOUR).toUTCString();
    const res = await signedPost(a, { date: old, extra: `,expires="${epoch(Date.now() + 10 * HOUR)}"` });
    expect(res.status).toBe(401);
    expect((await res.json<any>()).error).toMatch(/time window/);
    // Unquoted, repeated, or with a created alongside: the same answer.
    const res2 = await signedPost(a, {
      date: old,
      extra: `,created=${epoch(Date.now())},expires=${epoch(Date.now() + 10 * HOUR)},expires=${epoch(Date.now() + 11 * HOUR)}`,
    });
    expect(res2.status).toBe(401);
    // The same old request without the parameter: refused the same way.
    const res3 = await signedPost(a, { date: old });
    expect(res3.status).toBe(401);
    expect((await res3.json<any>()).error).toMatch(/time window/);
  });

  it("a signed (expires) is honoured, within the 12 h limit", async () => {
    const a = await remoteActor("sigexpires");
    const created = Date.now() - 2 * HOUR;
    const names = ["(request-target)", "host", "(created)", "(expires)", "digest"];
    const ok = await signedPost(a, { names, created: epoch(created), expires: epoch(Date.now() + HOUR) });
    expect(ok.status).toBe(202);
    const tooFar = await signedPost(a, { names, created: epoch(Date.now() - 14 * HOUR), expires: epoch(Date.now() + HOUR) });
    expect(tooFar.status).toBe(401);
    // Signed but given twice: ambiguous, refused.
    const twice = await signedPost(a, {
      names,
      created: epoch(created),
      expires: epoch(Date.now() + HOUR),
      header: (u) => `${u},expires=${epoch(Date.now() + 2 * HOUR)}`,
    });
    expect(twice.status).toBe(401);
  });

  it("unknown parameters, in any syntax and repeated, and an unsigned created or expires on a fresh request: accepted", async () => {
    const a = await remoteActor("sigextra");
    for (const extra of [
      `,created="1"`,
      `,expires="1"`,
      `,expires="1",expires="2"`,
      `,created=0,created=99999999999`,
      `,nonce="abc",nonce="def"`,
      `, foo=bar`,
      `,tag="x\\"y",x-custom=1`,
      `,expires="not a number"`,
    ]) {
      const res = await signedPost(a, { extra });
      expect(res.status, extra).toBe(202);
    }
  });

  it("repeats of the parameters that decide what is verified are refused; unknown signed headers are 401, never 500", async () => {
    const a = await remoteActor("sigdup");
    expect((await signedPost(a, { header: (u) => `${u},keyId="https://evil.example/users/x#main-key"` })).status).toBe(401);
    expect((await signedPost(a, { header: (u) => `${u},headers="date"` })).status).toBe(401);
    expect((await signedPost(a, { header: (u) => `${u},signature="AAAA"` })).status).toBe(401);
    expect((await signedPost(a, { header: (u) => `${u},algorithm="rsa-sha256"` })).status).toBe(401);
    for (const odd of ["(foo)", "x@y", "date,", "(created"]) {
      const res = await signedPost(a, { names: ["(request-target)", "host", "date", "digest", odd] });
      expect(res.status, odd).toBe(401);
    }
  });
});

describe("a 401 says only that the signature is invalid", () => {
  it("the same answer whether the key host is refused, unreachable, wrong, or the key does not verify", async () => {
    const signer = await remoteActor("probe");
    const html = await remoteActor("htmlkey", "remote.example", { contentType: "text/html" });
    serveJson("remote.example", "/users/missing", { error: "nope" }, "application/activity+json", 404);
    const liar = await remoteActor("liarkey", "remote.example", { serve: false });
    serveJson("remote.example", "/users/liarkey", {
      ...liar.doc,
      publicKey: { id: `${liar.uri}#other`, owner: liar.uri, publicKeyPem: liar.keys.publicKeyPem },
    });
    const other = await remoteActor("otherkey");

    const keyIds = [
      "https://localhost./users/x#main-key",
      "https://127.0.0.1./users/x#main-key",
      "https://intranet/users/x#main-key",
      "http://metadata.google.internal/computeMetadata/v1/#main-key",
      "https://10.0.0.1/users/x#main-key",
      "https://unreachable.example/users/x#main-key", // nothing answers (no network in tests)
      html.keyId,
      "https://remote.example/users/missing#main-key",
      liar.keyId,
      other.keyId, // a real key, but not the one that signed
      "not a url",
    ];
    const bodies = new Set<string>();
    for (const keyId of keyIds) {
      const res = await signedPost(signer, { keyId });
      expect(res.status, keyId).toBe(401);
      bodies.add(await res.text());
    }
    expect([...bodies]).toEqual([JSON.stringify({ error: "Verification failed" })]);
  });
});
