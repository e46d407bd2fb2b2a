// The account settings pages of every signed-in user, at Mastodon's paths: /settings/profile, /settings/preferences,
// /auth/edit (e-mail and password), /settings/otp_authentication (two-factor), /oauth/authorized_applications (apps
// and browser sessions), /settings/delete, and the sign-in page's two-factor step (/auth/sign_in/otp). Plain forms
// with the session's CSRF token, no client-side JavaScript; every change goes through a service and answers with a
// redirect and a flash message (POST-redirect-GET); a refused change shows the page again with the reason.
// Mounted at "/" by src/web/routes.tsx. The data pages (/settings/exports, /settings/imports) are src/web/settings-data.tsx;
// importing an archive (/settings/import_archive) is ./archive-import.tsx.
import { routeGroup } from "../../route-group";
import type { Ctx } from "../../context";
import { renderAccount } from "../../entities/accounts/account";
import { ApiError } from "../../lib/http/errors";
import { readParams, truthy } from "../../lib/http/params";
import { AVATAR_LIMIT } from "../../media/store";
import type { UserViewer } from "../../oauth/guard";
import { authorizedApps, browserSessions, revokeAuthorizedApp, revokeBrowserSession } from "../../services/auth/authorized-apps";
import { deleteOwnAccount } from "../../services/accounts/delete-own-account";
import { OWNER_ROLE_ID } from "../../services/accounts/registration";
import { changeEmail } from "../../services/auth/email-change";
import { changePassword } from "../../services/auth/password-change";
import { credentialCheck } from "../../oauth/credentials";
import { EXPAND_MEDIA, type ExpandMedia, updateReadingPreferences } from "../../services/accounts/preferences";
import { updateProfile } from "../../services/accounts/profile";
import { beginTwoFactorSetup, confirmTwoFactor, disableTwoFactor, pendingSetup, regenerateRecoveryCodes, twoFactorState } from "../../services/auth/two-factor";
import { page } from "../layout";
import { clearSessionCookie } from "../session";
import type { WebSession } from "../session-store";
import type { UserSettings } from "../../db/schema";
import { AccountPage } from "./account";
import aliasPages from "./aliases";
import archiveImportPages from "./archive-import";
import { AppsPage } from "./apps";
import { DeletedPage, DeletePage } from "./delete";
import { redirectWithFlash, takeFlash } from "./flash";
import { type PageView, postSession, settingsGet, settingsPost, settingsPostOn } from "./kit";
import migrationPages from "./migration";
import { PreferencesPage } from "./preferences";
import { isStaff } from "../../lib/security/permissions";
import { throttleConfirmations } from "../../http/rate-limit";
import { ProfileSettingsPage } from "./profile";
import { otpStepPost } from "./sign-in-otp";
import { RecoveryCodesPage, TwoFactorPage } from "./two-factor";

const r = routeGroup();

const title = (c: Ctx) => c.get("config").title;
const pepper = (c: Ctx) => c.env.SECRET_KEY_BASE ?? "";
const str = (v: unknown) => (typeof v === "string" ? v : "");

/** The session as the viewer the API's services take (updateProfile). */
const viewerOf = (s: WebSession): UserViewer => ({
  tokenId: "",
  scopes: new Set(),
  applicationId: null,
  application: null,
  user: s.user,
  account: s.account,
  role: null,
  feedDroppedAt: null,
  followRequestsCount: 0,
});

r.get("/settings", (c) => c.redirect("/settings/profile", 303));
r.route("/", aliasPages).route("/", migrationPages); // account migration: /settings/aliases, /settings/migration
r.route("/", archiveImportPages); // /settings/import_archive

// ---- profile ----

const profilePage = (c: Ctx, s: WebSession, o: PageView = {}) => {
  const rendered = renderAccount(c.get("config"), s.account);
  return page(
    c,
    <ProfileSettingsPage
      siteTitle={title(c)}
      csrf={s.csrf}
      account={s.account}
      avatar={rendered.avatar}
      header={rendered.header}
      flash={o.flash}
      error={o.error}
    />,
    o.status ?? 200,
  );
};

r.get(
  "/settings/profile",
  settingsGet((c, s) => profilePage(c, s, { flash: takeFlash(c) })),
);

const fileOf = (v: unknown) => (v instanceof File && v.size > 0 ? v : undefined);

r.post(
  "/settings/profile",
  settingsPost(
    profilePage,
    async (c, s, p) => {
      const raw = p.fields_attributes;
      const rows = raw && typeof raw === "object" ? Object.values(raw as object).slice(0, 50) : [];
      const fields = rows.map((f) =>
        f && typeof f === "object"
          ? { name: str((f as Record<string, unknown>).name), value: str((f as Record<string, unknown>).value) }
          : { name: "", value: "" },
      );
      await updateProfile(c.get("db"), c.get("fx"), c.get("config"), c.env, viewerOf(s), {
        displayName: str(p.display_name).slice(0, 10_000),
        note: str(p.note).slice(0, 100_000),
        fields,
        locked: truthy(p.locked),
        bot: truthy(p.bot),
        discoverable: truthy(p.discoverable),
        indexable: truthy(p.indexable),
        avatar: fileOf(p.avatar),
        header: fileOf(p.header),
      });
      return redirectWithFlash(c, "/settings/profile", "profile_saved");
    },
    { maxBody: 2 * AVATAR_LIMIT + 1024 * 1024 },
  ),
);

