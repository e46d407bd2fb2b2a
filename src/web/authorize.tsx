// GET and POST /oauth/authorize: sign-in form when there is no session (or force_login), consent form otherwise,
// and the response to the client (redirect, form_post or the out-of-band code page).
import type { Ctx } from "../context";
import { randomToken } from "../lib/security/crypto";
import { readParams, truthy } from "../lib/http/params";
import { checkAuthorizeRequest, isOob, redirectWith, type AuthorizeCheck, type ResponseMode } from "../oauth/authorize";
import { OAUTH_DESCRIPTIONS } from "../oauth/errors";
import { createGrant } from "../oauth/grants";
import { CodePage, ConsentPage, FormPostPage, MessagePage, SignInPage } from "./auth-pages";
import { page } from "./layout";
import { currentSession, preSessionCsrf, sessionCsrfValid } from "./session";

interface Target {
  redirectUri: string;
  responseMode: ResponseMode;
  appName: string;
}

function respond(c: Ctx, t: Target, params: Record<string, string | null>) {
  const siteTitle = c.get("config").title;
  if (isOob(t.redirectUri)) {
    if (params.code) return page(c, <CodePage siteTitle={siteTitle} code={params.code} appName={t.appName} />);
    return page(c, <MessagePage siteTitle={siteTitle} title="Authorization denied" message={params.error_description ?? "Access denied."} />, 400);
  }
  if (t.responseMode === "form_post") {
    const nonce = randomToken(16);
    const fields = Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => e[1] !== null));
    return page(c, <FormPostPage siteTitle={siteTitle} action={t.redirectUri} fields={fields} nonce={nonce} />, 200, { scriptNonce: nonce });
  }
  return c.redirect(redirectWith(t.redirectUri, t.responseMode, params), 302);
}

/** Errors that are not "ok": our own error page, or back to the client. */
function refuse(c: Ctx, check: Exclude<AuthorizeCheck, { kind: "ok" }>) {
  if (check.kind === "page") {
    return page(
      c,
      <MessagePage siteTitle={c.get("config").title} title="An error has occurred" message={check.description} detail={`Error: ${check.error}`} />,
      400,
    );
  }
  return respond(
    c,
    { redirectUri: check.redirectUri, responseMode: check.responseMode, appName: "" },
    {
      error: check.error,
      error_description: check.description,
      state: check.state,
    },
  );
}

/** Where sign-in sends the browser back to: this request, minus force_login (else it would loop). */
function returnPath(c: Ctx): string {
  const u = new URL(c.req.url);
  u.searchParams.delete("force_login");
  return u.pathname + u.search;
}

export async function authorizeGet(c: Ctx) {
  const p = await readParams(c);
  const check = await checkAuthorizeRequest(c.get("db"), p);
  if (check.kind !== "ok") return refuse(c, check);
  const cfg = c.get("config");
  const session = truthy(p.force_login) ? null : await currentSession(c);
  if (!session) {
    return page(
      c,
      <SignInPage siteTitle={cfg.title} csrf={preSessionCsrf(c)} returnTo={returnPath(c)} notice={`Sign in to continue to ${check.req.app.name}.`} />,
    );
  }
  const req = check.req;
  return page(
    c,
    <ConsentPage
      siteTitle={cfg.title}
      appName={req.app.name}
      website={req.app.website}
      acct={`${session.account.username}@${cfg.domain}`}
      scopes={req.scopes}
      csrf={session.csrf}
      fields={{
        client_id: req.app.clientId,
        redirect_uri: req.redirectUri,
        scope: req.scopes.join(" "),
        state: req.state ?? "",
        code_challenge: req.codeChallenge ?? "",
        code_challenge_method: req.codeChallengeMethod ?? "",
        response_type: "code",
        response_mode: req.responseMode,
      }}
    />,
  );
}

export async function authorizePost(c: Ctx) {
  const p = await readParams(c);
  const siteTitle = c.get("config").title;
  const session = await currentSession(c);
  if (!session || !sessionCsrfValid(c, session, p.csrf)) {
    return page(
      c,
      <MessagePage
        siteTitle={siteTitle}
        title="Request refused"
        message="The form could not be verified (missing or invalid CSRF token, or a cross-site request). Go back, reload the page and try again."
      />,
      403,
    );
  }
  // The hidden fields come back from the browser, so they are checked again exactly as on GET.
  const fields = { ...p, state: p.state === "" ? undefined : p.state };
  const check = await checkAuthorizeRequest(c.get("db"), fields);
  if (check.kind !== "ok") return refuse(c, check);
  const req = check.req;
  const target = { redirectUri: req.redirectUri, responseMode: req.responseMode, appName: req.app.name };
  if (p.decision !== "approve") {
    return respond(c, target, { error: "access_denied", error_description: OAUTH_DESCRIPTIONS.access_denied, state: req.state });
  }
  const code = await createGrant(c.get("db"), {
    app: req.app,
    userId: session.user.id,
    redirectUri: req.redirectUri,
    scopes: req.scopes,
    codeChallenge: req.codeChallenge,
    codeChallengeMethod: req.codeChallengeMethod,
  });
  return respond(c, target, { code, state: req.state });
}
