// Hostile inbound requests (security.md rows C1-C24) at the HTTP level and through processing.
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { INBOX_HOST_FREE } from "../../src/federation/inbox/inbox-verify";
import { rsaSign } from "../../src/federation/signing/keys";
import { base64 } from "../../src/lib/security/crypto";
import { makeUser, ORIGIN } from "./helpers";
import {
  AS_PUBLIC,
  create,
  deliver,
  installFetchMock,
  newId,
  note,
  postInbox,
  remoteActor,
  runJobs,
  serveJson,
  sql,
  type RemoteActor,
} from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

const sha256 = async (s: string) => base64(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s))));

interface RawOpts {
  path?: string;
  signedTarget?: string;
  date?: string;
  names?: string[];
  digest?: string | null;
  signedHost?: string;
  algorithm?: string;
  keyId?: string;
}

/** A hand-made signed POST, for the variations signRequest() would never produce. */
async function rawPost(a: RemoteActor, body: string, o: RawOpts = {}): Promise<Response> {
  const path = o.path ?? "/inbox";
  const date = o.date ?? new Date().toUTCString();
  const digest = o.digest === undefined ? `SHA-256=${await sha256(body)}` : o.digest;
  const names = o.names ?? ["(request-target)", "host", "date", "digest"];
  const values: Record<string, string> = {
    "(request-target)": `post ${o.signedTarget ?? path}`,
    host: o.signedHost ?? "tern.test",
    date,
    digest: digest ?? "",
    "content-type": "application/activity+json",
  };
  const signing = names.map((n) => `${n}: ${values[n]}`).join("\n");
  const signature = await rsaSign(a.keys.privateKeyPem, signing);
  const headers: Record<string, string> = {
    "content-type": "application/activity+json",
    host: "tern.test",
    date,
    signature: `keyId="${o.keyId ?? a.keyId}",algorithm="${o.algorithm ?? "rsa-sha256"}",headers="${names.join(" ")}",signature="${signature}"`,
  };
  if (digest) headers.digest = digest;
  return SELF.fetch(`${ORIGIN}${path}`, { method: "POST", headers, body });
}

const like = (a: RemoteActor, object = `${ORIGIN}/users/nobody/statuses/1`) => ({ id: newId(a, "likes"), type: "Like", actor: a.uri, object });
const count = async (q: string, ...b: unknown[]) => Number((await sql(q, ...b))[0].n);

