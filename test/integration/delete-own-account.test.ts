// "Delete my account" (/settings/delete): the password, then the account is suspended and its login gone at once, its
// data removed as staff's deletion removes it, and a Delete of the actor federated to the servers that knew it.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eventually, makeUser, ORIGIN } from "./helpers";
import { take } from "./federation-outbound-fixtures";
import { count, knownAround, pad } from "./delete-account-fixtures";
import { hidden, PASSWORD, passwordGrant, registerApp, web } from "./oauth-helpers";
import { emailOf, postForm, signedIn } from "./settings-helpers";

describe("/settings/delete", () => {
  it("renders, refuses a forged form and a wrong password, and keeps the account", async () => {
    const u = await makeUser("selfdel1");
    const jar = await signedIn(u.username);
    const pageRes = await web("/settings/delete", { jar });
    expect(pageRes.status).toBe(200);
    expect(pageRes.text_).toContain("@selfdel1");
    expect((await web("/settings/delete", { jar, form: { password: PASSWORD, csrf: "nope" }, headers: { origin: ORIGIN } })).status).toBe(403);
    const wrong = await postForm(jar, "/settings/delete", { password: "wrong" }, hidden(pageRes.text_, "csrf")!);
    expect(wrong.status).toBe(422);
    expect(wrong.text_).toContain("The password is wrong.");
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });

  it("deletes the account's data and federates Delete{Actor}; the login and the session end at once", async () => {
    const u = await makeUser("selfdel2");
    const friend = await makeUser("selfdelfriend");
    const { idol, post } = await knownAround(u, friend, "goodbye");
    await take();

    const jar = await signedIn(u.username);
    const res = await postForm(jar, "/settings/delete", { password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.text_).toContain("Your account is being deleted");
    expect(jar.cookies.has("tern_session")).toBe(false);

    // At once: suspended, login disabled, tokens and sessions gone, the e-mail freed.
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    const row = await env.DB.prepare("SELECT a.suspended_at, u.disabled, u.email FROM accounts a JOIN users u ON u.account_id = a.id WHERE a.id = ?")
      .bind(pad(u.id))
      .first<any>();
    expect(row.suspended_at).toBeGreaterThan(0);
    expect(row.disabled).toBe(1);
    expect(row.email).not.toBe(emailOf(u.username));
    expect(await count("SELECT count(*) AS n FROM web_sessions WHERE user_id = ?", pad(u.userId))).toBe(0);
    const app = await registerApp();
    const grant = await passwordGrant(app, emailOf(u.username));
    expect(grant.status).toBe(400);

    await eventually(async () => {
      expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(u.id))).toBe(0);
      expect(await count("SELECT count(*) AS n FROM follows WHERE account_id = ?1 OR target_account_id = ?1", pad(u.id))).toBe(0);
    });
    expect(await count("SELECT count(*) AS n FROM favourites WHERE status_id = ?", pad(post.body.id))).toBe(0);
    // The API answers for a suspended account as Mastodon does.
    expect((await friend.api.get(`/api/v1/accounts/${u.id}`)).status).toBe(410);

    const deletes = await take("Delete");
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.activity).toMatchObject({ type: "Delete", actor: `${ORIGIN}/users/selfdel2`, object: `${ORIGIN}/users/selfdel2` });
    expect(deletes[0]!.inboxes).toEqual([idol.inbox, "https://fans.example/inbox"].sort());
  });

  it("with two-factor authentication on, the account's two-factor rows go too", async () => {
    const u = await makeUser("selfdel3");
    const jar = await signedIn(u.username);
    const { enableTwoFactor } = await import("./settings-helpers");
    await enableTwoFactor(jar, u.userId);
    expect((await postForm(jar, "/settings/delete", { password: PASSWORD })).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM user_two_factor WHERE user_id = ?", pad(u.userId))).toBe(0);
    expect(await count("SELECT count(*) AS n FROM otp_backup_codes WHERE user_id = ?", pad(u.userId))).toBe(0);
  });

  it("the owner cannot delete their account here", async () => {
    const owner = await makeUser("selfdelowner", { roleId: "3" });
    const jar = await signedIn(owner.username);
    // The page says so up front, and offers no form to fill in vain.
    const shown = await web("/settings/delete", { jar });
    expect(shown.text_).toContain("is the owner of this server: its account cannot be deleted.");
    expect(shown.text_).not.toContain('name="password"');
    const res = await postForm(jar, "/settings/delete", { password: PASSWORD });
    expect(res.status).toBe(403);
    expect(res.text_).toContain("The owner&#39;s account cannot be deleted.");
    expect((await owner.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });
});
