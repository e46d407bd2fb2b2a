// A Web Push service for the e2e suite, in plain Node (node:http + node:crypto): it hands out subscriptions (a P-256
// key pair and auth secret per subscription, like a browser), receives pushes on 127.0.0.1, decrypts them (RFC 8291
// aes128gcm and Mastodon's legacy aesgcm), verifies the VAPID JWT (`vapid t=…, k=…` or `WebPush <jwt>` with
// `Crypto-Key: p256ecdsa=`), records every message, and answers 201 unless told otherwise (429, 410, 500 ...).
//
// Tern accepts an http endpoint only on loopback with ALLOW_LOOPBACK_FETCH on (src/push/endpoint.ts), which is how
// `wrangler dev` runs in the e2e suite.
//
//   const push = await startPushService();
//   const sub = push.subscribe();                      // { id, endpoint, keys: { p256dh, auth } }
//   await client.v1.push.subscription.create({ subscription: sub, data: { alerts: { mention: true } } });
//   push.respond(sub.id, 429, { "retry-after": "1" });  // the next push to it answers 429
//   const msg = await push.waitFor((m) => m.subscriptionId === sub.id && m.payload?.notification_type === "mention");
//   msg.vapid.ok, msg.vapid.key (compare with server_key), msg.payload.access_token ...
//   await push.close();
import { createCipheriv, createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from "node:crypto";
import { EventEmitter } from "node:events";
import { createServer } from "node:http";

const b64u = (buf) => Buffer.from(buf).toString("base64url");
const unb64u = (s) => Buffer.from(String(s).replace(/=+$/, ""), "base64url");
const hkdf = (salt, ikm, info, len) => Buffer.from(hkdfSync("sha256", ikm, salt, info, len));

function aesGcmDecrypt(key, nonce, data) {
  if (data.length < 16) throw new Error("record shorter than the GCM tag");
  const d = createDecipheriv("aes-128-gcm", key, nonce);
  d.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]);
}

/** `a=b;c=d` / `a=b, c=d` parameters of a header. */
function params(h) {
  const out = {};
  for (const part of String(h ?? "").split(/[;,]/)) {
    const i = part.indexOf("=");
    if (i > 0)
      out[part.slice(0, i).trim().toLowerCase()] = part
        .slice(i + 1)
        .trim()
        .replace(/^"|"$/g, "");
  }
  return out;
}

/** RFC 8291: header salt(16) rs(4) idlen(1) keyid(sender's key), one record ending in the 0x02 delimiter. */
function decryptAes128gcm(sub, body) {
  if (body.length < 21) throw new Error("body shorter than the aes128gcm header");
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  const asPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  if (idlen !== 65) throw new Error(`keyid length ${idlen}, expected 65`);
  if (record.length > rs) throw new Error(`record of ${record.length} bytes exceeds rs ${rs}`);
  const shared = sub.ecdh.computeSecret(asPublic);
  const ikm = hkdf(sub.auth, shared, Buffer.concat([Buffer.from("WebPush: info\0"), sub.publicKey, asPublic]), 32);
  const cek = hkdf(salt, ikm, Buffer.from("Content-Encoding: aes128gcm\0"), 16);
  const nonce = hkdf(salt, ikm, Buffer.from("Content-Encoding: nonce\0"), 12);
  const plain = aesGcmDecrypt(cek, nonce, record);
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  if (plain[end] !== 2) throw new Error("missing last-record delimiter");
  return plain.subarray(0, end);
}

/** Legacy aesgcm: salt in `Encryption`, sender key in `Crypto-Key: dh=`, two-byte padding length first. */
function decryptAesgcm(sub, body, headers) {
  const salt = unb64u(params(headers.encryption).salt ?? "");
  const dh = unb64u(params(headers["crypto-key"]).dh ?? "");
  if (salt.length !== 16) throw new Error("Encryption header has no 16-byte salt");
  if (dh.length !== 65) throw new Error("Crypto-Key header has no dh key");
  const shared = sub.ecdh.computeSecret(dh);
  const ikm = hkdf(sub.auth, shared, Buffer.from("Content-Encoding: auth\0"), 32);
  const len = (n) => Buffer.from([n >> 8, n & 255]);
  const context = Buffer.concat([Buffer.from("P-256\0"), len(65), sub.publicKey, len(65), dh]);
  const cek = hkdf(salt, ikm, Buffer.concat([Buffer.from("Content-Encoding: aesgcm\0"), context]), 16);
  const nonce = hkdf(salt, ikm, Buffer.concat([Buffer.from("Content-Encoding: nonce\0"), context]), 12);
  const plain = aesGcmDecrypt(cek, nonce, body);
  const pad = plain.readUInt16BE(0);
  return plain.subarray(2 + pad);
}

