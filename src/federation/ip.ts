// IP classification for the SSRF guard (security §2.1, D1/D2). The WHATWG URL parser already canonicalises every
// IPv4 spelling (2130706433, 0x7f000001, 0177.0.0.1, 127.1 → 127.0.0.1) and IPv6 literals, so this only has to
// classify canonical forms; it parses IPv6 fully (including ::ffff:a.b.c.d) so mapped addresses are caught.

export function parseIPv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** 8 groups of 16 bits, or null. Accepts an embedded dotted IPv4 tail. */
export function parseIPv6(input: string): number[] | null {
  let s = input.replace(/^\[|\]$/g, "").toLowerCase();
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!/^[0-9a-f:.]+$/.test(s)) return null;
  if (s.includes(".")) {
    // a dotted IPv4 tail (::ffff:127.0.0.1) becomes two hex groups
    const lastColon = s.lastIndexOf(":");
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4; // parseIPv4 returns exactly four parts
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (h: string) => (h === "" ? [] : h.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const [first = "", second = ""] = halves; // split always yields at least one element
  const head = parse(first);
  const rest = halves.length === 2 ? parse(second) : [];
  if ([...head, ...rest].some((n) => Number.isNaN(n))) return null;
  let groups = head;
  if (halves.length === 2) {
    const fill = 8 - head.length - rest.length;
    if (fill < 1) return null;
    groups = [...head, ...new Array(fill).fill(0), ...rest];
  }
  return groups.length === 8 ? groups : null;
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

export function isBlockedIPv6(g: number[]): boolean {
  const all0 = (a: number[]) => a.every((x) => x === 0);
  if (all0(g)) return true; // ::
  if (all0(g.slice(0, 7)) && g[7] === 1) return true; // ::1
  // IPv4-mapped ::ffff:0:0/96 and IPv4-compatible: judge the embedded IPv4 (and block anyway: no reason to use them)
  if (all0(g.slice(0, 5)) && (g[5] === 0xffff || g[5] === 0)) return true;
  const [g0, g1] = g;
  // A missing group masks to 0, as bitwise operators always treated undefined.
  const m0 = g0 ?? 0;
  const m1 = g1 ?? 0;
  if (g0 === 0x64 && g1 === 0xff9b) return true; // 64:ff9b::/96 and 64:ff9b:1::/48
  if (g0 === 0x100 && all0(g.slice(1, 4))) return true; // 100::/64
  if (g0 === 0x2001 && (g1 === 0 || (m1 & 0xfff0) === 0x10 || (m1 & 0xfff0) === 0x20 || g1 === 0xdb8)) return true;
  if (g0 === 0x2002) return true; // 6to4
  if ((m0 & 0xfe00) === 0xfc00) return true; // fc00::/7
  if ((m0 & 0xffc0) === 0xfe80) return true; // fe80::/10
  if ((m0 & 0xff00) === 0xff00) return true; // multicast
  return false;
}

/** True for any address the server must never connect to (private, loopback, link-local, reserved ...). */
export function isBlockedAddress(host: string): boolean {
  const v4 = parseIPv4(host);
  if (v4) return isBlockedIPv4(v4);
  const v6 = parseIPv6(host);
  if (v6) return isBlockedIPv6(v6);
  return false;
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
