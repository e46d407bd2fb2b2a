// Discovery: NodeInfo (links + 2.0 document), host-meta (XRD) and WebFinger (JRD) for local accounts and the instance
// actor.
import { routeGroup } from "../../route-group";
import { accountUri, accountUrl } from "../../entities/urls";
import { instanceDocument } from "../../services/instance/instance-cache";
import { nodeInfo, parseResource } from "../../services/instance/nodeinfo";
import { localAccountByUsername } from "../../queries/accounts/accounts";
import { instanceActorAccount } from "../outbound/instance-actor";

const r = routeGroup();

const NODEINFO_PROFILE = "http://nodeinfo.diaspora.software/ns/schema/2.0";

r.get("/.well-known/nodeinfo", (c) => {
  const cfg = c.get("config");
  c.header("Cache-Control", "public, max-age=259200");
  return c.json({ links: [{ rel: NODEINFO_PROFILE, href: `${cfg.origin}/nodeinfo/2.0` }] });
});

// From the isolate's memory, like the instance documents (src/services/instance/instance-cache.ts). 2.1 is served, not advertised
// (Mastodon advertises 2.0 only).
const nodeInfoHandler = (version: "2.0" | "2.1") => async (c: import("../../context").Ctx) => {
  const cfg = c.get("config");
  const body = await instanceDocument(c.get("db"), c.env, `nodeinfo ${version} ${cfg.origin}`, (s) => nodeInfo(cfg, s, version, c.env.SOURCE_URL));
  return new Response(body, {
    headers: {
      "content-type": `application/json; profile="http://nodeinfo.diaspora.software/ns/schema/${version}#"`,
      "cache-control": "public, max-age=1800",
    },
  });
};
r.get("/nodeinfo/2.0", nodeInfoHandler("2.0"));
r.get("/nodeinfo/2.0.json", nodeInfoHandler("2.0"));
r.get("/nodeinfo/2.1", nodeInfoHandler("2.1"));
r.get("/nodeinfo/2.1.json", nodeInfoHandler("2.1"));

r.get("/.well-known/host-meta", (c) => {
  const origin = c.get("config").origin;
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">
  <Link rel="lrdd" template="${origin}/.well-known/webfinger?resource={uri}"/>
</XRD>
`;
  return new Response(xml, { headers: { "content-type": "application/xrd+xml; charset=utf-8", "cache-control": "public, max-age=259200" } });
});

const jrdError = (status: 400 | 404 | 410, error: string) =>
  new Response(JSON.stringify({ error }), { status, headers: { "content-type": "application/json; charset=utf-8" } });

r.get("/.well-known/webfinger", async (c) => {
  const cfg = c.get("config");
  const resource = new URL(c.req.url).searchParams.get("resource") ?? "";
  const target = parseResource(cfg, resource);
  if (target.kind === "invalid") return jrdError(400, "Invalid resource");
  if (target.kind === "elsewhere") return jrdError(404, "Record not found");
  if (target.kind === "instance") {
    const actor = await instanceActorAccount(c.get("db"), cfg);
    return jrdResponse({
      subject: `acct:${cfg.domain}@${cfg.domain}`,
      aliases: [actor.uri],
      links: [
        { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: `${cfg.origin}/about/more?instance_actor=true` },
        { rel: "self", type: "application/activity+json", href: actor.uri },
        { rel: "http://ostatus.org/schema/1.0/subscribe", template: `${cfg.origin}/authorize_interaction?uri={uri}` },
      ],
    });
  }
  const account = await localAccountByUsername(c.get("db"), target.username);
  if (!account) return jrdError(404, "Record not found");
  if (account.suspendedAt) return jrdError(410, "Gone");
  const uri = account.uri || accountUri(cfg, account.username);
  const url = account.url ?? accountUrl(cfg, account.username);
  const jrd = {
    subject: `acct:${account.username}@${cfg.domain}`,
    aliases: [url, uri],
    links: [
      { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: url },
      { rel: "self", type: "application/activity+json", href: uri },
      { rel: "http://ostatus.org/schema/1.0/subscribe", template: `${cfg.origin}/authorize_interaction?uri={uri}` },
    ],
  };
  return jrdResponse(jrd);
});

function jrdResponse(jrd: unknown): Response {
  return new Response(JSON.stringify(jrd), {
    headers: { "content-type": "application/jrd+json; charset=utf-8", "cache-control": "max-age=259200, public", vary: "Accept" },
  });
}

export default r;
