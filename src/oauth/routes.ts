// /oauth: authorize (HTML, see web/authorize.tsx), token and revoke (JSON, client auth by body or HTTP Basic), and
// userinfo (Mastodon 4.4: who the token's user is, as OpenID Connect names it, for a token with the `profile` scope).
import { routeGroup } from "../route-group";
import { readParams } from "../lib/http/params";
import { countLoginFailure, throttleLogin } from "../http/rate-limit";
import { authenticateClient, readClientCredentials } from "./apps";
import { missingParam, oauthError } from "./errors";
import { exchangeCode } from "./grants";
import { clientCredentialsGrant, passwordGrant, revokeToken } from "./token";
import { renderToken } from "../entities/settings/token";
import { checkCredentials } from "./credentials";
import { forbidden } from "../lib/http/errors";
import { ipRuleFor } from "../services/admin/blocks/ip-blocks";
import { authorizeGet, authorizePost } from "../web/authorize";
import type { Ctx } from "../context";
import { renderUserinfo } from "../entities/settings/userinfo";
import { me, requireUser } from "./guard";

const r = routeGroup();

r.get("/authorize", (c) => authorizeGet(c));

const userinfo = (c: Ctx) => c.json(renderUserinfo(c.get("config"), me(c).account));
r.get("/userinfo", requireUser("profile"), userinfo);
r.post("/userinfo", requireUser("profile"), userinfo);
r.post("/authorize", (c) => authorizePost(c));

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

r.post("/token", async (c) => {
  const p = await readParams(c);
  const db = c.get("db");
  const secret = c.env.SECRET_KEY_BASE ?? "";
  const grantType = str(p.grant_type);
  if (!grantType) throw missingParam("grant_type");
  if (!["authorization_code", "client_credentials", "password"].includes(grantType)) throw oauthError("unsupported_grant_type");
  if (grantType === "password") {
    await throttleLogin(c);
    // An IP rule with severity no_access refuses sign-in (Mastodon refuses such clients outright, with 403).
    if ((await ipRuleFor(db, c.req.header("cf-connecting-ip")?.trim())) === "no_access") throw forbidden("Forbidden");
  }
  const app = await authenticateClient(db, readClientCredentials(c.req.header("authorization"), p));
  c.header("Cache-Control", "no-store");
  c.header("Pragma", "no-cache");
  if (grantType === "authorization_code") {
    const t = await exchangeCode(db, secret, app, { code: str(p.code), redirectUri: str(p.redirect_uri), codeVerifier: str(p.code_verifier) });
    return c.json(renderToken(t));
  }
  if (grantType === "client_credentials") return c.json(renderToken(await clientCredentialsGrant(db, secret, app, p.scope)));
  const t = await passwordGrant(db, c.get("config"), secret, app, p, {
    invalidPassword: () => countLoginFailure(c, p.username),
    // The IP was counted above (throttleLogin), once for the whole attempt.
    secondFactor: (u, code) => checkCredentials(c, { id: u.userId, accountId: u.accountId, email: u.email }, { otp: code }, { ipCounted: true }),
  });
  return c.json(renderToken(t));
});

r.post("/revoke", async (c) => {
  const p = await readParams(c);
  const db = c.get("db");
  const app = await authenticateClient(db, readClientCredentials(c.req.header("authorization"), p));
  const token = str(p.token);
  if (token) await revokeToken(db, c.get("fx"), app, token);
  return c.json({});
});

export default r;
