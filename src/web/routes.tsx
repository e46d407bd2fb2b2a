// HTML pages mounted at "/": landing, sign-in/out, first-owner setup, public profile and status pages, and the
// OAuth server metadata document (RFC 8414). Profile and status handlers are separate functions so that content
// negotiation (ActivityPub JSON on the same URLs) can be put in front of them later.
import { routeGroup } from "../route-group";
import type { Ctx } from "../context";
import { renderAccount } from "../entities/accounts/account";
import { renderStatuses } from "../entities/statuses/status";
import { ApiError } from "../lib/http/errors";
import { parseId } from "../lib/text/ids";
import { readParams } from "../lib/http/params";
import { countLoginFailure, throttleLogin } from "../http/rate-limit";
import { ALL_SCOPES } from "../oauth/scopes";
import { checkLogin, type LoginRefusal } from "../oauth/token";
import { createOwner, ownerExists } from "../services/accounts/registration";
import { registrationsMode } from "../services/instance/instance";
import { instanceCache } from "../services/instance/instance-cache";
import { isStaff } from "../lib/security/permissions";
import { ipRuleFor } from "../services/admin/blocks/ip-blocks";
import { findLocalAccount, publicLocalStatus, recentPublicStatusIds } from "./page-queries";
import { createWebSession, destroyWebSession } from "./session-store";
import { sha256Hex, safeEqual } from "../lib/security/crypto";
import { MessagePage, SetupPage, SignInPage } from "./auth-pages";
import { page } from "./layout";
import admin from "./admin/routes";
import settings from "./settings/routes";
import mailLinks from "./mail-links";
import embed from "./embed";
import { startOtpStep } from "./settings/sign-in-otp";
import { CollectionPage, LandingPage, NotFoundPage, ProfilePage, StatusPage } from "./public-pages";
import { collectionById } from "../queries/accounts/collections";
import { getAccount } from "../queries/accounts/accounts";
import { renderCollectionWithAccounts } from "../entities/accounts/collection";
import { clearSessionCookie, currentSession, preSessionCsrf, preSessionCsrfValid, safeReturnTo, sessionCsrfValid, setSessionCookie } from "./session";

const r = routeGroup();

// Admin pages (src/web/admin/routes.tsx): staff sessions only, each section behind its permission.
r.route("/admin", admin);
// Account settings pages (src/web/settings/routes.tsx): /settings/*, /auth/edit, /oauth/authorized_applications, /auth/sign_in/otp.
r.route("/", settings);
// Mailed links: "Forgot your password?" and e-mail confirmation (src/web/mail-links.tsx).
r.route("/", mailLinks);
// A status for other sites: its embed page and GET /api/oembed (src/web/embed.tsx).
r.route("/", embed);

const title = (c: Ctx) => c.get("config").title;
const str = (v: unknown) => (typeof v === "string" ? v : "");

function csrfRefused(c: Ctx) {
  return page(
    c,
    <MessagePage
      siteTitle={title(c)}
      title="Request refused"
      message="The form could not be verified (missing or invalid CSRF token, or a cross-site request). Go back, reload the page and try again."
    />,
    403,
  );
}

function notFoundPage(c: Ctx) {
  return page(c, <NotFoundPage siteTitle={title(c)} />, 404);
}

// ---- landing ----

r.get("/", async (c) => {
  const cfg = c.get("config");
  const session = await currentSession(c);
  return page(
    c,
    <LandingPage
      siteTitle={cfg.title}
      description={cfg.description}
      domain={cfg.domain}
      origin={cfg.origin}
      signedInAs={session?.account.username ?? null}
      csrf={session?.csrf ?? null}
      staff={!!session && isStaff(session.role?.permissions)}
      registrations={registrationsMode(cfg, (await instanceCache(c.get("db"), c.env)).snapshot.parts.settings)}
    />,
  );
});

// ---- sign-in / sign-out ----

