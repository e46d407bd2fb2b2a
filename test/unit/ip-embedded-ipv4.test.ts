// The outbound address guard on IPv6 addresses that carry an IPv4 address (outside review F4): whatever the form
// (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4, Teredo) and however the
// address is spelled (compressed or not, any case, leading zeros, a dotted-quad tail, brackets, a zone id), a private,
// loopback, link-local or reserved IPv4 address inside it is refused, and a public one in a form that is judged by its
// IPv4 address (mapped, translated, compatible, NAT64) is judged as that IPv4 address. The spellings are generated
// (fast-check) and also sent through the guards push endpoints and relays call: checkPushEndpoint and checkUrl.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Config } from "../../src/env";
import { baseFetchOptions } from "../../src/federation/remote/fetch-options";
import { isBlockedAddress, parseIPv6, parseIPv6Bytes } from "../../src/net/ip";
import { checkUrl, FetchRefused } from "../../src/net/safe-fetch";
import { checkPushEndpoint } from "../../src/push/endpoint";

const cfg = { domain: "tern.test", allowLoopbackFetch: false } as Config;

/** IPv4 networks no outbound request may reach (written out here, not taken from ip.ts). */
const BLOCKED_V4: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

const v4Bytes = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const v4Text = (b: number[]) => b.join(".");
const v4Int = (s: string) => s.split(".").reduce((n, p) => n * 256 + Number(p), 0);

/** An address inside one of BLOCKED_V4, as four bytes. */
const blockedV4 = fc.tuple(fc.constantFrom(...BLOCKED_V4), fc.integer({ min: 0, max: 0xffffffff })).map(([[net, bits], host]) => {
  const hostMask = bits === 32 ? 0 : 0xffffffff >>> bits;
  return v4Bytes(((v4Int(net) & ~hostMask) | (host & hostMask)) >>> 0);
});
const anyV4 = fc.integer({ min: 0, max: 0xffffffff }).map(v4Bytes);
const bytes = (n: number) => fc.array(fc.integer({ min: 0, max: 255 }), { minLength: n, maxLength: n });

type Form = "mapped" | "translated" | "compatible" | "nat64" | "nat64-local" | "6to4" | "teredo-server" | "teredo-client";
/** Forms the guard judges by the IPv4 address alone; the others are refused whatever they carry. */
const JUDGED_AS_IPV4: Form[] = ["mapped", "translated", "compatible", "nat64"];
const ALWAYS_BLOCKED: Form[] = ["nat64-local", "6to4", "teredo-server", "teredo-client"];

/** The 16 bytes of `form` carrying `v4`; `fill` supplies the bits the form leaves free. */
function embed(form: Form, v4: number[], fill: number[]): number[] {
  const z = (n: number) => new Array<number>(n).fill(0);
  switch (form) {
    case "mapped": // ::ffff:0:0/96 (RFC 4291)
      return [...z(10), 0xff, 0xff, ...v4];
    case "translated": // ::ffff:0:0:0/96 (RFC 2765)
      return [...z(8), 0xff, 0xff, 0, 0, ...v4];
    case "compatible": // ::/96 (RFC 4291, deprecated)
      return [...z(12), ...v4];
    case "nat64": // 64:ff9b::/96 (RFC 6052)
      return [0, 0x64, 0xff, 0x9b, ...z(8), ...v4];
    case "nat64-local": // 64:ff9b:1::/48 (RFC 8215)
      return [0, 0x64, 0xff, 0x9b, 0, 1, ...fill.slice(0, 6), ...v4];
    case "6to4": // 2002:V4::/48 (RFC 3056)
      return [0x20, 0x02, ...v4, ...fill.slice(0, 10)];
    case "teredo-server": // 2001:0:SERVER:flags:port:~client (RFC 4380)
      return [0x20, 0x01, 0, 0, ...v4, ...fill.slice(0, 8)];
    case "teredo-client":
      return [0x20, 0x01, 0, 0, ...fill.slice(0, 8), ...v4.map((b) => b ^ 0xff)];
  }
}

