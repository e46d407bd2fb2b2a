// The pages behind mailed links (src/web/password-pages.tsx): "Forgot your password?" as Mastodon's /auth/password
// (ask: POST /auth/password; follow: GET /auth/password/edit?reset_password_token=…; set: POST /auth/password/edit, a
// form cannot PUT) and the confirmation of an e-mail address (GET shows a button, POST confirms, so a mail scanner that
// fetches the link does not use it up). Asking for a reset answers the same page whatever the address, after the
// per-IP and per-address limits.
import { routeGroup } from "../route-group";
import type { Ctx } from "../context";
import { ApiError } from "../lib/http/errors";
import { readParams } from "../lib/http/params";
import { throttleConfirmations, throttlePasswordResets } from "../http/rate-limit";
import { confirmEmail, requestConfirmationResend } from "../services/auth/email-confirmation";
import { requestPasswordReset, resetLinkValid, resetPassword } from "../services/auth/password-reset";
import { MessagePage } from "./auth-pages";
import { page } from "./layout";
import { BadLinkPage, ConfirmedPage, ConfirmEmailPage, ForgotPasswordPage, NewPasswordPage, ResendConfirmationPage, ResetSentPage } from "./password-pages";
import { preSessionCsrf, preSessionCsrfValid } from "./session";

const r = routeGroup();

const title = (c: Ctx) => c.get("config").title;
const str = (v: unknown) => (typeof v === "string" ? v : "");
const BAD_RESET = "This password reset link is invalid, was already used, or has expired.";

function refused(c: Ctx) {
  return page(
    c,
    <MessagePage siteTitle={title(c)} title="Request refused" message="The form could not be verified. Go back, reload the page and try again." />,
    403,
  );
}

function tooMany(c: Ctx, e: unknown) {
  if (!(e instanceof ApiError) || e.status !== 429) throw e;
  for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v);
  return page(c, <MessagePage siteTitle={title(c)} title="Too many requests" message="Too many requests. Please wait a while and try again." />, 429);
}

r.get("/auth/password/new", (c) => page(c, <ForgotPasswordPage siteTitle={title(c)} csrf={preSessionCsrf(c)} mail={!!c.env.EMAIL} />));

r.post("/auth/password", async (c) => {
  const p = await readParams(c);
  if (!preSessionCsrfValid(c, p.csrf)) return refused(c);
  const email = str(p.email).slice(0, 320);
  if (!c.env.EMAIL) return page(c, <ForgotPasswordPage siteTitle={title(c)} csrf={preSessionCsrf(c)} mail={false} />, 422);
  try {
    await throttlePasswordResets(c, email);
  } catch (e) {
    return tooMany(c, e);
  }
  requestPasswordReset(c.get("fx"), c.env, email);
  return page(c, <ResetSentPage siteTitle={title(c)} />);
});

r.get("/auth/password/edit", async (c) => {
  const token = str(c.req.query("reset_password_token"));
  if (!(await resetLinkValid(c.get("db"), token))) {
    return page(c, <BadLinkPage siteTitle={title(c)} message={BAD_RESET} again="/auth/password/new" />, 422);
  }
  return page(c, <NewPasswordPage siteTitle={title(c)} csrf={preSessionCsrf(c)} token={token} />);
});

r.post("/auth/password/edit", async (c) => {
  const p = await readParams(c);
  if (!preSessionCsrfValid(c, p.csrf)) return refused(c);
  const token = str(p.reset_password_token);
  try {
    await resetPassword(c.get("db"), c.get("fx"), c.env.SECRET_KEY_BASE ?? "", {
      token,
      password: p.password,
      confirmation: p.password_confirmation,
    });
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 422) throw e;
    if (!(await resetLinkValid(c.get("db"), token))) {
      return page(c, <BadLinkPage siteTitle={title(c)} message={BAD_RESET} again="/auth/password/new" />, 422);
    }
    return page(c, <NewPasswordPage siteTitle={title(c)} csrf={preSessionCsrf(c)} token={token} error={e.message} />, 422);
  }
  return c.redirect("/auth/sign_in?password_reset=1", 303);
});

r.get("/auth/confirmation/new", (c) => page(c, <ResendConfirmationPage siteTitle={title(c)} csrf={preSessionCsrf(c)} mail={!!c.env.EMAIL} />));

r.post("/auth/confirmation/new", async (c) => {
  const p = await readParams(c);
  if (!preSessionCsrfValid(c, p.csrf)) return refused(c);
  const email = str(p.email).slice(0, 320);
  if (!c.env.EMAIL) return page(c, <ResendConfirmationPage siteTitle={title(c)} csrf={preSessionCsrf(c)} mail={false} />, 422);
  try {
    await throttleConfirmations(c, email);
  } catch (e) {
    return tooMany(c, e);
  }
  requestConfirmationResend(c.get("fx"), c.env, email);
  return page(c, <ResendConfirmationPage siteTitle={title(c)} csrf={preSessionCsrf(c)} mail sent />);
});

r.get("/auth/confirmation", (c) => {
  const token = str(c.req.query("confirmation_token")).slice(0, 100);
  return page(c, <ConfirmEmailPage siteTitle={title(c)} csrf={preSessionCsrf(c)} token={token} />);
});

r.post("/auth/confirmation", async (c) => {
  const p = await readParams(c);
  if (!preSessionCsrfValid(c, p.csrf)) return refused(c);
  try {
    const done = await confirmEmail(c.get("db"), p.confirmation_token);
    const message =
      done.kind === "confirmed"
        ? "Your e-mail address is confirmed. You can sign in now."
        : `Your e-mail address is now ${done.email}: sign in with it from now on.`;
    return page(c, <ConfirmedPage siteTitle={title(c)} message={message} />);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 422) throw e;
    return page(c, <BadLinkPage siteTitle={title(c)} message={e.message} />, 422);
  }
});

export default r;