// ---- preferences ----

/** The preferences form: the saved settings, or after a refusal the ones just submitted (`submitted`). */
const preferencesPage = (c: Ctx, s: WebSession, o: PageView = {}, submitted?: UserSettings) =>
  page(
    c,
    <PreferencesPage
      siteTitle={title(c)}
      csrf={s.csrf}
      settings={submitted ?? s.user.settings ?? {}}
      staff={isStaff(s.role?.permissions)}
      mail={!!c.env.EMAIL}
      flash={o.flash}
      error={o.error}
    />,
    o.status ?? 200,
  );

r.get(
  "/settings/preferences",
  settingsGet((c, s) => preferencesPage(c, s, { flash: takeFlash(c) })),
);

const VISIBILITIES = ["public", "unlisted", "private"] as const;
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

r.post("/settings/preferences", async (c) => {
  const p = await readParams(c);
  const s = await postSession(c, p);
  if (s instanceof Response) return s;
  const privacy = VISIBILITIES.find((v) => v === p.privacy);
  const language = str(p.language).trim();
  const expandMedia = EXPAND_MEDIA.find((v) => v === p.expand_media) as ExpandMedia | undefined;
  // A refused form comes back as it was sent, so nothing typed is lost.
  const submitted: UserSettings = {
    ...s.user.settings,
    ...(privacy ? { "posting:default:visibility": privacy } : {}),
    "posting:default:language": language.slice(0, 16),
    "posting:default:sensitive": truthy(p.sensitive) ?? false,
    ...(expandMedia ? { "reading:expand:media": expandMedia } : {}),
    "reading:expand:spoilers": truthy(p.expand_spoilers) ?? false,
  };
  const staffMails = isStaff(s.role?.permissions)
    ? {
        report: truthy(p.notify_report) ?? true,
        pendingAccount: truthy(p.notify_pending_account) ?? true,
        trends: truthy(p.notify_trends) ?? true,
      }
    : undefined;
  const refuse = (error: string) => preferencesPage(c, s, { error, status: 422 }, submitted);
  if (!privacy) return refuse("Choose a default visibility.");
  if (language && !LANGUAGE.test(language)) return refuse(`“${language.slice(0, 16)}” is not a language code: use an ISO 639 code such as en, de or pt-BR.`);
  const db = c.get("db");
  const out = await updateProfile(db, c.get("fx"), c.get("config"), c.env, viewerOf(s), {
    privacy,
    sensitive: truthy(p.sensitive) ?? false,
    language: language || null,
  });
  await updateReadingPreferences(db, out.user, { expandSpoilers: truthy(p.expand_spoilers) ?? false, expandMedia, staffMails });
  return redirectWithFlash(c, "/settings/preferences", "preferences_saved");
});

// ---- e-mail and password ----

const accountPage = (c: Ctx, s: WebSession, o: PageView = {}) =>
  page(
    c,
    <AccountPage
      siteTitle={title(c)}
      csrf={s.csrf}
      email={s.user.email}
      unconfirmedEmail={s.user.unconfirmedEmail}
      mail={!!c.env.EMAIL}
      flash={o.flash}
      error={o.error}
    />,
    o.status ?? 200,
  );

r.get(
  "/auth/edit",
  settingsGet((c, s) => accountPage(c, s, { flash: takeFlash(c) })),
);

r.post(
  "/auth/edit/email",
  settingsPost(accountPage, async (c, s, p) => {
    // Each change mails a confirmation link: limited as confirmations, per IP and per new address (Mastodon's
    // throttle_email_confirmations, which CVE-2025-54879 extended to e-mail changes). Counted once the password is
    // right, when a mail would go: a wrong one sends nothing and spends the sign-in budget instead, which must not be
    // cut short by this one (test/integration/hardening-password-checks.test.ts).
    const checkPassword = credentialCheck(c, s.user);
    const checkThenCount: typeof checkPassword = async (input) => {
      const ok = await checkPassword(input);
      if (ok && c.env.EMAIL) await throttleConfirmations(c, p.email);
      return ok;
    };
    const changed = await changeEmail(c.get("db"), c.get("fx"), c.env, checkThenCount, s.user, {
      email: p.email,
      password: p.current_password,
    });
    return redirectWithFlash(c, "/auth/edit", changed.pending ? "email_pending" : "email_changed");
  }),
);

