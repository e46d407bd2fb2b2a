// Remote servers for the federation benchmark, in this Node process (so their work never counts as workerd CPU):
// ONE http server answering on 127.0.2.1 (a remote actor "alice" with an RSA key, her WebFinger, and the requests
// the bench signs as her) and on 127.0.1.1 … 127.0.1.<hosts> (200 "hosts" whose inboxes only count what arrives and
// answer 202 at once), all on one port. Linux routes the whole of 127.0.0.0/8 to lo, so each address gets its own
// listener; where that is refused, one listener on 0.0.0.0 serves them all.
import { createHash, generateKeyPairSync, sign, verify } from "node:crypto";
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { freePort } from "../test/support/server.mjs";

export const ACTOR_HOST = "127.0.2.1";
export const deliveryHost = (n) => `127.0.1.${n}`;
const AS = "https://www.w3.org/ns/activitystreams";

function listenOn(server, port, address) {
  return new Promise((resolve, reject) => {
    const onError = (e) => reject(e);
    server.once("error", onError);
    server.listen(port, address, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

/** Signs a POST exactly as Mastodon does (draft-cavage, rsa-sha256 over (request-target) host date digest). */
export function signedPostHeaders(url, body, keyId, privateKey) {
  const u = new URL(url);
  const date = new Date().toUTCString();
  const digest = `SHA-256=${createHash("sha256").update(body).digest("base64")}`;
  const signing = `(request-target): post ${u.pathname}${u.search}\nhost: ${u.host}\ndate: ${date}\ndigest: ${digest}`;
  const signature = sign("sha256", Buffer.from(signing), privateKey).toString("base64");
  return {
    "content-type": "application/activity+json",
    date,
    digest,
    signature: `keyId="${keyId}",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="${signature}"`,
  };
}

/**
 * Checks a received request's draft-cavage signature against a PEM public key (and its Digest against the body).
 * @returns {{ ok: boolean, why?: string, keyId?: string }}
 */
export function verifyReceived(req, publicKeyPem) {
  const m = /keyId="([^"]+)".*?headers="([^"]+)".*?signature="([^"]+)"/.exec(req.headers.signature ?? "");
  if (!m) return { ok: false, why: "no Signature header" };
  const [, keyId, names, sig] = m;
  const digest = `SHA-256=${createHash("sha256").update(req.body).digest("base64")}`;
  if (req.headers.digest !== digest) return { ok: false, keyId, why: "Digest does not match the body" };
  const signing = names
    .split(" ")
    .map((n) => (n === "(request-target)" ? `(request-target): ${req.method.toLowerCase()} ${req.path}` : `${n}: ${req.headers[n]}`))
    .join("\n");
  const ok = verify("sha256", Buffer.from(signing), publicKeyPem, Buffer.from(sig, "base64"));
  return ok ? { ok, keyId } : { ok, keyId, why: "RSA signature does not verify" };
}

/**
 * `files(path)`: what a GET of a path the peers do not otherwise answer serves ({ type, bytes }), or null: the remote
 * media of bench/day.mjs (attachments, avatars, headers), fetched by Tern's media cache.
 */
export async function startPeers({ hosts = 200, files = () => null } = {}) {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const publicKeyPem = publicKey.export({ type: "spki", format: "pem" });
  let port;
  let actorUri;

  const received = { count: 0, first: null, last: null, hosts: new Set(), paths: new Set(), samples: [], other: 0 };
  const reset = () => {
    received.count = 0;
    received.first = received.last = null;
    received.hosts.clear();
    received.paths.clear();
    received.samples = [];
    received.other = 0;
  };

  const actorDoc = () => ({
    "@context": [AS, "https://w3id.org/security/v1"],
    id: actorUri,
    type: "Person",
    preferredUsername: "alice",
    name: "Alice (bench peer)",
    summary: "",
    inbox: `${actorUri}/inbox`,
    outbox: `${actorUri}/outbox`,
    followers: `${actorUri}/followers`,
    following: `${actorUri}/following`,
    url: actorUri,
    endpoints: { sharedInbox: `http://${ACTOR_HOST}:${port}/inbox` },
    publicKey: { id: `${actorUri}#main-key`, owner: actorUri, publicKeyPem },
  });

  const http = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url, `http://${req.headers.host}`);
      if (req.method === "POST") {
        const now = performance.now();
        received.count++;
        received.first ??= now;
        received.last = now;
        received.hosts.add(req.headers.host);
        received.paths.add(url.pathname);
        if (received.samples.length < 3) {
          received.samples.push({ method: req.method, path: url.pathname + url.search, headers: req.headers, body: Buffer.concat(chunks) });
        }
        res.writeHead(202).end();
        return;
      }
      if (req.method === "GET" && url.pathname === "/users/alice" && req.headers.host === `${ACTOR_HOST}:${port}`) {
        res.writeHead(200, { "content-type": "application/activity+json" }).end(JSON.stringify(actorDoc()));
        return;
      }
      if (req.method === "GET" && url.pathname === "/.well-known/webfinger") {
        const subject = `acct:alice@${ACTOR_HOST}:${port}`;
        if (url.searchParams.get("resource") !== subject && url.searchParams.get("resource") !== actorUri) {
          res.writeHead(404).end();
          return;
        }
        res
          .writeHead(200, { "content-type": "application/jrd+json" })
          .end(JSON.stringify({ subject, links: [{ rel: "self", type: "application/activity+json", href: actorUri }] }));
        return;
      }
      const file = req.method === "GET" ? files(url.pathname) : null;
      if (file) {
        received.files = (received.files ?? 0) + 1;
        res.writeHead(200, { "content-type": file.type, "content-length": String(file.bytes.length) }).end(file.bytes);
        return;
      }
      received.other++;
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    });
  });

  http.keepAliveTimeout = 60_000;
  const addresses = [ACTOR_HOST, ...Array.from({ length: hosts }, (_, i) => deliveryHost(i + 1))];
  let listeners = [];
  let mode = "one listener per loopback address";
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    listeners = [];
    try {
      for (const a of addresses) {
        const s = createNetServer((sock) => http.emit("connection", sock));
        await listenOn(s, port, a);
        listeners.push(s);
      }
      break;
    } catch (e) {
      for (const s of listeners) s.close();
      listeners = [];
      if (e.code === "EADDRINUSE" && attempt < 3) continue;
      // No per-address binding here: one listener for every address.
      mode = "one listener on 0.0.0.0";
      const s = createNetServer((sock) => http.emit("connection", sock));
      await listenOn(s, port, "0.0.0.0");
      listeners.push(s);
      break;
    }
  }
  actorUri = `http://${ACTOR_HOST}:${port}/users/alice`;

  return {
    port,
    mode,
    actorUri,
    keyId: `${actorUri}#main-key`,
    received,
    reset,
    /** Headers for a POST to `url` signed as alice. */
    sign: (url, body) => signedPostHeaders(url, body, `${actorUri}#main-key`, privateKey),
    close: async () => {
      for (const s of listeners) s.close();
      http.closeAllConnections?.();
    },
  };
}
