// /settings/aliases: "moving from another account" (Mastodon's Settings::AliasesController): the account's other
// accounts, each a handle resolved by WebFinger; they become the actor's alsoKnownAs, which the other account's
// server checks before it moves its followers here (src/services/account-migration.ts). Plain forms, CSRF-checked.
import { Hono } from "hono";
import type { AppEnv, Ctx } from "../../context";
import type { AccountAliasRow } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { parseId } from "../../lib/ids";
import { readParams } from "../../lib/params";
import { addAlias, listAliases, removeAlias } from "../../services/account-migration";
import { page } from "../layout";
import type { WebSession } from "../session-store";
import { Csrf, postSession, SettingsLayout, settingsSession, when } from "./kit";

export function AliasesPage(p: { siteTitle: string; csrf: string; acct: string; aliases: AccountAliasRow[]; flash?: string; error?: string }) {
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Moving from another account" path="/settings/aliases" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>Moving from another account</h1>
        <p>
          To move from another account to <strong>@{p.acct}</strong>, first add that account here as an alias. Then start the move from the other account; its
          server checks that this account lists it before it moves your followers.
        </p>
        <form method="post" action="/settings/aliases">
          <Csrf token={p.csrf} />
          <label for="acct">Handle of the old account</label>
          <input type="text" id="acct" name="acct" required placeholder="username@domain" autocomplete="off" />
          <button type="submit">Create alias</button>
        </form>
      </div>
      <div class="card">
        <h2>Aliases</h2>
        {p.aliases.length ? (
          <table id="aliases">
            <thead>
              <tr>
                <th>Handle</th>
                <th>Added</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {p.aliases.map((a) => (
                <tr>
                  <td>
                    <a href={a.uri}>@{a.acct}</a>
                  </td>
                  <td>{when(a.createdAt)}</td>
                  <td>
                    <form method="post" action={`/settings/aliases/${a.id}/delete`}>
                      <Csrf token={p.csrf} />
                      <button type="submit" class="danger">
                        Unlink alias
                      </button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No aliases.</p>
        )}
      </div>
    </SettingsLayout>
  );
}

const r = new Hono<AppEnv>();

async function aliasesPage(c: Ctx, s: WebSession, o: { flash?: string; error?: string; status?: 200 | 404 | 422 } = {}) {
  const aliases = await listAliases(c.get("db"), s.account.id);
  return page(
    c,
    <AliasesPage siteTitle={c.get("config").title} csrf={s.csrf} acct={s.account.username} aliases={aliases} flash={o.flash} error={o.error} />,
    o.status ?? 200,
  );
}

/** A service's 4xx as the page's error; anything else is a server error. */
function refused(e: unknown): { message: string; status: 404 | 422 } {
  if (e instanceof ApiError && e.status >= 400 && e.status < 500)
    return { message: e.message.replace(/^Validation failed: /, ""), status: e.status === 404 ? 404 : 422 };
  throw e;
}

r.get("/settings/aliases", async (c) => {
  const s = await settingsSession(c);
  if (s instanceof Response) return s;
  return aliasesPage(c, s);
});

r.post("/settings/aliases", async (c) => {
  const p = await readParams(c);
  const s = await postSession(c, p);
  if (s instanceof Response) return s;
  try {
    const a = await addAlias(c.get("db"), c.get("fx"), c.get("config"), s.account, p.acct);
    return aliasesPage(c, s, { flash: `@${a.acct} is now an alias of your account.` });
  } catch (e) {
    const f = refused(e);
    return aliasesPage(c, s, { error: f.message, status: f.status });
  }
});

r.post("/settings/aliases/:id/delete", async (c) => {
  const p = await readParams(c);
  const s = await postSession(c, p);
  if (s instanceof Response) return s;
  try {
    const id = parseId(c.req.param("id"));
    if (!id) throw new ApiError(404, "Record not found");
    await removeAlias(c.get("db"), c.get("fx"), s.account, id);
  } catch (e) {
    const f = refused(e);
    return aliasesPage(c, s, { error: f.status === 404 ? "No such alias." : f.message, status: f.status });
  }
  return aliasesPage(c, s, { flash: "The alias was removed." });
});

export default r;
