// How Tern fetches from other servers: the SSRF guard's options for this request's config, with GETs signed by
// the instance actor (servers in authorized-fetch mode refuse unsigned GETs), double-knocking RFC 9421 ⇄ draft-cavage
// (rfc9421.ts: the spec remembered for the host first, the other one on a 400/401).
import type { DB } from "../../db/client";
import type { Config } from "../../env";
import type { SafeFetchOptions } from "../../net/safe-fetch";
import { instanceActorKey } from "../outbound/instance-actor";
import { knockOptions, signOutgoingRfc9421 } from "../signing/rfc9421";
import { signCavage } from "../signing/signatures";

export function baseFetchOptions(cfg: Config): SafeFetchOptions {
  return { ownHosts: [cfg.domain], allowLoopback: cfg.allowLoopbackFetch };
}

export async function signedFetchOptions(db: DB, cfg: Config): Promise<SafeFetchOptions> {
  const key = await instanceActorKey(db, cfg);
  return {
    ...baseFetchOptions(cfg),
    ...knockOptions(db, {
      "draft-cavage": (o) => signCavage(o, key.keyId, key.privateKeyPem),
      rfc9421: (o) => signOutgoingRfc9421(o, key.keyId, key.privateKeyPem),
    }),
  };
}

/** https, except plain http for loopback peers when ALLOW_LOOPBACK_FETCH is on (tests, local federation). */
export function schemeFor(cfg: Config, host: string): "https" | "http" {
  if (cfg.allowLoopbackFetch && /^(127\.|localhost|\[::1\])/.test(host)) return "http";
  return "https";
}
