// The pages of mailed links: "Forgot your password?" (Mastodon's /auth/password/new and /auth/password/edit) and the
// confirmation of an e-mail address (/auth/confirmation). Plain forms, no script, as the sign-in page.
import { Layout } from "./layout";
import { ErrorBox, NewPasswordFields, PostForm } from "./form-parts";

interface Site {
  siteTitle: string;
}

export function ForgotPasswordPage(p: Site & { csrf: string; mail: boolean; email?: string; error?: string }) {
  return (
    <Layout title="Forgot your password?" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Forgot your password?</h1>
        <ErrorBox text={p.error} />
        {p.mail ? (
          <>
            <p class="muted">Enter the e-mail address you sign in with. If it belongs to an account here, a link to choose a new password is sent to it.</p>
            <PostForm action="/auth/password" csrf={p.csrf}>
              <label for="email">E-mail address</label>
              <input type="email" id="email" name="email" autocomplete="username" required value={p.email ?? ""} />
              <button type="submit">Send the link</button>
            </PostForm>
          </>
        ) : (
          <p id="mail-off">This server is not set up to send e-mail, so it cannot mail you a link. Ask its administrator to set a new password for you.</p>
        )}
        <p>
          <a href="/auth/sign_in">Back to sign-in</a>
        </p>
      </div>
    </Layout>
  );
}

export function ResendConfirmationPage(p: Site & { csrf: string; mail: boolean; sent?: boolean }) {
  return (
    <Layout title="Didn't receive confirmation instructions?" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Didn't receive confirmation instructions?</h1>
        {!p.mail ? (
          <p id="mail-off">This server is not set up to send e-mail. Ask its staff to confirm your account.</p>
        ) : p.sent ? (
          <p id="confirmation-sent">
            If this address belongs to an account waiting for confirmation, a new link is on its way to it. It works once, for 3 days.
          </p>
        ) : (
          <PostForm action="/auth/confirmation/new" csrf={p.csrf}>
            <label for="email">E-mail address</label>
            <input type="email" id="email" name="email" autocomplete="username" required />
            <button type="submit">Send a new link</button>
          </PostForm>
        )}
        <p>
          <a href="/auth/sign_in">Back to sign-in</a>
        </p>
      </div>
    </Layout>
  );
}

export function ResetSentPage(p: Site) {
  return (
    <Layout title="Check your e-mail" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Check your e-mail</h1>
        <p id="reset-sent">
          If this address belongs to an account on {p.siteTitle}, a link to choose a new password is on its way to it. The link works once, for 6 hours.
        </p>
        <p>
          <a href="/auth/sign_in">Back to sign-in</a>
        </p>
      </div>
    </Layout>
  );
}

export function NewPasswordPage(p: Site & { csrf: string; token: string; error?: string }) {
  return (
    <Layout title="Choose a new password" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Choose a new password</h1>
        <ErrorBox text={p.error} />
        <p class="muted">Every session and application signed in to your account will be signed out.</p>
        <PostForm action="/auth/password/edit" csrf={p.csrf}>
          <input type="hidden" name="reset_password_token" value={p.token} />
          <NewPasswordFields />
          <button type="submit">Change password</button>
        </PostForm>
      </div>
    </Layout>
  );
}

export function BadLinkPage(p: Site & { message: string; again?: string }) {
  return (
    <Layout title="Link not valid" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Link not valid</h1>
        <p class="error" role="alert" id="bad-link">
          {p.message}
        </p>
        {p.again ? (
          <p>
            <a href={p.again}>Ask for a new link</a>
          </p>
        ) : null}
      </div>
    </Layout>
  );
}

export function ConfirmEmailPage(p: Site & { csrf: string; token: string }) {
  return (
    <Layout title="Confirm your e-mail address" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Confirm your e-mail address</h1>
        <PostForm action="/auth/confirmation" csrf={p.csrf}>
          <input type="hidden" name="confirmation_token" value={p.token} />
          <button type="submit">Confirm</button>
        </PostForm>
      </div>
    </Layout>
  );
}

export function ConfirmedPage(p: Site & { message: string }) {
  return (
    <Layout title="Confirmed" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Confirmed</h1>
        <p id="confirmed">{p.message}</p>
        <p>
          <a href="/auth/sign_in">Sign in</a>
        </p>
      </div>
    </Layout>
  );
}
