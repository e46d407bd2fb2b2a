// POST /api/v1/emails/confirmations and GET /api/v1/emails/check_confirmation (Mastodon 4.3: whether the e-mail is
// confirmed yet, a bare JSON boolean): usable right after sign-up, so an unconfirmed or pending user's token is accepted
// here (requireSignedUpUser; requireUser would refuse a pending user).
import { routeGroup } from "../../../route-group";
import * as z from "zod";
import { parse, zStr } from "../../../lib/http/params";
import { me, requireSignedUpUser } from "../../../oauth/guard";
import { resendConfirmation } from "../../../services/accounts/registration";
import { throttleConfirmations } from "../../../http/rate-limit";

const r = routeGroup();

r.post("/confirmations", requireSignedUpUser("write:accounts"), async (c) => {
  const v = me(c);
  const p = await parse(c, z.object({ email: zStr(320).optional() }));
  await throttleConfirmations(c, p.email || v.user.email);
  await resendConfirmation(c.get("db"), c.get("fx"), c.env, v.user, p.email);
  return c.json({});
});

r.get("/check_confirmation", requireSignedUpUser("read:accounts"), (c) => c.json(me(c).user.confirmedAt !== null));

export default r;
