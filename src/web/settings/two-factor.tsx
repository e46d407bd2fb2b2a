// /settings/otp_authentication: two-factor sign-in. Off: a button that makes a new secret. Set-up pending: the secret
// (base32 and otpauth:// URI, for the authenticator app) and the confirming code. On: regenerate the recovery codes
// (with a code), or turn it off (password and code). Recovery codes are shown once, in the answer that made them.
import type { TwoFactorState } from "../../services/auth/two-factor";
import { SettingsLayout } from "./kit";
import { PostForm } from "../form-parts";

export function TwoFactorPage(p: {
  siteTitle: string;
  csrf: string;
  state: TwoFactorState;
  setup: { secret: string; uri: string } | null;
  flash?: string;
  error?: string;
}) {
  const { state, setup } = p;
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Two-factor authentication" path="/settings/otp_authentication" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>Two-factor authentication</h1>
        {state.enabled ? (
          <>
            <p id="otp-status">
              Two-factor authentication is <strong>on</strong>. Signing in asks for a code from your authenticator app after your password.
            </p>
            <p class="muted">{state.recoveryCodesLeft} unused recovery codes left.</p>
          </>
        ) : setup ? (
          <>
            <p id="otp-status">Add this account to your authenticator app (TOTP: SHA-1, 6 digits, 30 seconds), then enter the code it shows.</p>
            <label for="otp-secret">Secret key</label>
            <code id="otp-secret">{setup.secret}</code>
            <label for="otp-uri">Or this key URI</label>
            <code id="otp-uri">{setup.uri}</code>
            <PostForm action="/settings/two_factor_authentication/confirmation" csrf={p.csrf}>
              <label for="otp_attempt">Code from the app</label>
              <input type="text" id="otp_attempt" name="otp_attempt" inputmode="numeric" autocomplete="one-time-code" required maxlength={6} />
              <button type="submit">Enable</button>
            </PostForm>
          </>
        ) : (
          <p id="otp-status">
            Two-factor authentication is <strong>off</strong>. With it on, signing in also asks for a code from an app on your phone (any TOTP app).
          </p>
        )}
        {!state.enabled ? (
          <PostForm action="/settings/otp_authentication" csrf={p.csrf}>
            <button type="submit" class={setup ? "secondary" : undefined}>
              {setup ? "Make a new secret" : "Set up"}
            </button>
          </PostForm>
        ) : null}
      </div>
      {state.enabled ? (
        <>
          <div class="card">
            <h2>Recovery codes</h2>
            <p class="muted">Each recovery code signs you in once if you lose your phone. New codes replace the old ones.</p>
            <PostForm action="/settings/two_factor_authentication/recovery_codes" csrf={p.csrf}>
              <label for="regen_otp_attempt">Code from the app</label>
              <input type="text" id="regen_otp_attempt" name="otp_attempt" autocomplete="one-time-code" required maxlength={32} />
              <button type="submit" class="secondary">
                Generate new recovery codes
              </button>
            </PostForm>
          </div>
          <div class="card">
            <h2>Turn off</h2>
            <PostForm action="/settings/two_factor_authentication_methods/disable" csrf={p.csrf}>
              <label for="disable_password">Current password</label>
              <input type="password" id="disable_password" name="current_password" required autocomplete="current-password" />
              <label for="disable_otp_attempt">Code from the app or a recovery code</label>
              <input type="text" id="disable_otp_attempt" name="otp_attempt" autocomplete="one-time-code" required maxlength={32} />
              <button type="submit" class="danger">
                Disable two-factor authentication
              </button>
            </PostForm>
          </div>
        </>
      ) : null}
    </SettingsLayout>
  );
}

export function RecoveryCodesPage(p: { siteTitle: string; codes: string[]; enabledNow: boolean }) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Recovery codes" path="/settings/otp_authentication">
      <div class="card">
        <h1>{p.enabledNow ? "Two-factor authentication is on" : "New recovery codes"}</h1>
        <p>Keep these recovery codes somewhere safe. Each one signs you in once if you lose your phone. They are not shown again.</p>
        <ol class="codes" id="recovery-codes">
          {p.codes.map((c) => (
            <li>{c}</li>
          ))}
        </ol>
        <p>
          <a href="/settings/otp_authentication">Done</a>
        </p>
      </div>
    </SettingsLayout>
  );
}
