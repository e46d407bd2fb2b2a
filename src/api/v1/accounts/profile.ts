// DELETE /api/v1/profile/avatar and /api/v1/profile/header: the picture goes (its object too) and the account shows
// the default again; the answer is the CredentialAccount, as Mastodon's.
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { renderCredentialAccount } from "../../../entities/accounts/account";
import { me, requireUser } from "../../../oauth/guard";
import { updateProfile } from "../../../services/accounts/profile";

const r = routeGroup();

const remove = (which: "avatar" | "header") => async (c: Ctx) => {
  const v = me(c);
  const out = await updateProfile(c.get("db"), c.get("fx"), c.get("config"), c.env, v, which === "avatar" ? { removeAvatar: true } : { removeHeader: true });
  return c.json(renderCredentialAccount(c.get("config"), out.account, out.user, v.role, out.followRequestsCount));
};

r.delete("/avatar", requireUser("write:accounts"), remove("avatar"));
r.delete("/header", requireUser("write:accounts"), remove("header"));

export default r;