r.get("/auth/sign_in", async (c) => {
  const returnTo = safeReturnTo(c.req.query("return_to"));
  if (await currentSession(c)) return c.redirect(returnTo, 303);
  const notice = c.req.query("password_reset") ? "Your password was changed. Sign in with the new one." : undefined;
  return page(
    c,
    <SignInPage siteTitle={title(c)} csrf={preSessionCsrf(c)} returnTo={returnTo} notice={notice} confirmations={c.get("config").requireEmailConfirmation} />,
  );
});

const REFUSALS: Record<LoginRefusal, string> = {
  invalid: "Invalid e-mail address or password.",
  disabled: "Your account is disabled.",
  pending: "Your account is pending review by the staff of this server.",
  unconfirmed: "You have to confirm your e-mail address before continuing.",
};

r.post("/auth/sign_in", async (c) => {
  const p = await readParams(c);
  if (!preSessionCsrfValid(c, p.csrf)) return csrfRefused(c);
  const email = str(p.email).slice(0, 320);
  const returnTo = safeReturnTo(p.return_to);
  const tooMany = (e: unknown) => {
    if (!(e instanceof ApiError) || e.status !== 429) throw e;
    for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v);
    return page(
      c,
      <MessagePage siteTitle={title(c)} title="Too many attempts" message="Too many sign-in attempts. Please wait a few minutes and try again." />,
      429,
    );
  };
  try {
    await throttleLogin(c);
  } catch (e) {
    return tooMany(e);
  }
  // An IP rule with severity no_access refuses sign-in (Mastodon refuses such clients outright, with 403).
  if ((await ipRuleFor(c.get("db"), c.req.header("cf-connecting-ip")?.trim())) === "no_access") {
    return page(c, <MessagePage siteTitle={title(c)} title="Access denied" message="Sign-in from your network is not allowed on this server." />, 403);
  }
  const result = await checkLogin(c.get("db"), c.get("config"), c.env.SECRET_KEY_BASE ?? "", email, str(p.password));
  if (!result.ok) {
    // Only a wrong e-mail or password counts against the e-mail (never a success: see countLoginFailure).
    if (result.reason === "invalid") {
      try {
        await countLoginFailure(c, email);
      } catch (e) {
        return tooMany(e);
      }
    }
    const error =
      result.reason === "unconfirmed" && !c.env.EMAIL
        ? `${REFUSALS.unconfirmed} This server is not set up to send e-mail: ask its staff to confirm your account.`
        : REFUSALS[result.reason];
    return page(
      c,
      <SignInPage
        siteTitle={title(c)}
        csrf={preSessionCsrf(c)}
        returnTo={returnTo}
        email={email}
        error={error}
        confirmations={c.get("config").requireEmailConfirmation}
      />,
      401,
    );
  }
  // Two-factor sign-in: the password was right; the code is asked in a second step (src/web/settings/sign-in-otp.tsx).
  if (result.user.otpRequired) return startOtpStep(c, result.user.userId, returnTo);
  const old = await currentSession(c);
  if (old) await destroyWebSession(c.get("db"), old.idHash);
  const s = await createWebSession(c.get("db"), result.user.userId);
  setSessionCookie(c, s.id);
  return c.redirect(returnTo, 303);
});

r.post("/auth/sign_out", async (c) => {
  const p = await readParams(c);
  const session = await currentSession(c);
  if (!session) return c.redirect("/", 303);
  if (!sessionCsrfValid(c, session, p.csrf)) return csrfRefused(c);
  await destroyWebSession(c.get("db"), session.idHash);
  clearSessionCookie(c);
  return c.redirect("/", 303);
});

// ---- first-owner setup ----

async function setupTokenValid(c: Ctx, given: unknown): Promise<boolean> {
  const expected = c.env.SETUP_TOKEN;
  if (!expected || typeof given !== "string" || !given) return false;
  // Hashing first makes the comparison constant-time regardless of the lengths.
  return safeEqual(await sha256Hex(expected), await sha256Hex(given));
}

function setupRefused(c: Ctx) {
  if (!c.env.SETUP_TOKEN) {
    return page(
      c,
      <MessagePage
        siteTitle={title(c)}
        title="Setup is locked"
        message="No setup token is configured."
        detail="Set one with `wrangler secret put SETUP_TOKEN`, then open /setup?token=<that value>."
      />,
      403,
    );
  }
  return page(c, <MessagePage siteTitle={title(c)} title="Setup is locked" message="The setup token is missing or wrong." />, 403);
}