interface Spelling {
  dotted: boolean;
  compress: number;
  pads: number[];
  upper: boolean[];
}
const spelling = fc.record({
  dotted: fc.boolean(),
  compress: fc.nat(),
  pads: fc.array(fc.nat(3), { minLength: 8, maxLength: 8 }),
  upper: fc.array(fc.boolean(), { minLength: 32, maxLength: 32 }),
});

/**
 * One textual spelling of 16 bytes: the last 32 bits as a dotted quad or two hex groups, each hex group with leading
 * zeros added and letters in either case, and "::" in place of any run of zero groups (or none).
 */
function render(b: number[], s: Spelling): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((b[2 * i] ?? 0) << 8) | (b[2 * i + 1] ?? 0));
  const hexCount = s.dotted ? 6 : 8;
  let hex = groups.slice(0, hexCount).map((g, i) => {
    const t = g.toString(16).padStart(Math.min(4, g.toString(16).length + (s.pads[i] ?? 0)), "0");
    return [...t].map((ch, j) => (s.upper[i * 4 + j] ? ch.toUpperCase() : ch)).join("");
  });
  const tail = s.dotted ? [v4Text(b.slice(12, 16))] : [];
  // Every run of zero groups is a place "::" may stand; index runs.length (mod) means no compression.
  const runs: [number, number][] = [];
  for (let i = 0; i < hexCount; i++) for (let j = i + 1; j <= hexCount && groups[j - 1] === 0; j++) runs.push([i, j]);
  const pick = s.compress % (runs.length + 1);
  const run = runs[pick];
  if (!run) return [...hex, ...tail].join(":");
  const [i, j] = run;
  const head = hex.slice(0, i).join(":");
  hex = hex.slice(j);
  const rest = [...hex, ...tail].join(":");
  return `${head}::${rest}`;
}

const groupsOf = (b: number[]) => Array.from({ length: 8 }, (_, i) => ((b[2 * i] ?? 0) << 8) | (b[2 * i + 1] ?? 0));

/** Refused by every outbound guard: the address check, checkUrl (relays, fetches) and checkPushEndpoint. */
function expectRefusedEverywhere(literal: string) {
  expect(isBlockedAddress(`[${literal}]`), literal).toBe(true);
  for (const check of [() => checkUrl(`https://[${literal}]/inbox`, baseFetchOptions(cfg)), () => checkPushEndpoint(`https://[${literal}]/push`, cfg)]) {
    let err: unknown;
    try {
      check();
    } catch (e) {
      err = e;
    }
    expect(err, literal).toBeInstanceOf(FetchRefused);
    expect((err as FetchRefused).reason, literal).toBe("address not allowed");
  }
}

