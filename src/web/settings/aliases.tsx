// /settings/aliases: "moving from another account" (Mastodon's Settings::AliasesController): the account's other
// accounts, each a handle resolved by WebFinger; they become the actor's alsoKnownAs, which the other account's
// server checks before it moves its followers here (src/services/accounts/account-migration.ts). Plain forms, CSRF-checked.
import { routeGroup } from "../../route-group";
import type { Ctx } from "../../context";
import type { AccountAliasRow } from "../../db/schema";
import { addAlias, listAliases, removeAlias } from "../../services/accounts/account-migration";
import { page } from "../layout";
import type { WebSession } from "../session-store";
import { type PageView, SettingsLayout, settingsGet, settingsPost, settingsPostOn, when } from "./kit";
import { PostForm, Table } from "../form-parts";

export function AliasesPage(p: { siteTitle: string; csrf: string; acct: string; aliases: AccountAliasRow[]; flash?: string; error?: string }) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Moving from another account" path="/settings/migration" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>Moving from another account</h1>
        <p>
          To move from another account to <strong>@{p.acct}</strong>, first add that account here as an alias. Then start the move from the other account; its
          server checks that this account lists it before it moves your followers.
        </p>
        <PostForm action="/settings/aliases" csrf={p.csrf}>
          <label for="acct">Handle of the old account</label>
          <input type="text" id="acct" name="acct" required placeholder="username@domain" autocomplete="off" />
          <button type="submit">Create alias</button>
        </PostForm>
      </div>
      <div class="card">
        <h2>Aliases</h2>
        {p.aliases.length ? (
          <Table headers={["Handle", "Added", ""]} id="aliases">
            {p.aliases.map((a) => (
              <tr>
                <td>
                  <a href={a.uri}>@{a.acct}</a>
                </td>
                <td>{when(a.createdAt)}</td>
                <td>
                  <PostForm action={`/settings/aliases/${a.id}/delete`} csrf={p.csrf}>
                    <button type="submit" class="danger">
                      Unlink alias
                    </button>
                  </PostForm>
                </td>
              </tr>
            ))}
          </Table>
        ) : (
          <p class="muted">No aliases.</p>
        )}
      </div>
    </SettingsLayout>
  );
}

const r = routeGroup();

async function aliasesPage(c: Ctx, s: WebSession, o: PageView = {}) {
  const aliases = await listAliases(c.get("db"), s.account.id);
  return page(
    c,
    <AliasesPage siteTitle={c.get("config").title} csrf={s.csrf} acct={s.account.username} aliases={aliases} flash={o.flash} error={o.error} />,
    o.status ?? 200,
  );
}

r.get("/settings/aliases", settingsGet(aliasesPage));

r.post(
  "/settings/aliases",
  settingsPost(aliasesPage, async (c, s, p) => {
    const a = await addAlias(c.get("db"), c.get("fx"), c.get("config"), s.account, p.acct);
    return aliasesPage(c, s, { flash: `@${a.acct} is now an alias of your account.` });
  }),
);

r.post(
  "/settings/aliases/:id/delete",
  settingsPostOn(aliasesPage, "No such alias.", async (c, s, id) => {
    await removeAlias(c.get("db"), c.get("fx"), s.account, id);
    return aliasesPage(c, s, { flash: "The alias was removed." });
  }),
);

export default r;