r.get("/setup", async (c) => {
  if (await ownerExists(c.get("db"))) return notFoundPage(c);
  const token = c.req.query("token");
  if (!(await setupTokenValid(c, token))) return setupRefused(c);
  return page(c, <SetupPage siteTitle={title(c)} csrf={preSessionCsrf(c)} token={token!} />);
});

r.post("/setup", async (c) => {
  const db = c.get("db");
  if (await ownerExists(db)) return notFoundPage(c);
  const p = await readParams(c);
  if (!(await setupTokenValid(c, p.token))) return setupRefused(c);
  if (!preSessionCsrfValid(c, p.csrf)) return csrfRefused(c);
  const input = { username: str(p.username).trim(), email: str(p.email).trim(), password: str(p.password) };
  let created: { userId: string };
  try {
    created = await createOwner(db, c.get("config"), c.env, input);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 422) throw e;
    return page(
      c,
      <SetupPage siteTitle={title(c)} csrf={preSessionCsrf(c)} token={str(p.token)} error={e.message} username={input.username} email={input.email} />,
      422,
    );
  }
  const s = await createWebSession(db, created.userId);
  setSessionCookie(c, s.id);
  return c.redirect("/", 303);
});

// ---- OAuth server metadata (RFC 8414) ----

r.get("/.well-known/oauth-authorization-server", (c) => {
  const o = c.get("config").origin;
  return c.json({
    issuer: o,
    service_documentation: "https://docs.joinmastodon.org/",
    authorization_endpoint: `${o}/oauth/authorize`,
    token_endpoint: `${o}/oauth/token`,
    app_registration_endpoint: `${o}/api/v1/apps`,
    revocation_endpoint: `${o}/oauth/revoke`,
    userinfo_endpoint: `${o}/oauth/userinfo`,
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query", "fragment", "form_post"],
    code_challenge_methods_supported: ["S256"],
    grant_types_supported: ["authorization_code", "client_credentials", "password"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
  });
});

// ---- public profile and status pages ----

export async function profilePage(c: Ctx) {
  const cfg = c.get("config");
  const db = c.get("db");
  const account = await findLocalAccount(db, c.req.param("handle")!.slice(1));
  if (!account) return notFoundPage(c);
  const ids = await recentPublicStatusIds(db, account.id, 20);
  const rendered = ids.length ? await renderStatuses(db, cfg, ids, null) : [];
  return page(c, <ProfilePage siteTitle={cfg.title} account={renderAccount(cfg, account)} domain={cfg.domain} statuses={rendered} />);
}

export async function statusPage(c: Ctx) {
  const cfg = c.get("config");
  const status = await publicLocalStatus(c.get("db"), cfg, c.req.param("handle")!.slice(1), c.req.param("id")!);
  if (!status) return notFoundPage(c);
  return page(c, <StatusPage siteTitle={cfg.title} status={status} domain={cfg.domain} />);
}

/** A local collection's page (its `url`; ActivityPub clients get its FeaturedCollection at the same address). */
export async function collectionPage(c: Ctx) {
  const cfg = c.get("config");
  const db = c.get("db");
  const id = parseId(c.req.param("id"));
  const row = id ? await collectionById(db, id) : null;
  if (!row || row.uri) return notFoundPage(c);
  const owner = await getAccount(db, row.accountId);
  if (!owner || owner.domain || owner.suspendedAt) return notFoundPage(c);
  const { collection, accounts } = await renderCollectionWithAccounts(db, cfg, row, null);
  return page(c, <CollectionPage siteTitle={cfg.title} collection={collection} accounts={accounts} domain={cfg.domain} />);
}

r.get("/collections/:id", (c) => collectionPage(c));
r.get("/:handle{@[^/]+}", (c) => profilePage(c));
r.get("/:handle{@[^/]+}/:id", (c) => statusPage(c));

export default r;