describe("IPv6 addresses carrying an IPv4 address (F4)", () => {
  it("refuses every spelling of every form carrying a private, loopback, link-local or reserved IPv4 address", () => {
    fc.assert(
      fc.property(fc.constantFrom<Form>(...JUDGED_AS_IPV4, ...ALWAYS_BLOCKED), blockedV4, bytes(10), spelling, (form, v4, fill, s) => {
        expect(isBlockedAddress(v4Text(v4))).toBe(true);
        const b = embed(form, v4, fill);
        const text = render(b, s);
        expect(parseIPv6(text), text).toEqual(groupsOf(b));
        expectRefusedEverywhere(text);
        // Unbracketed and with a zone id, as the parser also reads them.
        expect(isBlockedAddress(text), text).toBe(true);
        expect(isBlockedAddress(`${text}%eth0`), text).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it("judges mapped, translated, compatible and NAT64 addresses as their IPv4 address, and refuses 6to4, Teredo and local-use NAT64 whatever they carry", () => {
    fc.assert(
      fc.property(fc.constantFrom<Form>(...JUDGED_AS_IPV4, ...ALWAYS_BLOCKED), anyV4, bytes(10), spelling, (form, v4, fill, s) => {
        const text = render(embed(form, v4, fill), s);
        const expected = ALWAYS_BLOCKED.includes(form) || isBlockedAddress(v4Text(v4));
        expect(isBlockedAddress(`[${text}]`), `${form} ${v4Text(v4)} ${text}`).toBe(expected);
        if (expected) expectRefusedEverywhere(text);
        else expect(checkPushEndpoint(`https://[${text}]/push`, cfg).protocol).toBe("https:");
      }),
      { numRuns: 3000 },
    );
  });

  it("refuses [::ffff:0:a00:1] (10.0.0.1 as an IPv4-translated address) and its neighbours in the push and relay guards", () => {
    for (const literal of [
      "::ffff:0:a00:1",
      "::FFFF:0:A00:1",
      "::ffff:0:10.0.0.1",
      "0:0:0:0:ffff:0:a00:1",
      "0000:0000:0000:0000:ffff:0000:0a00:0001",
      "::ffff:0:7f00:1",
      "::ffff:0:a9fe:a9fe", // 169.254.169.254, the metadata service
      "::ffff:10.0.0.1",
      "::ffff:a00:1",
      "::10.0.0.1",
      "::a9fe:a9fe",
      "64:ff9b::10.0.0.1",
      "64:FF9B::A00:1",
      "64:ff9b:1::a00:1",
      "64:ff9b:1:ffff:ffff:ffff:808:808", // local-use NAT64: refused whatever it carries
      "2002:a00:1::1",
      "2002:808:808::1", // 6to4: refused whatever it carries
      "2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo, client 10.0.0.1
      "2001:0:a00:1::1", // Teredo, server 10.0.0.1
      "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo with public server and client: refused as a whole
    ])
      expectRefusedEverywhere(literal);
    expect(isBlockedAddress("[::ffff:0:a00:1%25eth0]")).toBe(true);
    expect(isBlockedAddress("::ffff:0:a00:1%eth0")).toBe(true);
  });

  it("lets a public IPv4 address through in the mapped and NAT64 forms, as the address itself would be", () => {
    for (const literal of ["::ffff:93.184.216.34", "::ffff:5db8:d822", "64:ff9b::93.184.216.34", "64:ff9b::5db8:d822", "::ffff:0:5db8:d822"]) {
      expect(isBlockedAddress(`[${literal}]`), literal).toBe(false);
      expect(checkPushEndpoint(`https://[${literal}]/push`, cfg).protocol).toBe("https:");
      expect(checkUrl(`https://[${literal}]/inbox`, baseFetchOptions(cfg)).protocol).toBe("https:");
    }
  });

  it("reads every spelling into the same 16 bytes, and refuses what it cannot read", () => {
    const tenInTranslated = [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 10, 0, 0, 1];
    for (const text of [
      "::ffff:0:a00:1",
      "::FFFF:0:A00:1",
      "0:0:0:0:ffff:0:a00:1",
      "0000:0000:0000:0000:FFFF:0000:0A00:0001",
      "0::ffff:0:10.0.0.1",
      "::ffff:0:0a00:1",
      "[::ffff:0:a00:1]",
      "::ffff:0:a00:1%eth0",
      "[::ffff:0:10.0.0.1%25en0]",
    ])
      expect(Array.from(parseIPv6Bytes(text) ?? []), text).toEqual(tenInTranslated);
    for (const text of ["[::1", "::1]", "1:2:3:4:5:6:7:8:9", "1::2::3", ":::1", "1:2:3:4:5:6:7::8", "::ffff:1.2.3", "::1.2.3.4:5", "::00000", "::g", "1.2.3.4"])
      expect(parseIPv6Bytes(text), text).toBeNull();
    expect(isBlockedAddress("[::ffff:zz]")).toBe(true);
  });

  it("refuses IPv6 addresses outside the global unicast space 2000::/3", () => {
    for (const literal of ["fec0::1", "64:ff9b:0:0:1::a00:1", "64:ff9b::1:0:0:1", "100::1", "4000::1", "fc00::1", "fe80::1", "ff02::1", "::2:0:0:1"])
      expectRefusedEverywhere(literal);
    expect(isBlockedAddress("[2606:4700::1111]")).toBe(false);
  });
});
