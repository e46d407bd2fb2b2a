// Sign-in, consent, authorization code, setup and error pages. The form contracts (field names, actions, button
// texts) are relied on by the browser tests and must not change.
import { raw } from "hono/html";
import { Layout } from "./layout";
import { ErrorBox, PostForm } from "./form-parts";

interface Site {
  siteTitle: string;
}

export function SignInPage(p: Site & { csrf: string; returnTo: string; email?: string; error?: string; notice?: string; confirmations?: boolean }) {
  return (
    <Layout title="Sign in" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Sign in to {p.siteTitle}</h1>
        {p.notice ? <p class="muted">{p.notice}</p> : null}
        <ErrorBox text={p.error} />
        <PostForm action="/auth/sign_in" csrf={p.csrf}>
          <input type="hidden" name="return_to" value={p.returnTo} />
          <label for="email">E-mail address</label>
          <input type="email" id="email" name="email" autocomplete="username" required value={p.email ?? ""} />
          <label for="password">Password</label>
          <input type="password" id="password" name="password" autocomplete="current-password" required />
          <button type="submit">Sign in</button>
        </PostForm>
        <p>
          <a href="/auth/password/new" id="forgot-password">
            Forgot your password?
          </a>
        </p>
        {p.confirmations ? (
          <p>
            <a href="/auth/confirmation/new" id="resend-confirmation">
              Didn't receive confirmation instructions?
            </a>
          </p>
        ) : null}
      </div>
    </Layout>
  );
}

export interface ConsentFields {
  client_id: string;
  redirect_uri: string;
  scope: string;
  state: string;
  code_challenge: string;
  code_challenge_method: string;
  response_type: string;
  response_mode: string;
}

export function ConsentPage(p: Site & { appName: string; website: string | null; acct: string; scopes: string[]; csrf: string; fields: ConsentFields }) {
  return (
    <Layout title="Authorize" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Authorize {p.appName}?</h1>
        <p>
          <strong>{p.appName}</strong>
          {p.website ? <span class="muted"> ({p.website})</span> : null} wants to use your account <strong>@{p.acct}</strong> with these permissions:
        </p>
        <ul class="scopes">
          {p.scopes.map((s) => (
            <li>
              <code>{s}</code>
            </li>
          ))}
        </ul>
        <p class="muted">Only approve applications you recognise and trust.</p>
        <PostForm action="/oauth/authorize" csrf={p.csrf}>
          {Object.entries(p.fields).map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <button type="submit" name="decision" value="approve">
            Authorize
          </button>{" "}
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </PostForm>
      </div>
    </Layout>
  );
}

export function CodePage(p: Site & { code: string; appName: string }) {
  return (
    <Layout title="Authorization code" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Authorization code</h1>
        <p>Copy this code and paste it into {p.appName}:</p>
        <code id="authorization-code">{p.code}</code>
      </div>
    </Layout>
  );
}

export function MessagePage(p: Site & { title: string; message: string; detail?: string }) {
  return (
    <Layout title={p.title} siteTitle={p.siteTitle}>
      <div class="card">
        <h1>{p.title}</h1>
        <p class="error" role="alert">
          {p.message}
        </p>
        {p.detail ? <p class="muted">{p.detail}</p> : null}
      </div>
    </Layout>
  );
}

/** response_mode=form_post: the response goes to the client as a POST; the nonce'd script submits it. */
export function FormPostPage(p: Site & { action: string; fields: Record<string, string>; nonce: string }) {
  return (
    <Layout title="Redirecting" siteTitle={p.siteTitle}>
      <div class="card">
        <form method="post" action={p.action} id="oauth-response">
          {Object.entries(p.fields).map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <button type="submit">Continue</button>
        </form>
        <script nonce={p.nonce}>{raw(`document.getElementById("oauth-response").submit();`)}</script>
      </div>
    </Layout>
  );
}

export function SetupPage(p: Site & { csrf: string; token: string; error?: string; username?: string; email?: string }) {
  return (
    <Layout title="Set up" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Create the owner account</h1>
        <p class="muted">This account will own {p.siteTitle}. The page disappears once it exists.</p>
        <ErrorBox text={p.error} />
        <PostForm action="/setup" csrf={p.csrf}>
          <input type="hidden" name="token" value={p.token} />
          <label for="username">Username</label>
          <input type="text" id="username" name="username" required value={p.username ?? ""} autocomplete="username" />
          <label for="email">E-mail address</label>
          <input type="email" id="email" name="email" required value={p.email ?? ""} />
          <label for="password">Password (8 to 72 characters)</label>
          <input type="password" id="password" name="password" required minlength={8} maxlength={72} autocomplete="new-password" />
          <button type="submit">Create owner</button>
        </PostForm>
      </div>
    </Layout>
  );
}
