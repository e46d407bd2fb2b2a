// IP classification for the SSRF guard (security §2.1, D1/D2). The WHATWG URL parser already canonicalises every
// IPv4 spelling (2130706433, 0x7f000001, 0177.0.0.1, 127.1 → 127.0.0.1) and IPv6 literals; this module still parses
// every textual IPv6 spelling itself (compressed or not, any case, leading zeros, a dotted-quad tail, brackets, a zone
// id) into its 16 bytes, and decides on those bytes only, never on the text.

export function parseIPv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/**
 * An IPv6 literal as its 16 bytes, or null. Reads `::` in place of one or more zero groups, 1 to 4 hex digits a group
 * in either case, a dotted IPv4 tail for the last 32 bits (`::ffff:10.0.0.1`, `64:ff9b::10.0.0.1`), the literal in
 * brackets (both or neither), and drops a zone id (`fe80::1%eth0`, or `%25eth0` as RFC 6874 writes it in a URL).
 */
export function parseIPv6Bytes(input: string): Uint8Array | null {
  let s = input.toLowerCase();
  if (s.startsWith("[") || s.endsWith("]")) {
    if (!(s.startsWith("[") && s.endsWith("]"))) return null;
    s = s.slice(1, -1);
  }
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!/^[0-9a-f:.]+$/.test(s)) return null;
  let tail: number[] = [];
  if (s.includes(".")) {
    // a dotted IPv4 tail (::ffff:127.0.0.1) is the last two groups
    const lastColon = s.lastIndexOf(":");
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (lastColon < 0 || !v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4; // parseIPv4 returns exactly four parts
    tail = [(a << 8) | b, (c << 8) | d];
    s = s.slice(0, lastColon + 1);
    // "x:" before the tail ends a group list; "::" before it is the compression itself
    if (!s.endsWith("::")) s = s.slice(0, -1);
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (h: string) => (h === "" ? [] : h.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : Number.NaN)));
  const [first = "", second = ""] = halves; // split always yields at least one element
  const head = parse(first);
  const rest = halves.length === 2 ? parse(second) : [];
  (halves.length === 2 ? rest : head).push(...tail); // the tail ends the address
  if ([...head, ...rest].some((n) => Number.isNaN(n))) return null;
  let groups = head;
  if (halves.length === 2) {
    const fill = 8 - head.length - rest.length;
    if (fill < 1) return null;
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest];
  }
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** 8 groups of 16 bits, or null: parseIPv6Bytes read as groups. */
export function parseIPv6(input: string): number[] | null {
  const b = parseIPv6Bytes(input);
  return b ? Array.from({ length: 8 }, (_, i) => ((b[2 * i] ?? 0) << 8) | (b[2 * i + 1] ?? 0)) : null;
}

const V4_BLOCKED: [number[], number][] = [
  [[0, 0, 0, 0], 8],
  [[127, 0, 0, 0], 8],
  [[10, 0, 0, 0], 8],
  [[172, 16, 0, 0], 12],
  [[192, 168, 0, 0], 16],
  [[169, 254, 0, 0], 16],
  [[198, 18, 0, 0], 15],
  [[100, 64, 0, 0], 10],
  [[255, 255, 255, 255], 32],
  [[192, 0, 0, 0], 24],
  [[192, 0, 2, 0], 24],
  [[198, 51, 100, 0], 24],
  [[203, 0, 113, 0], 24],
  [[192, 88, 99, 0], 24],
  [[192, 175, 48, 0], 24],
  [[224, 0, 0, 0], 4],
  [[240, 0, 0, 0], 4],
];

function v4ToInt(p: number[]): number {
  const [a, b, c, d] = p;
  // Not four parts: NaN, as the arithmetic always gave; (NaN & mask) is 0, so it lands in 0.0.0.0/8 and is blocked.
  if (a === undefined || b === undefined || c === undefined || d === undefined) return Number.NaN;
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

function inV4(ip: number[], net: number[], bits: number): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (v4ToInt(ip) & mask) >>> 0 === (v4ToInt(net) & mask) >>> 0;
}

