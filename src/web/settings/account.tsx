// /auth/edit: the sign-in e-mail address and the password, each changed with the current password.
import { SettingsLayout } from "./kit";
import { NewPasswordFields, PostForm } from "../form-parts";

export function AccountPage(p: {
  siteTitle: string;
  csrf: string;
  email: string;
  unconfirmedEmail?: string | null;
  mail: boolean;
  flash?: string;
  error?: string;
}) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="E-mail and password" path="/auth/edit" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>E-mail address</h1>
        <p>
          You sign in as <strong id="current-email">{p.email}</strong>.
        </p>
        {p.unconfirmedEmail ? (
          <p id="pending-email">
            Waiting for confirmation: <strong>{p.unconfirmedEmail}</strong>. Follow the link sent to it to start using it.
          </p>
        ) : null}
        <p class="muted">
          {p.mail
            ? "A new address is used once you follow the confirmation link mailed to it."
            : "This server is not set up to send e-mail: a new address is not confirmed by a message and is used at once."}
        </p>
        <PostForm action="/auth/edit/email" csrf={p.csrf}>
          <label for="email">New e-mail address</label>
          <input type="email" id="email" name="email" required autocomplete="email" />
          <label for="email_current_password">Current password</label>
          <input type="password" id="email_current_password" name="current_password" required autocomplete="current-password" />
          <button type="submit">Change e-mail address</button>
        </PostForm>
      </div>
      <div class="card">
        <h2>Password</h2>
        <p class="muted">Changing it signs out your other sessions and every application.</p>
        <PostForm action="/auth/edit/password" csrf={p.csrf}>
          <label for="current_password">Current password</label>
          <input type="password" id="current_password" name="current_password" required autocomplete="current-password" />
          <NewPasswordFields />
          <button type="submit">Change password</button>
        </PostForm>
      </div>
    </SettingsLayout>
  );
}
