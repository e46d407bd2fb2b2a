// Admin::Account (REST::Admin::AccountSerializer): the account with what only staff may see (e-mail, sign-up IP,
// sign-up reason, role, approval and moderation state). Remote accounts have no user, hence no e-mail or role.
import type { Config } from "../../env";
import { renderAccount, renderRole, type MastodonAccount, type MastodonRole } from "../accounts/account";
import { isoTime } from "../urls";
import type { AdminAccountRow } from "../../db/schema/index";

/** Admin::Ip: an address the account used. */
export interface MastodonAdminIp {
  ip: string;
  used_at: string;
}

/** Admin::Account; a remote account (no user) has null e-mail, locale and role. */
export interface MastodonAdminAccount {
  id: string;
  username: string;
  domain: string | null;
  created_at: string;
  email: string | null;
  ip: string | null;
  ips: MastodonAdminIp[];
  role: MastodonRole | null;
  confirmed: boolean;
  suspended: boolean;
  silenced: boolean;
  sensitized: boolean;
  disabled: boolean;
  approved: boolean;
  locale: string | null;
  invite_request: string | null;
  account: MastodonAccount;
}

export function renderAdminAccount(cfg: Config, { account: a, user: u, role }: AdminAccountRow): MastodonAdminAccount {
  const ips = u?.signUpIp ? [{ ip: u.signUpIp, used_at: isoTime(u.createdAt) }] : [];
  return {
    id: a.id,
    username: a.username,
    domain: a.domain,
    created_at: isoTime(a.createdAt),
    email: u?.email ?? null,
    ip: ips[0]?.ip ?? null,
    ips,
    role: u ? renderRole(role) : null,
    confirmed: !!u?.confirmedAt,
    suspended: !!a.suspendedAt,
    silenced: !!a.silencedAt,
    sensitized: a.sensitizedAt != null,
    disabled: !!u?.disabled,
    approved: !!u?.approved,
    locale: u?.locale ?? null,
    invite_request: u?.reason ?? null,
    account: renderAccount(cfg, a, role),
  };
}
