// What an isolate keeps across requests stays within its bounds however many distinct keys requests bring
// (docs/architecture.md, "What an isolate keeps"): each map is filled well past its bound through the code that uses
// it, and its size is checked.
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bindTextWith, boundText } from "../../src/db/bound-sql";
import { importPrivateKey, importPublicKey } from "../../src/federation/signing/keys";
import { primeSpec, type Rfc9421Signature, verifyRfc9421WithKey } from "../../src/federation/signing/rfc9421";
import { BoundedMap, isolateMaps } from "../../src/lib/limits/bounded-map";
import { expireInstanceCache, instanceCache } from "../../src/services/instance/instance-cache";
import { db } from "./helpers";

/** A PEM that decodes but holds no key: importing it fails (and the failure is what is kept). */
const notAKey = (label: string) => `-----BEGIN PUBLIC KEY-----\n${btoa(label)}\n-----END PUBLIC KEY-----\n`;

const mapNamed = (name: string) => {
  const m = isolateMaps().get(name);
  if (!m) throw new Error(`no isolate map named ${name}: ${[...isolateMaps().keys()].join(", ")}`);
  return m;
};

describe("BoundedMap", () => {
  it("never holds more than its bound: a new key drops the oldest, a key already there keeps its place", () => {
    const m = new BoundedMap<string, number>(3);
    for (let i = 0; i < 1000; i++) m.set(`k${i}`, i);
    expect(m.size).toBe(3);
    expect([...m.keys()]).toEqual(["k997", "k998", "k999"]);
    m.set("k997", -1); // already there: nothing leaves
    expect([...m]).toEqual([
      ["k997", -1],
      ["k998", 998],
      ["k999", 999],
    ]);
    m.set("new", 0);
    expect([...m.keys()]).toEqual(["k998", "k999", "new"]);
    expect(() => new BoundedMap(0)).toThrow(/at least 1/);
  });
});

describe("the isolate's module-level maps", () => {
  it("are listed with their bounds", () => {
    expect(Object.fromEntries([...isolateMaps()].map(([name, m]) => [name, m.max]))).toEqual({
      "keys: RSA public keys by PEM": 500,
      "keys: RSA private keys by PEM": 100,
      "rfc9421: Ed25519 keys by PEM": 500,
      "rfc9421: signature spec by host": 5000,
    });
  });

  it("stay within their bounds when requests bring more distinct keys than that", async () => {
    // Signature specs of 6,000 hosts (a delivery batch primes the hosts it read).
    for (let i = 0; i < 6000; i++) primeSpec(`host${i}.example`, i % 2 ? "rfc9421" : null);
    const specs = mapNamed("rfc9421: signature spec by host");
    expect(specs.size).toBe(5000);
    expect(specs.has("host0.example")).toBe(false); // the oldest left
    expect(specs.get("host5999.example")).toBe("rfc9421");

    // Public keys of 700 signers, RSA and Ed25519 (these PEMs are not keys: each import fails, and is kept as failed).
    const sig = { alg: "ed25519", signature: new Uint8Array(64) } as Rfc9421Signature;
    const rsa = { ...sig, alg: "rsa-v1_5-sha256" } as Rfc9421Signature;
    for (let i = 0; i < 700; i++) {
      expect(await verifyRfc9421WithKey(["base"], sig, notAKey(`Ed25519 ${i}`))).toBe(false);
      expect(await verifyRfc9421WithKey(["base"], rsa, notAKey(`RSA ${i}`))).toBe(false);
    }
    expect(mapNamed("rfc9421: Ed25519 keys by PEM").size).toBe(500);
    expect(mapNamed("keys: RSA public keys by PEM").size).toBe(500);

    // Private keys of 150 local signers.
    await Promise.all(Array.from({ length: 150 }, (_, i) => importPrivateKey(notAKey(`private ${i}`)).catch(() => null)));
    expect(mapNamed("keys: RSA private keys by PEM").size).toBe(100);
    // A key still kept answers from memory: the same promise.
    expect(importPublicKey(notAKey("RSA 699"))).toBe(importPublicKey(notAKey("RSA 699")));
  });
});

describe("maps kept per statement and per snapshot", () => {
  it("a statement's whole texts, one per shape of its holes, at most 64", () => {
    const t = boundText("SELECT $a AS a WHERE a IN $ids");
    const ids = (n: number) =>
      sql`(${sql.join(
        Array.from({ length: n }, (_, i) => sql`${`v${i}`}`),
        sql`, `,
      )})`;
    for (let n = 1; n <= 200; n++) bindTextWith(db(), t, { a: "x" }, { ids: ids(n) });
    expect(t.tails.size).toBe(64);
  });

  it("the instance documents rendered from one snapshot, at most 64 (their keys carry the request's origin)", async () => {
    expireInstanceCache();
    const cache = await instanceCache(db(), { ...env, INSTANCE_CACHE_SECONDS: "60" } as typeof env);
    let renders = 0;
    const render = () => {
      renders++;
      return { n: renders };
    };
    for (let i = 0; i < 200; i++) await cache.document(`v2:https://host${i}.example`, render);
    expect(renders).toBe(200);
    // The newest 64 are kept, the older ones were dropped and render again.
    await cache.document("v2:https://host199.example", render);
    await cache.document("v2:https://host136.example", render);
    expect(renders).toBe(200);
    await cache.document("v2:https://host135.example", render);
    expect(renders).toBe(201);
  });
});
