// Domain names typed by staff (domain blocks, allows, e-mail domain blocks), normalised as Mastodon's
// TagManager#normalize_domain does: trimmed, trailing slash dropped, lower case, IDN to punycode. Anything that is not
// a bare host (a scheme, path, port, user or space) is refused.

/** The normalised host, or null when `raw` is not a domain name. */
export function normalizeDomain(raw: string): string | null {
  const d = raw.trim().replace(/\/+$/, "");
  if (!d || d.length > 253 || /[\s/\\?#@:%]/.test(d)) return null;
  let host: string;
  try {
    host = new URL(`http://${d}`).hostname;
  } catch {
    return null;
  }
  if (!host || host.startsWith("[") || host.startsWith(".") || host.endsWith(".") || host.includes("..")) return null;
  if (!/^[a-z0-9.\-_]+$/.test(host) || host.split(".").some((l) => l.length > 63)) return null;
  return host;
}

/** `domain` and each parent domain ("a.b.example" → a.b.example, b.example, example). */
export function domainAndParents(domain: string): string[] {
  const parts = domain.toLowerCase().split(".");
  return parts.map((_, i) => parts.slice(i).join("."));
}

/**
 * The domains a domain block may name to cover `host` (any port): the host itself and each parent with a dot in it
 * (`a.b.example` → a.b.example, b.example, example… without the bare TLD).
 */
export function blockingDomains(host: string): string[] {
  const d = host.toLowerCase().replace(/:\d+$/, "");
  const out = domainAndParents(d).filter((x) => x.includes("."));
  if (!out.includes(d)) out.unshift(d);
  return out;
}
