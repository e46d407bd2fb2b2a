// OpenID Connect's UserInfo (GET/POST /oauth/userinfo, Mastodon 4.4): who a token with the `profile` scope stands for.
import type { Config } from "../../env";
import type { RenderAccountRow } from "../../db/schema/index";
import { renderAccount } from "../accounts/account";
import { accountUri, accountUrl } from "../urls";

export interface MastodonUserinfo {
  iss: string;
  sub: string;
  name: string;
  preferred_username: string;
  profile: string;
  picture: string;
}

export function renderUserinfo(cfg: Config, a: RenderAccountRow): MastodonUserinfo {
  return {
    iss: `${cfg.origin}/`,
    sub: accountUri(cfg, a.username),
    name: a.displayName,
    preferred_username: a.username,
    profile: accountUrl(cfg, a.username),
    // The avatar as the Account entity shows it (the default picture when none, or when files are withheld).
    picture: renderAccount(cfg, a).avatar,
  };
}