describe("signatures at the inbox (C1-C10)", () => {
  it("C1: an unsigned POST is 401 Request not signed", async () => {
    const res = await SELF.fetch(`${ORIGIN}/inbox`, { method: "POST", headers: { "content-type": "application/activity+json" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "Request not signed" });
  });

  it("a well-formed signed POST is 202 and stored for processing", async () => {
    const bob = await remoteActor("bob");
    const body = JSON.stringify(like(bob));
    expect((await rawPost(bob, body)).status).toBe(202);
    expect(await count("SELECT count(*) AS n FROM inbox_items")).toBe(1);
  });

  it("C2: Date two hours old is refused", async () => {
    const bob = await remoteActor("bob");
    const body = JSON.stringify(like(bob));
    const res = await rawPost(bob, body, { date: new Date(Date.now() - 2 * 3600_000).toUTCString() });
    expect(res.status).toBe(401);
    expect((await res.json<any>()).error).toMatch(/time window/);
    expect((await rawPost(bob, body, { date: new Date(Date.now() + 2 * 3600_000).toUTCString() })).status).toBe(401);
  });

  it("C4: date-only headers, or a POST without a signed digest, are refused", async () => {
    const bob = await remoteActor("bob");
    const body = JSON.stringify(like(bob));
    const a = await rawPost(bob, body, { names: ["date"] });
    expect(a.status).toBe(401);
    expect((await a.json<any>()).error).toMatch(/Mastodon requires/);
    const b = await rawPost(bob, body, { names: ["(request-target)", "host", "date"] });
    expect(b.status).toBe(401);
    expect((await b.json<any>()).error).toMatch(/Digest header to be signed/);
  });

  it("C5: a digest that does not match the body, SHA-512 only, or not base64", async () => {
    const bob = await remoteActor("bob");
    const body = JSON.stringify(like(bob));
    const tampered = await rawPost(bob, body, { digest: `SHA-256=${await sha256(`${body} `)}` });
    expect(tampered.status).toBe(401);
    expect((await tampered.json<any>()).error).toMatch(/Invalid Digest/);
    expect((await rawPost(bob, body, { digest: "SHA-512=abcd" })).status).toBe(401);
    expect((await rawPost(bob, body, { digest: "SHA-256=!!notbase64!!" })).status).toBe(401);
  });

  it("C6: request-target or Host signed for something else", async () => {
    const bob = await remoteActor("bob");
    await makeUser("alice");
    const body = JSON.stringify(like(bob));
    const wrongTarget = await rawPost(bob, body, { path: "/inbox", signedTarget: "/users/alice/inbox" });
    expect(wrongTarget.status).toBe(401);
    expect((await wrongTarget.json<any>()).error).toBe("Verification failed");
    const wrongHost = await rawPost(bob, body, { signedHost: "other.example" });
    expect(wrongHost.status).toBe(401);
    expect((await wrongHost.json<any>()).error).toBe("Verification failed");
    // the same request signed for what it is passes
    expect((await rawPost(bob, body, { path: "/users/alice/inbox" })).status).toBe(202);
  });

  it("C7: unsupported algorithm, empty signature, malformed header: 401, never 500", async () => {
    const bob = await remoteActor("bob");
    const body = JSON.stringify(like(bob));
    expect((await rawPost(bob, body, { algorithm: "hmac-sha256" })).status).toBe(401);
    for (const sig of ['keyId="x",signature=""', "garbage", `keyId="${bob.keyId}",signature="a", keyId="y",signature="b"`]) {
      const res = await SELF.fetch(`${ORIGIN}/inbox`, { method: "POST", headers: { signature: sig, date: new Date().toUTCString() }, body });
      expect(res.status, sig).toBe(401);
    }
  });

  it("C8: a valid signature from another host cannot speak for bob", async () => {
    await remoteActor("bob");
    const evil = await remoteActor("eve", "evil.example");
    const bobUri = "https://remote.example/users/bob";
    const n = { id: `${bobUri}/statuses/forged`, type: "Note", attributedTo: bobUri, content: "<p>forged</p>", to: [AS_PUBLIC] };
    const forged = { id: `${n.id}/activity`, type: "Create", actor: bobUri, object: n };
    const res = await postInbox(evil, forged);
    expect(res.status).toBe(401);
    expect((await res.json<any>()).error).toMatch(/actor/);
    await runJobs();
    expect(await count("SELECT count(*) AS n FROM statuses")).toBe(0);
  });

  it("C9: the key's owner must list that key, and be on the key's host", async () => {
    const liar = await remoteActor("liar", "remote.example", { serve: false });
    serveJson("remote.example", "/users/liar", {
      ...liar.doc,
      publicKey: { id: "https://remote.example/users/liar#other-key", owner: liar.uri, publicKeyPem: liar.keys.publicKeyPem },
    });
    const r1 = await postInbox(liar, like(liar));
    expect(r1.status).toBe(401);
    expect((await r1.json<any>()).error).toBe("Verification failed");
    const stray = await remoteActor("stray", "remote.example", { serve: false });
    serveJson("remote.example", "/users/stray", {
      ...stray.doc,
      publicKey: { id: stray.keyId, owner: "https://evil.example/users/x", publicKeyPem: stray.keys.publicKeyPem },
    });
    expect((await postInbox(stray, like(stray))).status).toBe(401);
  });

  it("C10: an actor document served as text/html, or whose id is on another host, is not trusted", async () => {
    const html = await remoteActor("htmlguy", "remote.example", { contentType: "text/html" });
    const r1 = await postInbox(html, like(html));
    expect(r1.status).toBe(401);
    expect((await r1.json<any>()).error).toBe("Verification failed");
    const moved = await remoteActor("moved", "remote.example", { serve: false });
    serveJson("remote.example", "/users/moved", { ...moved.doc, id: "https://evil.example/users/moved" });
    expect((await postInbox(moved, like(moved))).status).toBe(401);
  });
});

describe("payload limits (C21)", () => {
  it("5 MB body 413, invalid JSON 400, array 400, missing type 400", async () => {
    const bob = await remoteActor("bob");
    const big = "x".repeat(5 * 1024 * 1024);
    const res = await SELF.fetch(`${ORIGIN}/inbox`, {
      method: "POST",
      headers: { "content-length": String(big.length), signature: `keyId="${bob.keyId}",signature="a"` },
      body: big,
    });
    expect(res.status).toBe(413);
    expect((await postInbox(bob, null, { body: "{not json" })).status).toBe(400);
    expect((await postInbox(bob, null, { body: JSON.stringify([like(bob)]) })).status).toBe(400);
    expect((await postInbox(bob, null, { body: JSON.stringify("Like") })).status).toBe(400);
    const untyped = like(bob) as Record<string, unknown>;
    delete untyped.type;
    expect([202, 400]).toContain((await postInbox(bob, untyped)).status);
    await runJobs();
    expect(await count("SELECT count(*) AS n FROM inbox_items")).toBe(0);
  });
});

describe("authorship of objects (C11-C14)", () => {
  it("C11: Create whose object id is on another host is dropped", async () => {
    const bob = await remoteActor("bob");
    const n = note(bob, { id: "https://victim.example/users/v/statuses/1" });
    expect((await deliver(bob, create(bob, n, { id: newId(bob) }))).status).toBe(202);
    expect(await count("SELECT count(*) AS n FROM statuses")).toBe(0);
  });

  it("C12: Create attributed to another user on the same host is dropped", async () => {
    const bob = await remoteActor("bob");
    const n = note(bob, { attributedTo: "https://remote.example/users/carl" });
    await deliver(bob, create(bob, n));
    expect(await count("SELECT count(*) AS n FROM statuses")).toBe(0);
  });

  it("C13: an Announce embedding a forged object is re-fetched from the origin", async () => {
    const bob = await remoteActor("bob");
    const zed = await remoteActor("zed", "other.example");
    const real = note(zed, { id: "https://other.example/users/zed/statuses/7", content: "<p>the real words</p>" });
    serveJson("other.example", "/users/zed/statuses/7", real);
    const forged = { ...real, content: "<p>forged words</p>" };
    await deliver(bob, { id: newId(bob, "announces"), type: "Announce", actor: bob.uri, object: forged, to: [AS_PUBLIC] });
    const [s] = await sql("SELECT content, account_id FROM statuses WHERE uri = ?", real.id);
    expect(s.content).toBe("<p>the real words</p>");
    // an embedded object that cannot be fetched from its origin is not stored at all
    const ghost = note(zed, { id: "https://other.example/users/zed/statuses/404", content: "<p>ghost</p>" });
    serveJson("other.example", "/users/zed/statuses/404", { error: "gone" }, "application/json", 404);
    await deliver(bob, { id: newId(bob, "announces"), type: "Announce", actor: bob.uri, object: ghost, to: [AS_PUBLIC] });
    expect(await count("SELECT count(*) AS n FROM statuses WHERE uri = ?", ghost.id)).toBe(0);
  });

  it("C14: Update{Person}, Delete{Note} and Update{Note} of someone else are dropped", async () => {
    const bob = await remoteActor("bob");
    const mal = await remoteActor("mal");
    const n = note(bob, { content: "<p>bob's</p>" });
    await deliver(bob, create(bob, n));
    await deliver(mal, { id: newId(mal), type: "Like", actor: mal.uri, object: n.id });
    const r = await deliver(mal, { id: newId(mal), type: "Update", actor: mal.uri, object: { ...bob.doc, name: "pwned" } });
    expect(r.status).toBe(202);
    expect((await sql("SELECT display_name FROM accounts WHERE uri = ?", bob.uri))[0].display_name).toBe("BOB");
    await deliver(mal, { id: newId(mal), type: "Delete", actor: mal.uri, object: n.id });
    await deliver(mal, {
      id: newId(mal),
      type: "Update",
      actor: mal.uri,
      object: { ...n, attributedTo: mal.uri, content: "<p>mal's</p>", updated: new Date().toISOString() },
    });
    const [s] = await sql("SELECT content FROM statuses WHERE uri = ?", n.id);
    expect(s.content).toBe("<p>bob's</p>");
    expect(await count("SELECT count(*) AS n FROM tombstones")).toBe(0);
  });
});

describe("suspension and unknown actors (C19, C20)", () => {
  it("C19: a suspended domain gets 403; Announces of its old posts and posts of suspended actors are dropped", async () => {
    const bob = await remoteActor("bob");
    const zed = await remoteActor("zed", "bad.example");
    const old = note(zed, { id: "https://bad.example/users/zed/statuses/1" });
    await deliver(zed, create(zed, old));
    expect(await count("SELECT count(*) AS n FROM statuses WHERE uri = ?", old.id)).toBe(1);
    await sql("INSERT INTO domain_blocks (id, domain, severity, created_at) VALUES ('00000000000000000001', 'bad.example', 'suspend', 0)");
    const res = await postInbox(zed, like(zed));
    expect(res.status).toBe(403);
    await deliver(bob, { id: newId(bob, "announces"), type: "Announce", actor: bob.uri, object: old.id, to: [AS_PUBLIC] });
    expect(await count("SELECT count(*) AS n FROM statuses WHERE reblog_of_id IS NOT NULL")).toBe(0);
    // a suspended actor on an allowed domain
    await sql("UPDATE accounts SET suspended_at = 1 WHERE uri = ?", bob.uri);
    await deliver(bob, create(bob, note(bob)));
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = (SELECT id FROM accounts WHERE uri = ?)", bob.uri)).toBe(0);
  });

  it("C20: Delete{Actor} for an unknown actor is 202 at once, with no fetch", async () => {
    const ghost = await remoteActor("ghost", "gone.example", { serve: false });
    const res = await postInbox(ghost, { id: `${ghost.uri}#delete`, type: "Delete", actor: ghost.uri, object: ghost.uri });
    expect(res.status).toBe(202);
    expect(await count("SELECT count(*) AS n FROM inbox_items")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM accounts WHERE uri = ?", ghost.uri)).toBe(0);
  });
});

describe("caps and loops (C22, C24)", () => {
  it("C22: a huge note is capped", async () => {
    const bob = await remoteActor("bob");
    const n = note(bob, {
      type: "Question",
      content: `<p>${"a".repeat(600_000)}</p>`,
      tag: Array.from({ length: 2000 }, (_, i) => ({ type: "Hashtag", name: `#t${i}` })),
      attachment: Array.from({ length: 1000 }, (_, i) => ({ type: "Document", mediaType: "image/png", url: `https://remote.example/m/${i}.png` })),
      oneOf: Array.from({ length: 5000 }, (_, i) => ({ type: "Note", name: `o${i}` })),
    });
    expect((await deliver(bob, create(bob, n))).status).toBe(202);
    const [s] = await sql("SELECT id, length(content) AS len FROM statuses WHERE uri = ?", n.id);
    expect(s.len).toBeLessThanOrEqual(100_100);
    expect(await count("SELECT count(*) AS n FROM status_tags WHERE status_id = ?", s.id)).toBeLessThanOrEqual(20);
    expect(await count("SELECT count(*) AS n FROM media_attachments WHERE status_id = ?", s.id)).toBeLessThanOrEqual(16);
    const [p] = await sql("SELECT options FROM polls WHERE status_id = ?", s.id);
    expect(JSON.parse(p.options).length).toBeLessThanOrEqual(20);
    const rendered = await (await import("./helpers")).anon.get(`/api/v1/statuses/${BigInt(s.id)}`);
    expect(rendered.status).toBe(200);
  });

  it("C24: an inReplyTo loop terminates, and a deep chain stops at the depth cap", async () => {
    const bob = await remoteActor("bob");
    const a = note(bob, { id: "https://remote.example/users/bob/statuses/loop-a", inReplyTo: "https://remote.example/users/bob/statuses/loop-b" });
    const b = note(bob, { id: "https://remote.example/users/bob/statuses/loop-b", inReplyTo: "https://remote.example/users/bob/statuses/loop-a" });
    serveJson("remote.example", "/users/bob/statuses/loop-a", a);
    serveJson("remote.example", "/users/bob/statuses/loop-b", b);
    const c = note(bob, { inReplyTo: a.id });
    await deliver(bob, create(bob, c));
    expect(await count("SELECT count(*) AS n FROM statuses WHERE uri IN (?, ?, ?)", a.id, b.id, c.id)).toBe(3);

    for (let i = 0; i < 30; i++) {
      serveJson(
        "remote.example",
        `/users/bob/statuses/chain-${i}`,
        note(bob, { id: `https://remote.example/users/bob/statuses/chain-${i}`, inReplyTo: `https://remote.example/users/bob/statuses/chain-${i + 1}` }),
      );
    }
    const tip = note(bob, { inReplyTo: "https://remote.example/users/bob/statuses/chain-0" });
    await deliver(bob, create(bob, tip));
    const fetched = await count("SELECT count(*) AS n FROM statuses WHERE uri LIKE '%/chain-%'");
    expect(fetched).toBeGreaterThan(0);
    expect(fetched).toBeLessThanOrEqual(6);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE uri = ?", tip.id)).toBe(1);
  });
});

describe("flood (C25)", () => {
  const hostWindow = (domain: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`inbox_host:${domain}`));

  it("a host over its inbox budget gets 429 with Retry-After once past its first POSTs counted here; other hosts are unaffected", async () => {
    const bob = await remoteActor("bob");
    const zed = await remoteActor("zed", "other.example");
    // The host's budget spent through other isolates: its object holds a full window.
    await runInDurableObject(hostWindow("remote.example"), async (_obj, state) => {
      const now = Date.now();
      await state.storage.put("w", { start: now, end: now + 300_000, count: 1_000_000 });
    });
    // This isolate counts a host's first INBOX_HOST_FREE POSTs of a window on its own; the next asks the object.
    let refused: Response | null = null;
    for (let i = 0; i <= INBOX_HOST_FREE && !refused; i++) {
      const res = await postInbox(bob, like(bob));
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(202);
    }
    expect(refused?.status).toBe(429);
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await postInbox(bob, like(bob))).status).toBe(429);
    expect((await postInbox(zed, like(zed))).status).toBe(202);
  });

  it("a host's trickle makes no Durable Object call", async () => {
    const tom = await remoteActor("tom", "trickle.example");
    for (let i = 0; i < 3; i++) expect((await postInbox(tom, like(tom))).status).toBe(202);
    await runInDurableObject(hostWindow("trickle.example"), async (_obj, state) => {
      expect(await state.storage.get("w")).toBeUndefined();
    });
  });
});