export function isLoopback(rawHost: string): boolean {
  const host = canonicalHostname(rawHost);
  const v4 = parseIPv4(host);
  if (v4) return v4[0] === 127;
  const v6 = parseIPv6(host);
  if (v6) return v6.slice(0, 7).every((g) => g === 0) && v6[7] === 1;
  return host === "localhost" || host.endsWith(".localhost");
}

export function isBlockedIPv4(p: number[]): boolean {
  return V4_BLOCKED.some(([net, bits]) => inV4(p, net, bits));
}

/** The ways an IPv6 address carries an IPv4 address. */
export type IPv4Embedding = "mapped" | "translated" | "compatible" | "nat64" | "nat64-local" | "6to4" | "teredo";

/** The IPv4 addresses an IPv6 address carries (as bytes), and the form carrying them; null when it carries none. */
export function ipv4InIPv6(b: Uint8Array): { form: IPv4Embedding; v4: number[][] } | null {
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  const at = (from: number) => Array.from(b.subarray(from, from + 4));
  const last = at(12);
  // ::ffff:0:0/96, IPv4-mapped (RFC 4291 §2.5.5.2)
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return { form: "mapped", v4: [last] };
  // ::ffff:0:0:0/96, IPv4-translated (RFC 2765 §2.1, SIIT)
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return { form: "translated", v4: [last] };
  // ::/96, IPv4-compatible (RFC 4291 §2.5.5.1, deprecated); :: and ::1 are 0.0.0.0 and 0.0.0.1 here, both in 0.0.0.0/8
  if (zero(0, 12)) return { form: "compatible", v4: [last] };
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    // 64:ff9b::/96, the NAT64 well-known prefix (RFC 6052 §2.1)
    if (zero(4, 12)) return { form: "nat64", v4: [last] };
    // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): the last 32 bits for a /96 prefix inside it
    if (b[4] === 0 && b[5] === 1) return { form: "nat64-local", v4: [last] };
  }
  // 2002::/16, 6to4 (RFC 3056): 2002:V4ADDR::/48
  if (b[0] === 0x20 && b[1] === 0x02) return { form: "6to4", v4: [at(2)] };
  // 2001::/32, Teredo (RFC 4380): the server's address in bits 32..64, the client's in the last 32 bits inverted
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return { form: "teredo", v4: [at(4), last.map((x) => x ^ 0xff)] };
  return null;
}

/**
 * Forms whose packets go to the IPv4 address they carry, so the address alone decides (Ruby's IPAddr, which
 * Mastodon's PrivateAddressCheck uses, judges mapped addresses so). The others are refused whatever they carry:
 * 6to4 and Teredo (2002::/16 and 2001::/32 are in Mastodon's PrivateAddressCheck list) reach their IPv4 end through
 * whichever relay is nearest, which unwraps them inside its own network, and a Teredo address names a tunnel through
 * a client's NAT, never a server; local-use NAT64 is not globally reachable (IANA special-purpose registry) and lets
 * each network put the IPv4 address where its prefix length says (RFC 6052 §2.2), so no fixed bits can be judged.
 */
const JUDGED_AS_IPV4: ReadonlySet<IPv4Embedding> = new Set(["mapped", "translated", "compatible", "nat64"]);

