// IP networks for admin IP rules (Mastodon's IpBlock keeps an `inet`): parsing "addr" or "addr/prefix", masking to
// the network (IPAddr does), printing it as Mastodon serialises it ("192.0.2.0/24", "2001:db8::/32"), and matching a
// client address. IPv4-mapped IPv6 clients (::ffff:a.b.c.d) match IPv4 rules.
import { parseIPv4, parseIPv6 } from "../../net/ip";

export interface Network {
  v6: boolean;
  /** The masked address as a 32- or 128-bit integer. */
  base: bigint;
  prefix: number;
}

function addressBits(raw: string): { v6: boolean; value: bigint } | null {
  const s = raw.trim();
  const v4 = parseIPv4(s);
  if (v4) return { v6: false, value: v4.reduce((n, p) => (n << 8n) | BigInt(p), 0n) };
  if (!s.includes(":")) return null;
  const g = parseIPv6(s);
  if (!g) return null;
  const value = g.reduce((n, p) => (n << 16n) | BigInt(p), 0n);
  // ::ffff:a.b.c.d is the IPv4 address a.b.c.d
  if (value >> 32n === 0xffffn) return { v6: false, value: value & 0xffffffffn };
  return { v6: true, value };
}

const width = (v6: boolean) => (v6 ? 128 : 32);
const mask = (v6: boolean, prefix: number) => {
  const w = width(v6);
  return ((1n << BigInt(w)) - 1n) ^ ((1n << BigInt(w - prefix)) - 1n);
};

/** "addr" (a single host) or "addr/prefix"; null when either part is malformed. */
export function parseNetwork(raw: string): Network | null {
  const [addr = "", pfx, ...rest] = raw.trim().split("/");
  if (rest.length) return null;
  const bits = addressBits(addr);
  if (!bits) return null;
  const w = width(bits.v6);
  let prefix = w;
  if (pfx !== undefined) {
    if (!/^\d{1,3}$/.test(pfx)) return null;
    prefix = Number(pfx);
    // A mapped IPv6 spelling of an IPv4 network keeps the IPv4 part of its prefix.
    if (!bits.v6 && addr.includes(":")) prefix -= 96;
    if (prefix < 0 || prefix > w) return null;
  }
  return { v6: bits.v6, base: bits.value & mask(bits.v6, prefix), prefix };
}

export function formatNetwork(n: Network): string {
  if (!n.v6) {
    const b = n.base;
    return `${[24n, 16n, 8n, 0n].map((s) => String((b >> s) & 255n)).join(".")}/${n.prefix}`;
  }
  const groups = Array.from({ length: 8 }, (_, i) => Number((n.base >> BigInt((7 - i) * 16)) & 0xffffn));
  // The longest run of two or more zero groups becomes "::" (RFC 5952).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  const text = best < 0 ? hex.join(":") : `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
  return `${text}/${n.prefix}`;
}

/** Does network `n` contain the client address `ip`? */
export function networkContains(n: Network, ip: string): boolean {
  const bits = addressBits(ip);
  if (!bits || bits.v6 !== n.v6) return false;
  return (bits.value & mask(n.v6, n.prefix)) === n.base;
}
