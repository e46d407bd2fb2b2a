// POST /api/v1/accounts: sign-up with an app (client_credentials) token holding write:accounts. Throttled to 5 per
// 30 minutes per IP before anything else runs, like Rack::Attack's throttle_api_sign_up (B11).
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv } from "../../../context";
import { forbidden } from "../../../lib/http/errors";
import { parse, zBool, zStr } from "../../../lib/http/params";
import { clientIp, enforceRateLimit } from "../../../http/rate-limit";
import { requireToken } from "../../../oauth/guard";
import { registerAccount } from "../../../services/accounts/registration";
import { renderToken } from "../../../entities/settings/token";

const r = routeGroup();

const signUpThrottle = createMiddleware<AppEnv>(async (c, next) => {
  await enforceRateLimit(c, { name: "sign_up_ip", key: clientIp(c), limit: 5, periodSeconds: 30 * 60 });
  await next();
});

const schema = lazy(() =>
  z.object({
    username: zStr(100).optional(),
    email: zStr(320).optional(),
    password: zStr(1000).optional(),
    agreement: zBool,
    locale: zStr(16).optional(),
    reason: zStr(1000).optional(),
  }),
);

r.post("/", signUpThrottle, requireToken("write:accounts"), async (c) => {
  const v = c.get("viewer")!;
  // Mastodon's AppSignUpService signs users up on behalf of an app, not of another user (require_client_credentials!).
  if (v.user || !v.applicationId) throw forbidden("This method requires an client credentials authentication");
  const p = await parse(c, schema());
  const token = await registerAccount(
    c.get("db"),
    c.get("fx"),
    c.get("config"),
    c.env,
    { applicationId: v.applicationId, scopes: [...v.scopes] },
    p,
    // The address itself (IP rules match networks; clientIp groups IPv6 by /64 for rate limits).
    c.req.header("cf-connecting-ip")?.trim() || clientIp(c),
  );
  return c.json(renderToken(token));
});

export default r;
