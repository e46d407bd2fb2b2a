// POST /api/v1/emails/confirmations and GET /api/v1/emails/check_confirmation (Mastodon 4.3: whether the e-mail is
// confirmed yet, a bare JSON boolean): usable right after sign-up, so an unconfirmed or pending user's token is accepted
// here (requireUser would refuse a pending user).
import { routeGroup } from "../../../route-group";
import { z } from "zod";
import { ApiError, forbidden } from "../../../lib/http/errors";
import { parse, zStr } from "../../../lib/http/params";
import { requireToken } from "../../../oauth/guard";
import { resendConfirmation } from "../../../services/accounts/registration";
import { throttleConfirmations } from "../../../lib/limits/rate-limit";

const r = routeGroup();

r.post("/confirmations", requireToken("write:accounts"), async (c) => {
  const v = c.get("viewer")!;
  if (!v.user || !v.account) throw new ApiError(422, "This method requires an authenticated user");
  if (v.user.disabled || v.account.suspendedAt) throw forbidden("Your login is currently disabled");
  const p = await parse(c, z.object({ email: zStr(320).optional() }));
  await throttleConfirmations(c, p.email || v.user.email);
  await resendConfirmation(c.get("db"), c.get("fx"), c.env, v.user, p.email);
  return c.json({});
});

r.get("/check_confirmation", requireToken("read:accounts"), (c) => {
  const v = c.get("viewer")!;
  if (!v.user || !v.account) throw new ApiError(422, "This method requires an authenticated user");
  if (v.user.disabled || v.account.suspendedAt) throw forbidden("Your login is currently disabled");
  return c.json(v.user.confirmedAt !== null);
});

export default r;