r.post(
  "/auth/edit/password",
  settingsPost(accountPage, async (c, s, p) => {
    await changePassword(
      c.get("db"),
      c.get("fx"),
      pepper(c),
      credentialCheck(c, s.user),
      { user: s.user, accountId: s.account.id },
      { current: p.current_password, password: p.password, confirmation: p.password_confirmation },
      s.idHash,
    );
    return redirectWithFlash(c, "/auth/edit", "password_changed");
  }),
);

// ---- two-factor authentication ----

const twoFactorPage = async (c: Ctx, s: WebSession, o: PageView = {}) => {
  const db = c.get("db");
  const [state, setup] = await Promise.all([twoFactorState(db, s.user.id), pendingSetup(db, pepper(c), s.user, c.get("config").domain)]);
  return page(c, <TwoFactorPage siteTitle={title(c)} csrf={s.csrf} state={state} setup={setup} flash={o.flash} error={o.error} />, o.status ?? 200);
};

r.get(
  "/settings/otp_authentication",
  settingsGet((c, s) => twoFactorPage(c, s, { flash: takeFlash(c) })),
);

r.post(
  "/settings/otp_authentication",
  settingsPost(twoFactorPage, async (c, s) => {
    await beginTwoFactorSetup(c.get("db"), pepper(c), s.user.id);
    return c.redirect("/settings/otp_authentication", 303);
  }),
);

// The recovery codes are shown in the answer that made them (as Mastodon does): they exist in clear nowhere else.
r.post(
  "/settings/two_factor_authentication/confirmation",
  settingsPost(twoFactorPage, async (c, s, p) => {
    const codes = await confirmTwoFactor(c.get("db"), pepper(c), s.user.id, p.otp_attempt);
    return page(c, <RecoveryCodesPage siteTitle={title(c)} codes={codes} enabledNow />);
  }),
);

r.post(
  "/settings/two_factor_authentication/recovery_codes",
  settingsPost(twoFactorPage, async (c, s, p) => {
    const codes = await regenerateRecoveryCodes(c.get("db"), pepper(c), credentialCheck(c, s.user), s.user.id, p.otp_attempt);
    return page(c, <RecoveryCodesPage siteTitle={title(c)} codes={codes} enabledNow={false} />);
  }),
);

r.post(
  "/settings/two_factor_authentication_methods/disable",
  settingsPost(twoFactorPage, async (c, s, p) => {
    await disableTwoFactor(c.get("db"), pepper(c), credentialCheck(c, s.user), s.user, p.current_password, p.otp_attempt);
    return redirectWithFlash(c, "/settings/otp_authentication", "otp_disabled");
  }),
);

// ---- authorized applications and browser sessions ----

const appsPage = async (c: Ctx, s: WebSession, o: PageView = {}) => {
  const db = c.get("db");
  const [apps, sessions] = await Promise.all([authorizedApps(db, s.user.id), browserSessions(db, s.user.id)]);
  return page(
    c,
    <AppsPage siteTitle={title(c)} csrf={s.csrf} apps={apps} sessions={sessions} currentSession={s.idHash} flash={o.flash} error={o.error} />,
    o.status ?? 200,
  );
};

r.get(
  "/oauth/authorized_applications",
  settingsGet((c, s) => appsPage(c, s, { flash: takeFlash(c) })),
);

r.post(
  "/oauth/authorized_applications/:id/revoke",
  settingsPostOn(appsPage, "That application has no access to your account.", async (c, s, id) => {
    await revokeAuthorizedApp(c.get("db"), c.get("fx"), { userId: s.user.id, accountId: s.account.id }, id);
    return redirectWithFlash(c, "/oauth/authorized_applications", "app_revoked");
  }),
);

r.post(
  "/settings/sessions/revoke",
  settingsPost(
    appsPage,
    async (c, s, p) => {
      const target = str(p.session);
      // The current session signs out with the sign-out button, not from here.
      if (!/^[0-9a-f]{64}$/.test(target) || target === s.idHash) throw new ApiError(404, "Record not found");
      await revokeBrowserSession(c.get("db"), s.user.id, target);
      return redirectWithFlash(c, "/oauth/authorized_applications", "session_revoked");
    },
    { notFound: "No such session." },
  ),
);

// ---- delete my account ----

const deletePage = (c: Ctx, s: WebSession, o: PageView = {}) =>
  page(c, <DeletePage siteTitle={title(c)} csrf={s.csrf} acct={s.account.username} owner={s.user.roleId === OWNER_ROLE_ID} error={o.error} />, o.status ?? 200);

r.get("/settings/delete", settingsGet(deletePage));

r.post(
  "/settings/delete",
  settingsPost(deletePage, async (c, s, p) => {
    await deleteOwnAccount(c.get("db"), c.get("fx"), credentialCheck(c, s.user), s, p.password);
    clearSessionCookie(c);
    return page(c, <DeletedPage siteTitle={title(c)} />);
  }),
);

// ---- the sign-in page's two-factor step ----

r.post("/auth/sign_in/otp", (c) => otpStepPost(c));

export default r;
