// /oauth/authorized_applications: the applications holding access to the account (live tokens grouped by application)
// and the browser sessions, each with a revoke button.
import type { AuthorizedApp, BrowserSession } from "../../services/auth/authorized-apps";
import { SettingsLayout, when } from "./kit";
import { PostForm, Table } from "../form-parts";

export function AppsPage(p: {
  siteTitle: string;
  csrf: string;
  apps: AuthorizedApp[];
  sessions: BrowserSession[];
  currentSession: string;
  flash?: string;
  error?: string;
}) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Apps and sessions" path="/oauth/authorized_applications" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>Authorized apps</h1>
        {p.apps.length ? (
          <Table headers={["Application", "Permissions", "Last used", ""]} id="authorized-apps">
            {p.apps.map((a) => (
              <tr>
                <td>
                  {a.website ? <a href={/^https?:\/\//i.test(a.website) ? a.website : undefined}>{a.name}</a> : <strong>{a.name}</strong>}
                  <div class="muted">Authorized {when(a.createdAt)}</div>
                </td>
                <td>
                  {a.scopes.map((s) => (
                    <code>{s} </code>
                  ))}
                </td>
                <td>{when(a.lastUsedAt)}</td>
                <td>
                  <PostForm action={`/oauth/authorized_applications/${a.applicationId}/revoke`} csrf={p.csrf}>
                    <button type="submit" class="secondary" aria-label={`Revoke ${a.name}`}>
                      Revoke
                    </button>
                  </PostForm>
                </td>
              </tr>
            ))}
          </Table>
        ) : (
          <p class="muted">No application has access to your account.</p>
        )}
      </div>
      <div class="card">
        <h2>Browser sessions</h2>
        <Table headers={["Signed in", "Expires", ""]} id="sessions">
          {p.sessions.map((s) => (
            <tr>
              <td>{when(s.createdAt)}</td>
              <td>{when(s.expiresAt)}</td>
              <td>
                {s.idHash === p.currentSession ? (
                  <span class="muted">This session</span>
                ) : (
                  <PostForm action="/settings/sessions/revoke" csrf={p.csrf}>
                    <input type="hidden" name="session" value={s.idHash} />
                    <button type="submit" class="secondary">
                      Sign out
                    </button>
                  </PostForm>
                )}
              </td>
            </tr>
          ))}
        </Table>
      </div>
    </SettingsLayout>
  );
}