/** VAPID (RFC 8292, and the draft form Mastodon uses with aesgcm): signature, aud, exp, sub. */
function checkVapid(headers, origin) {
  const auth = String(headers.authorization ?? "");
  let jwt;
  let key;
  if (/^vapid /i.test(auth)) {
    const p = params(auth.slice(6));
    jwt = p.t;
    key = p.k;
  } else if (/^WebPush /i.test(auth)) {
    jwt = auth.slice(8).trim();
    key = params(headers["crypto-key"]).p256ecdsa;
  }
  if (!jwt || !key) return { ok: false, error: "no VAPID authorization", key: key ?? null, claims: null };
  const [h, p, s] = jwt.split(".");
  try {
    const header = JSON.parse(unb64u(h).toString());
    const claims = JSON.parse(unb64u(p).toString());
    const point = unb64u(key);
    if (point.length !== 65 || point[0] !== 4) return { ok: false, error: "k is not a P-256 point", key, claims };
    const pub = createPublicKey({ key: { kty: "EC", crv: "P-256", x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33)) }, format: "jwk" });
    const sigOk = verify("sha256", Buffer.from(`${h}.${p}`), { key: pub, dsaEncoding: "ieee-p1363" }, unb64u(s));
    const now = Date.now() / 1000;
    const problems = [];
    if (header.alg !== "ES256") problems.push(`alg ${header.alg}`);
    if (!sigOk) problems.push("bad signature");
    if (claims.aud !== origin) problems.push(`aud ${claims.aud} is not ${origin}`);
    if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) problems.push(`exp ${claims.exp} not within 24 h`);
    if (!/^(mailto:|https?:)/.test(String(claims.sub ?? ""))) problems.push(`sub ${claims.sub}`);
    return { ok: problems.length === 0, error: problems.join("; ") || null, key, claims };
  } catch (e) {
    return { ok: false, error: `unreadable JWT: ${e.message}`, key, claims: null };
  }
}

/**
 * @param {{ host?: string, port?: number }} [opts]
 */
export async function startPushService({ host = "127.0.0.1", port = 0 } = {}) {
  const subs = new Map(); // id → { ecdh, publicKey, auth, answers: [{status, headers}] }
  const messages = [];
  const events = new EventEmitter();
  let seq = 0;
  let origin = "";

  const server = createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size <= 64 * 1024) chunks.push(c);
    });
    req.on("end", () => {
      const id = decodeURIComponent(new URL(req.url, origin).pathname.replace(/^\/push\//, ""));
      const sub = subs.get(id);
      if (req.method !== "POST" || !sub) {
        res.writeHead(req.method !== "POST" ? 405 : 404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const headers = req.headers;
      const encoding = String(headers["content-encoding"] ?? "");
      const msg = {
        subscriptionId: id,
        receivedAt: Date.now(),
        encoding,
        headers,
        ttl: headers.ttl === undefined ? null : Number(headers.ttl),
        urgency: headers.urgency ?? null,
        size: body.length,
        text: null,
        payload: null,
        error: null,
        vapid: checkVapid(headers, origin),
        status: 201,
      };
      try {
        if (size > 4096) throw new Error(`body of ${size} bytes exceeds 4096`);
        const plain = encoding === "aes128gcm" ? decryptAes128gcm(sub, body) : encoding === "aesgcm" ? decryptAesgcm(sub, body, headers) : null;
        if (!plain) throw new Error(`unknown Content-Encoding ${encoding}`);
        msg.text = plain.toString("utf8");
        msg.payload = JSON.parse(msg.text);
      } catch (e) {
        msg.error = e.message;
      }
      const answer = sub.answers.shift() ?? { status: 201, headers: {} };
      msg.status = answer.status;
      messages.push(msg);
      res.writeHead(answer.status, { ...(answer.status === 201 ? { location: `${origin}/message/${messages.length}` } : {}), ...answer.headers });
      res.end();
      events.emit("message", msg);
    });
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const addr = server.address();
  origin = `http://${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`;

  return {
    origin,
    messages,

    /** A new subscription as a browser would produce it: endpoint and base64url keys. */
    subscribe(name = `s${++seq}`) {
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const publicKey = ecdh.getPublicKey(); // uncompressed, 65 bytes
      const auth = randomBytes(16);
      subs.set(name, { ecdh, publicKey, auth, answers: [] });
      return { id: name, endpoint: `${origin}/push/${encodeURIComponent(name)}`, keys: { p256dh: b64u(publicKey), auth: b64u(auth) } };
    },

    /** The next push to subscription `id` is answered with `status` (and headers); queued answers are used in order. */
    respond(id, status, headers = {}) {
      const sub = subs.get(id);
      if (!sub) throw new Error(`no subscription ${id}`);
      sub.answers.push({ status, headers });
    },

    /** Resolves with the first recorded message matching `predicate` (already received, or when it arrives). */
    waitFor(predicate = () => true, { timeoutMs = 20_000 } = {}) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const onMessage = (m) => {
          if (!predicate(m)) return;
          clearTimeout(timer);
          events.off("message", onMessage);
          resolve(m);
        };
        const timer = setTimeout(() => {
          events.off("message", onMessage);
          reject(new Error(`no matching push within ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        events.on("message", onMessage);
      });
    },

    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// For the helper's own check and for tests that want to send a push by hand: encrypt like a server would.
export function encryptAes128gcmForTest(keys, plaintext) {
  const ua = unb64u(keys.p256dh);
  const auth = unb64u(keys.auth);
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const asPublic = ecdh.getPublicKey();
  const salt = randomBytes(16);
  const ikm = hkdf(auth, ecdh.computeSecret(ua), Buffer.concat([Buffer.from("WebPush: info\0"), ua, asPublic]), 32);
  const cek = hkdf(salt, ikm, Buffer.from("Content-Encoding: aes128gcm\0"), 16);
  const nonce = hkdf(salt, ikm, Buffer.from("Content-Encoding: nonce\0"), 12);
  const c = createCipheriv("aes-128-gcm", cek, nonce);
  const ct = Buffer.concat([c.update(Buffer.concat([Buffer.from(plaintext), Buffer.from([2])])), c.final(), c.getAuthTag()]);
  const rs = Buffer.alloc(4);
  rs.writeUInt32BE(4096);
  return Buffer.concat([salt, rs, Buffer.from([65]), asPublic, ct]);
}
