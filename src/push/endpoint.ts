// A push endpoint is a URL a user gives us and we later POST to: an SSRF vector (security §2.10, row D8). It must
// pass the outbound guard (public address, no userinfo, ports 80/443, not this server) and be https (RFC 8030 push
// resources are https). Plain http is accepted only for a loopback push service when ALLOW_LOOPBACK_FETCH is on, so
// the e2e suite can run a push service on 127.0.0.1; checkUrl itself refuses loopback unless that flag is on.
import type { Config } from "../env";
import { checkUrl, FetchRefused } from "../net/safe-fetch";
import { isLoopback } from "../net/ip";

export const MAX_ENDPOINT_LENGTH = 2048;

/** The endpoint as a URL, or a FetchRefused saying why it cannot be used. */
export function checkPushEndpoint(raw: string, cfg: Pick<Config, "domain" | "allowLoopbackFetch">): URL {
  if (raw.length > MAX_ENDPOINT_LENGTH) throw new FetchRefused("URL too long");
  const url = checkUrl(raw, { ownHosts: [cfg.domain], allowLoopback: cfg.allowLoopbackFetch });
  if (url.protocol !== "https:" && !(cfg.allowLoopbackFetch && isLoopback(url.hostname.toLowerCase()))) {
    throw new FetchRefused("push endpoints must be https");
  }
  return url;
}
