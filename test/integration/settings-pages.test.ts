// The account settings pages (/settings/profile, /settings/preferences, /auth/edit, /oauth/authorized_applications):
// every page renders for a signed-in user and sends others to the sign-in page, every form is refused without the
// session's CSRF token, and every change shows through the API.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";
import { png } from "./media-fixtures";
import { queued, unpack } from "./queues";
import { hidden, PASSWORD, passwordGrant, registerApp, web } from "./oauth-helpers";
import { csrfOf, emailOf, postForm, signedIn, textOf } from "./settings-helpers";

const PAGES = [
  "/settings/profile",
  "/settings/preferences",
  "/auth/edit",
  "/settings/otp_authentication",
  "/oauth/authorized_applications",
  "/settings/exports",
  "/settings/imports",
  "/settings/migration",
  "/settings/delete",
];
const POSTS: [string, Record<string, string>][] = [
  ["/settings/profile", { display_name: "forged" }],
  ["/settings/preferences", { privacy: "private" }],
  ["/auth/edit/email", { email: "forged@example.com", current_password: PASSWORD }],
  ["/auth/edit/password", { current_password: PASSWORD, password: "forged password 1", password_confirmation: "forged password 1" }],
  ["/settings/otp_authentication", {}],
  ["/settings/two_factor_authentication/confirmation", { otp_attempt: "123456" }],
  ["/settings/two_factor_authentication/recovery_codes", { otp_attempt: "123456" }],
  ["/settings/two_factor_authentication_methods/disable", { current_password: PASSWORD, otp_attempt: "123456" }],
  ["/oauth/authorized_applications/1/revoke", {}],
  ["/settings/sessions/revoke", { session: "0".repeat(64) }],
  ["/settings/delete", { password: PASSWORD }],
];

