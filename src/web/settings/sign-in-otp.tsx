// The sign-in page's second step for accounts with two-factor authentication: after the right password the page asks
// for a code (TOTP or a recovery code) instead of signing in. The step has its own cookie, CSRF token and 5-minute
// life (challenge-store.ts); the code is checked by `checkCredentials` (src/oauth/credentials.ts): a wrong one counts
// against the account's code budget (10 an hour, whatever the IP; once spent even the right code is refused until the
// hour ends) and the e-mail's sign-in failures, and the per-IP sign-in budget applies to every attempt.
import type { Ctx } from "../../context";
import { ApiError } from "../../lib/http/errors";
import { readParams } from "../../lib/http/params";
import { throttleLogin } from "../../http/rate-limit";
import { checkCredentials } from "../../oauth/credentials";
import { codeAlreadyUsed, USED_CODE } from "../../services/auth/two-factor";
import { MessagePage, SignInPage } from "../auth-pages";
import { Layout, page } from "../layout";
import { currentSession, originAllowed, preSessionCsrf, setSessionCookie } from "../session";
import { createWebSession, destroyWebSession } from "../session-store";
import { safeEqual } from "../../lib/security/crypto";
import { endSignInChallenge, failSignInChallenge, loadSignInChallenge, startSignInChallenge } from "./challenge-store";
import { csrfRefused } from "./kit";
import { ErrorBox, PostForm } from "../form-parts";

export function OtpStepPage(p: { siteTitle: string; csrf: string; error?: string }) {
  return (
    <Layout title="Two-factor authentication" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Two-factor authentication</h1>
        <ErrorBox text={p.error} />
        <PostForm action="/auth/sign_in/otp" csrf={p.csrf}>
          <label for="otp_attempt">Enter the code from your authenticator app, or one of your recovery codes</label>
          <input type="text" id="otp_attempt" name="otp_attempt" autocomplete="one-time-code" required autofocus maxlength={32} />
          <button type="submit">Verify</button>
        </PostForm>
      </div>
    </Layout>
  );
}

/** Called by POST /auth/sign_in once the password was right for a user with two-factor sign-in. */
export async function startOtpStep(c: Ctx, userId: string, returnTo: string) {
  const csrf = await startSignInChallenge(c, userId, returnTo);
  return page(c, <OtpStepPage siteTitle={c.get("config").title} csrf={csrf} />);
}

const tooMany = (c: Ctx, e: unknown) => {
  if (!(e instanceof ApiError) || e.status !== 429) throw e;
  for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v);
  return page(
    c,
    <MessagePage siteTitle={c.get("config").title} title="Too many attempts" message="Too many sign-in attempts. Please wait a few minutes and try again." />,
    429,
  );
};

/** POST /auth/sign_in/otp */
export async function otpStepPost(c: Ctx) {
  const title = c.get("config").title;
  const p = await readParams(c);
  const ch = await loadSignInChallenge(c);
  if (!ch) {
    await endSignInChallenge(c, null);
    return page(c, <SignInPage siteTitle={title} csrf={preSessionCsrf(c)} returnTo="/" notice="Your sign-in timed out. Please sign in again." />, 401);
  }
  if (!originAllowed(c) || typeof p.csrf !== "string" || !p.csrf || !safeEqual(ch.csrf, p.csrf)) return csrfRefused(c);
  try {
    await throttleLogin(c);
  } catch (e) {
    return tooMany(c, e);
  }
  const db = c.get("db");
  let right: boolean;
  try {
    right = await checkCredentials(c, { id: ch.userId, accountId: ch.accountId, email: ch.email }, { otp: p.otp_attempt }, { ipCounted: true });
  } catch (e) {
    return tooMany(c, e);
  }
  if (!right) {
    const usedUp = await failSignInChallenge(db, ch);
    if (usedUp) {
      await endSignInChallenge(c, null);
      return page(
        c,
        <SignInPage siteTitle={title} csrf={preSessionCsrf(c)} returnTo={ch.returnTo} error="Too many invalid codes. Please sign in again." />,
        401,
      );
    }
    const used = await codeAlreadyUsed(db, c.env.SECRET_KEY_BASE ?? "", ch.userId, p.otp_attempt);
    return page(c, <OtpStepPage siteTitle={title} csrf={ch.csrf} error={used ? USED_CODE : "Invalid two-factor code."} />, 401);
  }
  await endSignInChallenge(c, ch.idHash);
  const old = await currentSession(c);
  if (old) await destroyWebSession(db, old.idHash);
  const s = await createWebSession(db, ch.userId);
  setSessionCookie(c, s.id);
  return c.redirect(ch.returnTo, 303);
}
