// GET and PATCH /api/v1/profile (Mastodon 4.6): the signed-in user's Profile, changed as update_credentials changes it
// (the same parameters and rules) and answered as a Profile. DELETE /api/v1/profile/avatar and /api/v1/profile/header:
// the picture goes (its object too) and the account shows the default again; the answer is the CredentialAccount, as
// Mastodon's.
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { renderCredentialAccount } from "../../../entities/accounts/account";
import { me, requireUser } from "../../../oauth/guard";
import { updateProfile } from "../../../services/accounts/profile";
import { featuredTagsOf } from "../../../services/accounts/featured-tags";
import { renderProfile } from "../../../entities/accounts/profile";
import { parse } from "../../../lib/http/params";
import { CREDENTIALS_BODY_LIMIT, credentialsSchema, profileChangesOf } from "./credentials-params";

const r = routeGroup();

const remove = (which: "avatar" | "header") => async (c: Ctx) => {
  const v = me(c);
  const out = await updateProfile(c.get("db"), c.get("fx"), c.get("config"), c.env, v, which === "avatar" ? { removeAvatar: true } : { removeHeader: true });
  return c.json(renderCredentialAccount(c.get("config"), out.account, out.user, v.role, out.followRequestsCount));
};

r.get("/", requireUser("read:accounts", "profile"), async (c) => {
  const v = me(c);
  return c.json(renderProfile(c.get("config"), v.account, await featuredTagsOf(c.get("db"), v.account.id)));
});

const update = async (c: Ctx) => {
  const p = await parse(c, credentialsSchema(), CREDENTIALS_BODY_LIMIT);
  const v = me(c);
  const db = c.get("db");
  const out = await updateProfile(db, c.get("fx"), c.get("config"), c.env, v, profileChangesOf(p));
  return c.json(renderProfile(c.get("config"), out.account, await featuredTagsOf(db, v.account.id)));
};
r.patch("/", requireUser("write:accounts"), update);
r.put("/", requireUser("write:accounts"), update);

r.delete("/avatar", requireUser("write:accounts"), remove("avatar"));
r.delete("/header", requireUser("write:accounts"), remove("header"));

export default r;