describe("settings pages", () => {
  it("send signed-out visitors to the sign-in page and back", async () => {
    for (const path of PAGES) {
      const res = await web(path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe(`/auth/sign_in?return_to=${encodeURIComponent(path)}`);
    }
    expect((await web("/settings")).headers.get("location")).toBe("/settings/profile");
  });

  it("render for a signed-in user, with the security headers and the section links; the front page links to them", async () => {
    const u = await makeUser("setpages");
    const jar = await signedIn(u.username);
    for (const path of PAGES) {
      const res = await web(path, { jar });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-security-policy")).toContain("script-src 'none'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.text_).toContain(`href="${path}" aria-current="page"`);
      expect(hidden(res.text_, "csrf")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    const front = await web("/", { jar });
    expect(front.text_).toContain('href="/settings/profile"');
  });

  it("refuse every form without a valid CSRF token or from another origin", async () => {
    const u = await makeUser("setcsrf");
    const jar = await signedIn(u.username);
    const good = await csrfOf(jar);
    for (const [path, form] of POSTS) {
      expect((await web(path, { jar, form, headers: { origin: ORIGIN } })).status, `${path} without token`).toBe(403);
      expect((await web(path, { jar, form: { ...form, csrf: "x".repeat(43) }, headers: { origin: ORIGIN } })).status, `${path} bad token`).toBe(403);
      expect((await web(path, { jar, form: { ...form, csrf: good }, headers: { origin: "https://evil.example" } })).status, `${path} foreign`).toBe(403);
    }
    const me = await u.api.get("/api/v1/accounts/verify_credentials");
    expect(me.status).toBe(200);
    expect(me.body.display_name).toBe("");
  });
});

describe("profile and preferences", () => {
  it("profile changes show through the API; text is escaped on the page", async () => {
    const u = await makeUser("setprofile");
    const jar = await signedIn(u.username);
    const form = new FormData();
    form.append("csrf", await csrfOf(jar));
    form.append("display_name", "Ada <script>alert(1)</script>");
    form.append("note", "Hello & <b>welcome</b>");
    form.append("fields_attributes[0][name]", "Site");
    form.append("fields_attributes[0][value]", "https://ada.example");
    form.append("fields_attributes[1][name]", "");
    form.append("fields_attributes[1][value]", "");
    for (const f of ["locked", "bot", "discoverable", "indexable"]) form.append(f, "0");
    form.append("locked", "1");
    form.append("bot", "1");
    form.append("avatar", new File([await png(8, 8)], "a.png", { type: "image/png" }));
    form.append("header", new File([], "", { type: "application/octet-stream" }));
    const res = await SELF.fetch(`${ORIGIN}/settings/profile`, {
      method: "POST",
      body: form,
      headers: { cookie: jar.header(), origin: ORIGIN },
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/settings/profile");
    jar.absorb(res);

    const me = await u.api.get("/api/v1/accounts/verify_credentials");
    expect(me.body).toMatchObject({ display_name: "Ada <script>alert(1)</script>", locked: true, bot: true, discoverable: false });
    expect(me.body.source.note).toBe("Hello & <b>welcome</b>");
    expect(me.body.fields).toEqual([expect.objectContaining({ name: "Site" })]);
    expect(me.body.avatar).not.toContain("missing");

    const pageRes = await web("/settings/profile", { jar });
    expect(pageRes.text_).toContain("Your profile was saved.");
    expect(pageRes.text_).not.toContain("<script>alert(1)</script>");
    expect(pageRes.text_).toContain("Ada &lt;script&gt;alert(1)&lt;/script&gt;");
    // The flash is shown once.
    expect((await web("/settings/profile", { jar })).text_).not.toContain("Your profile was saved.");
  });

  it("a too-long display name is refused with the reason, and nothing changes", async () => {
    const u = await makeUser("setlong");
    const jar = await signedIn(u.username);
    const res = await postForm(jar, "/settings/profile", { display_name: "x".repeat(31) });
    expect(res.status).toBe(422);
    expect(res.text_).toContain("Display name is too long");
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).body.display_name).toBe("");
  });

  it("a settings flash reads as its message on an admin page too (one flash for the site)", async () => {
    const u = await makeUser("flashstaff", { roleId: "3" });
    const jar = await signedIn(u.username);
    expect((await postForm(jar, "/settings/preferences", { privacy: "public" })).status).toBe(303);
    const admin = await web("/admin", { jar });
    expect(admin.status).toBe(200);
    expect(admin.text_).toContain("Your preferences were saved.");
    expect(admin.text_).not.toContain("preferences_saved");
  });

  it("preferences show in /api/v1/preferences", async () => {
    const u = await makeUser("setprefs");
    const jar = await signedIn(u.username);
    const res = await postForm(jar, "/settings/preferences", {
      privacy: "private",
      language: "de",
      sensitive: "1",
      expand_media: "show_all",
      expand_spoilers: "1",
    });
    expect(res.status).toBe(303);
    const prefs = await u.api.get("/api/v1/preferences");
    expect(prefs.body).toMatchObject({
      "posting:default:visibility": "private",
      "posting:default:sensitive": true,
      "posting:default:language": "de",
      "reading:expand:media": "show_all",
      "reading:expand:spoilers": true,
    });
    expect((await web("/settings/preferences", { jar })).text_).toContain('<option value="private" selected="">');
    const refused = await postForm(jar, "/settings/preferences", { privacy: "unlisted", language: "not a code", expand_media: "hide_all" });
    expect(refused.status).toBe(422);
    // The form comes back as sent, with why: the refused value is there to correct.
    expect(refused.text_).toContain("is not a language code");
    expect(refused.text_).toContain('id="language" name="language" maxlength="16" value="not a code"');
    expect(refused.text_).toContain('<option value="unlisted" selected="">');
    expect(refused.text_).toContain('<option value="hide_all" selected="">');
    expect((await u.api.get("/api/v1/preferences")).body["posting:default:language"]).toBe("de");
    expect((await postForm(jar, "/settings/preferences", { privacy: "direct" })).status).toBe(422);
  });
});

describe("e-mail and password", () => {
  it("the e-mail changes with the current password; the new address waits for its link (test/integration/mail.test.ts)", async () => {
    const u = await makeUser("setmail");
    const other = await makeUser("setmailother");
    const jar = await signedIn(u.username);
    const wrong = await postForm(jar, "/auth/edit/email", { email: "new-setmail@example.org", current_password: "nope" });
    expect(wrong.status).toBe(422);
    expect(wrong.text_).toContain("The current password is wrong.");
    const taken = await postForm(jar, "/auth/edit/email", { email: emailOf(other.username).toUpperCase(), current_password: PASSWORD });
    expect(taken.text_).toContain("has already been taken");
    expect((await postForm(jar, "/auth/edit/email", { email: "not an address", current_password: PASSWORD })).status).toBe(422);
    const ok = await postForm(jar, "/auth/edit/email", { email: "new-setmail@Example.org", current_password: PASSWORD });
    expect(ok.status).toBe(303);
    const shown = await web("/auth/edit", { jar });
    expect(textOf(shown.text_, "current-email")).toBe(emailOf(u.username));
    expect(shown.text_).toContain("A confirmation link was sent to the new address.");
    expect(shown.text_).toContain("new-setmail@example.org");

    // Until the link is followed, the old address signs in and the new one does not.
    const app = await registerApp();
    const grant = (username: string) => passwordGrant(app, username);
    expect((await grant("new-setmail@example.org")).status).toBe(400);
    expect((await grant(emailOf(u.username))).status).toBe(200);
  });

  it("the password changes with sign-up's rules; other sessions and every token are revoked, this session stays", async () => {
    const u = await makeUser("setpass");
    const jar = await signedIn(u.username);
    const other = await signedIn(u.username, PASSWORD, "198.51.100.99");
    const NEW = "a brand new password";
    const post = (form: Record<string, string>) => postForm(jar, "/auth/edit/password", form);
    expect((await post({ current_password: "nope", password: NEW, password_confirmation: NEW })).text_).toContain("The current password is wrong.");
    expect((await post({ current_password: PASSWORD, password: "short", password_confirmation: "short" })).text_).toContain(
      "Password is too short (minimum is 8 characters)",
    );
    expect((await post({ current_password: PASSWORD, password: NEW, password_confirmation: `${NEW}!` })).text_).toContain(
      "Password confirmation doesn&#39;t match Password",
    );
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);

    const ok = await post({ current_password: PASSWORD, password: NEW, password_confirmation: NEW });
    expect(ok.status).toBe(303);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    expect(queued.jobs.flatMap(unpack)).toContainEqual(expect.objectContaining({ type: "disconnect_streams", accountId: u.id }));
    expect((await web("/auth/edit", { jar })).text_).toContain("Your password was changed.");
    expect((await web("/settings/profile", { jar: other })).status).toBe(303);

    await expect(signedIn(u.username, PASSWORD, "198.51.100.98")).rejects.toThrow();
    await signedIn(u.username, NEW, "198.51.100.98");
  });
});

describe("authorized apps and sessions", () => {
  it("lists the apps holding tokens and revokes one app's tokens", async () => {
    const u = await makeUser("setapps");
    const jar = await signedIn(u.username);
    const res = await web("/oauth/authorized_applications", { jar });
    expect(res.text_).toContain("Test App");
    const appId = /action="\/oauth\/authorized_applications\/(\d+)\/revoke"/.exec(res.text_)?.[1];
    expect(appId).toBeTruthy();
    const revoke = await postForm(jar, `/oauth/authorized_applications/${appId}/revoke`, {}, hidden(res.text_, "csrf")!);
    expect(revoke.status).toBe(303);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    // The revoked token's open streams are closed at once.
    expect(queued.jobs.flatMap(unpack)).toContainEqual(expect.objectContaining({ type: "disconnect_streams", accountId: u.id }));
    const after = await web("/oauth/authorized_applications", { jar });
    expect(after.text_).toContain("The application&#39;s access was revoked.");
    expect(after.text_).not.toContain("Test App");
    expect((await postForm(jar, `/oauth/authorized_applications/${appId}/revoke`, {})).status).toBe(404);
  });

  it("lists browser sessions and signs another one out", async () => {
    const u = await makeUser("setsess");
    const jar = await signedIn(u.username);
    const other = await signedIn(u.username, PASSWORD, "198.51.100.97");
    const res = await web("/oauth/authorized_applications", { jar });
    expect(res.text_).toContain("This session");
    const target = hidden(res.text_, "session")!;
    expect(target).toMatch(/^[0-9a-f]{64}$/);
    const out = await postForm(jar, "/settings/sessions/revoke", { session: target }, hidden(res.text_, "csrf")!);
    expect(out.status).toBe(303);
    expect((await web("/settings/profile", { jar: other })).status).toBe(303);
    expect((await web("/settings/profile", { jar })).status).toBe(200);
    const stranger = await makeUser("setsess2");
    const strangerJar = await signedIn(stranger.username, PASSWORD, "198.51.100.96");
    const ownHash = hidden((await web("/oauth/authorized_applications", { jar })).text_, "session");
    expect(ownHash).toBeNull();
    const theirs = hidden((await web("/oauth/authorized_applications", { jar: strangerJar })).text_, "session");
    expect(theirs).toBeNull();
  });
});
