// /settings/delete: "delete my account", with the password (src/services/accounts/delete-own-account.ts).
import { Layout } from "../layout";
import { SettingsLayout } from "./kit";
import { PostForm } from "../form-parts";

/** `owner`: the server's owner, whose account cannot be deleted here (the form is not offered). */
export function DeletePage(p: { siteTitle: string; csrf: string; acct: string; owner: boolean; error?: string }) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Delete account" path="/settings/delete" error={p.error}>
      <div class="card">
        <h1>Delete account</h1>
        <p>
          This deletes <strong>@{p.acct}</strong> for good: your posts, media, follows and everything else are removed, and the servers that know your account
          are told it is gone. Your username stays reserved. This cannot be undone.
        </p>
        {p.owner ? (
          <p id="owner-account">
            <strong>@{p.acct} is the owner of this server: its account cannot be deleted.</strong> The server would be left without one.
          </p>
        ) : (
          <>
            <p class="muted">
              To keep your data, download it first from the <a href="/settings/exports">Export page</a>.
            </p>
            <PostForm action="/settings/delete" csrf={p.csrf}>
              <label for="password">Current password</label>
              <input type="password" id="password" name="password" required autocomplete="current-password" />
              <button type="submit" class="danger">
                Delete my account
              </button>
            </PostForm>
          </>
        )}
      </div>
    </SettingsLayout>
  );
}

export function DeletedPage(p: { siteTitle: string }) {
  return (
    <Layout title="Account deleted" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Your account is being deleted</h1>
        <p id="deleted">You are signed out. Your data is being removed, and other servers are being told.</p>
      </div>
    </Layout>
  );
}