/** True for an IPv6 address (16 bytes) the server must never connect to. */
export function isBlockedIPv6(b: Uint8Array): boolean {
  if (b.length !== 16) return true;
  const carried = ipv4InIPv6(b);
  if (carried) return carried.v4.some(isBlockedIPv4) || !JUDGED_AS_IPV4.has(carried.form);
  const [b0 = 0, b1 = 0, b2 = 0, b3 = 0] = b;
  // Outside 2000::/3, the only global unicast space: the rest of ::/8, 100::/64 (discard), fc00::/7 (unique local),
  // fe80::/10 (link-local), fec0::/10 (site-local), ff00::/8 (multicast) and every prefix not yet allocated.
  if ((b0 & 0xe0) !== 0x20) return true;
  if (b0 === 0x20 && b1 === 0x01) {
    const g1 = (b2 << 8) | b3;
    // 2001:10::/28 ORCHID, 2001:20::/28 ORCHIDv2, 2001:db8::/32 documentation
    if ((g1 & 0xfff0) === 0x10 || (g1 & 0xfff0) === 0x20 || g1 === 0xdb8) return true;
  }
  return false;
}

/** True for any address the server must never connect to (private, loopback, link-local, reserved ...). */
export function isBlockedAddress(host: string): boolean {
  const v4 = parseIPv4(host);
  if (v4) return isBlockedIPv4(v4);
  const v6 = parseIPv6Bytes(host);
  if (v6) return isBlockedIPv6(v6);
  // A bracketed literal this parser cannot read is refused rather than taken for a name.
  return host.startsWith("[");
}

export function isIpLiteral(host: string): boolean {
  return parseIPv4(host) !== null || (host.startsWith("[") && parseIPv6(host) !== null);
}

/**
 * A hostname as DNS sees it: lower case, without the trailing dots that make it "fully qualified" (`localhost.` and
 * `127.0.0.1.` name the same machine as `localhost` and `127.0.0.1`). Every name check works on this form.
 */
export function canonicalHostname(host: string): string {
  return host.toLowerCase().replace(/\.+$/, "");
}

/**
 * Top-level names that only resolve inside a network (RFC 6761/6762/8375, cloud and router conventions) or not on the
 * Internet at all. `.test` and `.example` are left alone: they resolve nowhere, and tests federate with them.
 */
const INTERNAL_TLDS = new Set([
  "localhost",
  "local",
  "localdomain",
  "internal",
  "intranet",
  "lan",
  "home",
  "corp",
  "private",
  "priv",
  "domain",
  "arpa",
  "onion",
  "i2p",
  "alt",
  "invalid",
  "svc",
  "cluster",
  "kubernetes",
]);

/** Names of cloud metadata services that are reachable under more than an internal suffix. */
const METADATA_NAMES = new Set(["metadata", "instance-data", "metadata.google.internal", "metadata.goog", "metadata.azure.com", "metadata.tencentyun.com"]);

/** An IPv4 address written into a name (`127.0.0.1.nip.io`, `www-10-0-0-1.sslip.io`, `7f000001.nip.io`), or null. */
function embeddedIPv4(host: string): number[][] {
  const found: number[][] = [];
  const re = /(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})(?=$|[.-])/g;
  for (let m = re.exec(host); m; m = re.exec(host)) {
    const p = m.slice(1, 5).map(Number);
    if (p.every((x) => x <= 255)) found.push(p);
    re.lastIndex = m.index + 1; // overlapping spellings (1.2.3.4.5)
  }
  for (const label of host.split(".")) {
    if (/^[0-9a-f]{8}$/.test(label)) {
      const n = parseInt(label, 16);
      found.push([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
    }
  }
  return found;
}

/**
 * Why a host name (not an IP literal) must not be fetched, or null when it may be: names of this machine, single
 * labels (resolved through the local search domain), internal suffixes, metadata services, and public wildcard-DNS
 * names that spell a private address.
 */
export function internalNameReason(rawHost: string): string | null {
  const host = canonicalHostname(rawHost);
  if (!host) return "empty host";
  if (!host.includes(".")) return "single-label host not allowed";
  const tld = host.slice(host.lastIndexOf(".") + 1);
  if (INTERNAL_TLDS.has(tld)) return "host not allowed";
  if (METADATA_NAMES.has(host)) return "host not allowed";
  if (embeddedIPv4(host).some(isBlockedIPv4)) return "host spells a private address";
  return null;
}
