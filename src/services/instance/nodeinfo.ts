// Discovery documents other servers and clients read before anything else: NodeInfo 2.0/2.1 and WebFinger lookups.
import type { Config } from "../../env";
import { SOFTWARE_VERSION } from "../../env";
import { INSTANCE_VERSION } from "../../entities/instance/instance";
import { registrationsMode, SETTING, type InstanceSnapshot } from "./instance";

/**
 * The NodeInfo 2.0 (or 2.1) document, from the instance snapshot (src/services/instance/instance-cache.ts). Every object but
 * metadata is closed by the schema, so nothing else goes in (2.1 adds software.repository and homepage).
 * metadata.upstream tells megalodon (Whalebird, Fedistar) to treat the server as Mastodon.
 */
export function nodeInfo(cfg: Config, snapshot: InstanceSnapshot, version: "2.0" | "2.1" = "2.0", sourceUrl?: string) {
  const settings = snapshot.parts.settings;
  const c = snapshot.counts;
  // The same version string as the instance document (spec: versioning 3).
  const software: Record<string, string> = { name: "tern", version: INSTANCE_VERSION };
  if (version === "2.1") {
    software.repository = sourceUrl || `${cfg.origin}/`;
    software.homepage = sourceUrl || `${cfg.origin}/`;
  }
  return {
    version,
    software,
    protocols: ["activitypub"],
    services: { inbound: [], outbound: [] },
    openRegistrations: registrationsMode(cfg, settings) === "open",
    usage: {
      users: { total: c.userCount, activeHalfyear: c.activeHalfyear, activeMonth: c.activeMonth },
      localPosts: c.statusCount,
    },
    metadata: {
      nodeName: settings[SETTING.title] || cfg.title,
      nodeDescription: settings[SETTING.shortDescription] || cfg.description,
      upstream: { name: "mastodon", version: SOFTWARE_VERSION },
    },
  };
}

export type WebfingerTarget = { kind: "account"; username: string } | { kind: "instance" } | { kind: "invalid" } | { kind: "elsewhere" };

/**
 * Reads a WebFinger `resource`: acct:user@domain (acct: optional, a leading @ tolerated) or a local profile or
 * actor URL. Control characters are invalid (header injection, CVE-2023-42450).
 */
export function parseResource(cfg: Config, resource: string): WebfingerTarget {
  if (!resource || resource.length > 500 || /[\u0000-\u001f\u007f]/.test(resource)) return { kind: "invalid" };
  if (/^https?:\/\//i.test(resource)) {
    let u: URL;
    try {
      u = new URL(resource);
    } catch {
      return { kind: "invalid" };
    }
    if (u.host.toLowerCase() !== cfg.domain.toLowerCase()) return { kind: "elsewhere" };
    if (u.pathname === "/actor") return { kind: "instance" };
    const username = /^\/(?:users\/|@)([A-Za-z0-9_]+)\/?$/.exec(u.pathname)?.[1];
    return username ? { kind: "account", username } : { kind: "elsewhere" };
  }
  const acct = resource.replace(/^acct:/i, "").replace(/^@/, "");
  const at = acct.lastIndexOf("@");
  if (at <= 0) return { kind: "invalid" };
  const username = acct.slice(0, at);
  const domain = acct.slice(at + 1);
  // The instance actor's handle is the domain itself (domain@domain), as on Mastodon: servers that look up the owner
  // of a signing key by WebFinger (GoToSocial) must find it.
  if (username.toLowerCase() === cfg.domain.toLowerCase() && domain.toLowerCase() === cfg.domain.toLowerCase()) return { kind: "instance" };
  if (!/^[A-Za-z0-9_]+$/.test(username) || !domain) return { kind: "invalid" };
  if (domain.toLowerCase() !== cfg.domain.toLowerCase()) return { kind: "elsewhere" };
  return { kind: "account", username };
}
