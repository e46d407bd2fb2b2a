// /settings/migration: "moving to another account" (Mastodon's Settings::MigrationsController): the new account's
// handle and the current password; the new account must list this one as an alias (its alsoKnownAs). Then this
// account is marked as moved, a Move goes to the followers' servers and the local followers follow the new account
// (src/services/accounts/account-migration.ts). Once every 30 days. Plain forms, CSRF-checked.
import { routeGroup } from "../../route-group";
import type { Ctx } from "../../context";
import { acctOf } from "../../entities/accounts/account";
import { type MigrationState, migrationState, moveAccount } from "../../services/accounts/account-migration";
import { credentialCheck } from "../../oauth/credentials";
import { page } from "../layout";
import type { WebSession } from "../session-store";
import { type PageView, SettingsLayout, settingsGet, settingsPost, when } from "./kit";
import { PostForm, Table } from "../form-parts";

export function MigrationPage(p: { siteTitle: string; csrf: string; acct: string; uri: string; state: MigrationState; flash?: string; error?: string }) {
  const moved = p.state.movedTo;
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Moving to another account" path="/settings/migration" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>Moving to another account</h1>
        {moved ? (
          <p id="moved">
            This account has moved to{" "}
            <a href={moved.url ?? moved.uri}>
              <strong>@{acctOf(moved)}</strong>
            </a>
            . It can no longer post.
          </p>
        ) : (
          <p>
            Move <strong>@{p.acct}</strong> to another account: your followers here and on other servers are asked to follow the new account, and this one shows
            where you went. Your posts stay here. First add this account (<code>{p.uri}</code>) as an alias on the new account. You can move once every 30 days.
          </p>
        )}
        {p.state.cooldownUntil ? (
          <p class="muted">You can move again after {when(p.state.cooldownUntil)}.</p>
        ) : (
          <PostForm action="/settings/migration" csrf={p.csrf}>
            <label for="acct">Handle of the new account</label>
            <input type="text" id="acct" name="acct" required placeholder="username@domain" autocomplete="off" />
            <label for="current_password">Current password</label>
            <input type="password" id="current_password" name="current_password" required autocomplete="current-password" />
            <button type="submit" class="danger">
              Move followers
            </button>
          </PostForm>
        )}
        <p class="muted">
          Moving here from another account instead? <a href="/settings/aliases">Create an alias</a>.
        </p>
      </div>
      {p.state.migrations.length ? (
        <div class="card">
          <h2>Previous moves</h2>
          <Table>
            {p.state.migrations.map((m) => (
              <tr>
                <td>@{m.acct}</td>
                <td>{when(m.createdAt)}</td>
              </tr>
            ))}
          </Table>
        </div>
      ) : null}
    </SettingsLayout>
  );
}

const r = routeGroup();

async function migrationPage(c: Ctx, s: WebSession, o: PageView = {}) {
  const db = c.get("db");
  const state = await migrationState(db, s.account);
  return page(
    c,
    <MigrationPage
      siteTitle={c.get("config").title}
      csrf={s.csrf}
      acct={s.account.username}
      uri={s.account.uri}
      state={state}
      flash={o.flash}
      error={o.error}
    />,
    o.status ?? 200,
  );
}

r.get("/settings/migration", settingsGet(migrationPage));

r.post(
  "/settings/migration",
  settingsPost(migrationPage, async (c, s, p) => {
    const target = await moveAccount(c.get("db"), c.get("fx"), c.get("config"), credentialCheck(c, s.user), s, { acct: p.acct, password: p.current_password });
    const moved = { ...s, account: { ...s.account, movedToAccountId: target.id } };
    return migrationPage(c, moved, { flash: `Your account is moving to @${acctOf(target)}.` });
  }),
);

export default r;
