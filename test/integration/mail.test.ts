// E-mail through the EMAIL binding (src/mail/): each flow is driven through its pages or API, its mail effect is run by
// the consumer's code, and the test reads the mail miniflare captured (./mail-helpers.ts) and follows its link.
// "Forgot your password?" (Mastodon's /auth/password), sign-up confirmation, a new address's confirmation, staff
// notices, and what each flow does without a binding.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../src/app";
import { users } from "../../src/db/schema";
import { Effects } from "../../src/effects/collector";
import type { Env } from "../../src/env";
import { sha256Hex } from "../../src/lib/security/crypto";
import { padId } from "../../src/lib/text/ids";
import { changeEmail } from "../../src/services/auth/email-change";
import { ORIGIN, api, db, makeUser } from "./helpers";
import { askReset, formCsrf, linkIn, mailTo } from "./mail-helpers";
import { hidden, Jar, PASSWORD, registerApp, signIn, tokenRequest, web } from "./oauth-helpers";
import { installQueueCapture, queued, runQueuedJobs, unpack } from "./queues";
import { postForm } from "./settings-helpers";

beforeEach(() => installQueueCapture());

const emailOf = (u: string) => `${u}@example.com`;
let n = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${++n}`;
const mailEffects = () => queued.jobs.flatMap(unpack).filter((e) => e.type === "mail" || e.type === "mail_staff" || e.type === "password_reset");

/** The app answering with `over` in its env (a missing binding, a setting), as SELF answers with the test env. */
async function withEnv(over: Partial<Env>, path: string, init: RequestInit & { jar?: Jar } = {}) {
  const headers = new Headers(init.headers);
  if (init.jar?.cookies.size) headers.set("cookie", init.jar.header());
  const ctx = createExecutionContext();
  const res = await buildApp().fetch(new Request(`${ORIGIN}${path}`, { ...init, headers, redirect: "manual" }), { ...(env as Env), ...over }, ctx);
  await waitOnExecutionContext(ctx);
  init.jar?.absorb(res);
  return Object.assign(res, { text_: await res.text() });
}

describe("Forgot your password? (/auth/password)", () => {
  it("mails a link that sets a new password once, signs the account out everywhere, and names the instance", async () => {
    const u = await makeUser(unique("reset"));
    const since = Date.now() - 1;
    const signInPage = await web("/auth/sign_in");
    expect(signInPage.text_).toContain('href="/auth/password/new"');
    const asked = await askReset(new Jar(), emailOf(u.username));
    expect(asked.status).toBe(200);
    expect(asked.text_).toContain('id="reset-sent"');
    // Nothing was sent in the request: the mail is an effect, run by the consumer.
    expect(await mailTo(emailOf(u.username), since)).toHaveLength(0);
    await runQueuedJobs();
    const mails = await mailTo(emailOf(u.username), since);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.text).toContain("Tern");
    expect(mail.text).toContain(`${ORIGIN}/`);
    // Every link points at the instance's own origin, in both parts.
    for (const url of mail.text.match(/https?:\/\/[^\s]+/g) ?? []) expect(url.startsWith(ORIGIN)).toBe(true);
    for (const url of [...(mail.html ?? "").matchAll(/href="([^"]+)"/g)].map((m) => m[1]!)) expect(url.startsWith(ORIGIN)).toBe(true);
    const link = linkIn(mail.text, "/auth/password/edit?reset_password_token=");
    expect(mail.html).toContain(link.replace(/&/g, "&amp;"));
    const token = new URL(link).searchParams.get("reset_password_token")!;
    // Stored hashed: D1 holds the SHA-256 of the token, never the token.
    const rows = await env.DB.prepare("SELECT token_hash, purpose FROM email_links WHERE user_id = ?").bind(padId(u.userId)).all<{ token_hash: string }>();
    expect(rows.results).toEqual([{ token_hash: await sha256Hex(token), purpose: "reset_password" }]);

    const jar = new Jar();
    const form = await web(link.slice(ORIGIN.length), { jar });
    expect(form.status).toBe(200);
    const csrf = hidden(form.text_, "csrf")!;
    // A refused password keeps the link usable.
    const short = await web("/auth/password/edit", {
      jar,
      form: { csrf, reset_password_token: token, password: "short", password_confirmation: "short" },
      headers: { origin: ORIGIN },
    });
    expect(short.status).toBe(422);
    expect(short.text_).toContain("too short");
    const set = await web("/auth/password/edit", {
      jar,
      form: { csrf, reset_password_token: token, password: "a brand new password", password_confirmation: "a brand new password" },
      headers: { origin: ORIGIN },
    });
    expect(set.status).toBe(303);
    expect(set.headers.get("location")).toBe("/auth/sign_in?password_reset=1");
    // As a password change: the app token is revoked, the new password signs in, the old one does not.
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    await signIn(emailOf(u.username), "a brand new password");
    await expect(signIn(emailOf(u.username), PASSWORD)).rejects.toThrow(/401/);
    // Single use.
    expect((await web(link.slice(ORIGIN.length))).status).toBe(422);
    const again = await web("/auth/password/edit", {
      jar,
      form: { csrf, reset_password_token: token, password: "another new password", password_confirmation: "another new password" },
      headers: { origin: ORIGIN },
    });
    expect(again.status).toBe(422);
    expect(again.text_).toContain('id="bad-link"');
  });

  it("one link posted several times at once sets the password once", async () => {
    const u = await makeUser(unique("race"));
    const since = Date.now() - 1;
    await askReset(new Jar(), emailOf(u.username), "203.0.113.41");
    await runQueuedJobs();
    const link = linkIn((await mailTo(emailOf(u.username), since))[0]!.text, "/auth/password/edit?reset_password_token=");
    const token = new URL(link).searchParams.get("reset_password_token")!;
    const jar = new Jar();
    const csrf = hidden((await web(link.slice(ORIGIN.length), { jar })).text_, "csrf")!;
    const answers = await Promise.all(
      ["first password one", "second password two", "third password three"].map((password) =>
        web("/auth/password/edit", {
          jar,
          form: { csrf, reset_password_token: token, password, password_confirmation: password },
          headers: { origin: ORIGIN },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([303, 422, 422]);
  });

  it("answers an unknown address exactly as a known one, and mails nothing", async () => {
    const u = await makeUser(unique("known"));
    const known = await askReset(new Jar(), emailOf(u.username), "203.0.113.21");
    const unknown = await askReset(new Jar(), `${unique("nobody")}@example.com`, "203.0.113.22");
    expect(unknown.status).toBe(known.status);
    expect(unknown.text_).toBe(known.text_);
    // The request only records the address (no lookup, so its time does not tell either); the job looks it up.
    expect(mailEffects().map((e) => e.type)).toEqual(["password_reset", "password_reset"]);
    const since = Date.now() - 1;
    await runQueuedJobs();
    expect(await mailTo(emailOf(u.username), since)).toHaveLength(1);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM email_links WHERE email LIKE 'nobody%'").first("n")).toBe(0);
  });

  it("a link expires after 6 hours, and a new link replaces the older one", async () => {
    const u = await makeUser(unique("expiry"));
    const since = Date.now() - 1;
    await askReset(new Jar(), emailOf(u.username), "203.0.113.31");
    await runQueuedJobs();
    const first = linkIn((await mailTo(emailOf(u.username), since))[0]!.text, "/auth/password/edit?reset_password_token=");
    await askReset(new Jar(), emailOf(u.username), "203.0.113.31");
    await runQueuedJobs();
    const mails = await mailTo(emailOf(u.username), since);
    expect(mails).toHaveLength(2);
    const second = linkIn(mails[1]!.text, "/auth/password/edit?reset_password_token=");
    expect((await web(first.slice(ORIGIN.length))).status).toBe(422);
    expect((await web(second.slice(ORIGIN.length))).status).toBe(200);
    await env.DB.prepare("UPDATE email_links SET expires_at = ? WHERE user_id = ?")
      .bind(Date.now() - 1, padId(u.userId))
      .run();
    expect((await web(second.slice(ORIGIN.length))).status).toBe(422);
  });

  it("is limited per address (5 in 30 minutes) and per IP (25 in 5 minutes), with one answer for known and unknown addresses", async () => {
    const address = `${unique("flood")}@example.com`;
    for (let i = 0; i < 5; i++) expect((await askReset(new Jar(), address, `198.51.100.${100 + i}`)).status).toBe(200);
    expect((await askReset(new Jar(), address, "198.51.100.120")).status).toBe(429);
    const ip = "198.51.100.200";
    for (let i = 0; i < 25; i++) expect((await askReset(new Jar(), `${unique("spread")}@example.com`, ip)).status).toBe(200);
    const refused = await askReset(new Jar(), `${unique("spread")}@example.com`, ip);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBeTruthy();
  });

  it("without a mail binding the page says so, and asking writes nothing", async () => {
    const u = await makeUser(unique("nomail"));
    const page = await withEnv({ EMAIL: undefined }, "/auth/password/new");
    expect(page.text_).toContain('id="mail-off"');
    const jar = new Jar();
    const csrf = await formCsrf(jar, "/auth/password/new");
    const res = await withEnv({ EMAIL: undefined }, "/auth/password", {
      method: "POST",
      jar,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      body: new URLSearchParams({ csrf, email: emailOf(u.username) }).toString(),
    });
    expect(res.text_).toContain('id="mail-off"');
    expect(await env.DB.prepare("SELECT count(*) AS n FROM email_links WHERE user_id = ?").bind(padId(u.userId)).first("n")).toBe(0);
    expect(mailEffects()).toHaveLength(0);
  });
});

async function appToken() {
  const app = await registerApp();
  const t = await tokenRequest({
    grant_type: "client_credentials",
    client_id: app.client_id,
    client_secret: app.client_secret,
    scope: "read write follow push",
  });
  return t.body.access_token as string;
}

async function signUp(over: Partial<Env>, username: string) {
  const token = await appToken();
  return withEnv({ REQUIRE_EMAIL_CONFIRMATION: "true", REGISTRATIONS_MODE: "open", ...over }, "/api/v1/accounts", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "cf-connecting-ip": `192.0.2.${++n % 250}` },
    body: JSON.stringify({ username, email: emailOf(username), password: "a long enough password", agreement: true, locale: "en" }),
  });
}

describe("sign-up confirmation (REQUIRE_EMAIL_CONFIRMATION)", () => {
  it("mails a single-use link; following it confirms the account, which may then sign in", async () => {
    const name = unique("signup");
    const since = Date.now() - 1;
    const res = await signUp({}, name);
    expect(res.status).toBe(200);
    await runQueuedJobs();
    const mails = await mailTo(emailOf(name), since);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain(`@${name}`);
    const link = linkIn(mails[0]!.text, "/auth/confirmation?confirmation_token=");
    // Not confirmed yet: the sign-in form says why.
    const jar = new Jar();
    const csrf = await formCsrf(jar, "/auth/sign_in");
    const refused = await withEnv({ REQUIRE_EMAIL_CONFIRMATION: "true" }, "/auth/sign_in", {
      method: "POST",
      jar,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      body: new URLSearchParams({ csrf, email: emailOf(name), password: "a long enough password", return_to: "/" }).toString(),
    });
    expect(refused.status).toBe(401);
    expect(refused.text_).toContain("confirm your e-mail address");
    // The link shows a button (a mail scanner's GET does not use it up); the POST confirms.
    const page = await web(link.slice(ORIGIN.length), { jar });
    expect(page.status).toBe(200);
    const token = hidden(page.text_, "confirmation_token")!;
    const confirm = () =>
      web("/auth/confirmation", { jar, form: { csrf: hidden(page.text_, "csrf")!, confirmation_token: token }, headers: { origin: ORIGIN } });
    const ok = await confirm();
    expect(ok.status).toBe(200);
    expect(ok.text_).toContain('id="confirmed"');
    const row = await env.DB.prepare("SELECT u.confirmed_at FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = ?")
      .bind(name)
      .first<{ confirmed_at: number | null }>();
    expect(row?.confirmed_at).not.toBeNull();
    expect((await confirm()).status).toBe(422);
  });

  it("POST /api/v1/emails/confirmations mails a new link that replaces the first", async () => {
    const name = unique("resend");
    const since = Date.now() - 1;
    const res = await signUp({}, name);
    const token = JSON.parse(res.text_).access_token as string;
    await runQueuedJobs();
    const resent = await api(token).post("/api/v1/emails/confirmations", {});
    expect(resent.status).toBe(200);
    await runQueuedJobs();
    const mails = await mailTo(emailOf(name), since);
    expect(mails).toHaveLength(2);
    const first = linkIn(mails[0]!.text, "/auth/confirmation?confirmation_token=");
    const second = linkIn(mails[1]!.text, "/auth/confirmation?confirmation_token=");
    const jar = new Jar();
    const csrf = await formCsrf(jar, "/auth/sign_in");
    const post = (link: string) =>
      web("/auth/confirmation", {
        jar,
        form: { csrf, confirmation_token: new URL(link).searchParams.get("confirmation_token")! },
        headers: { origin: ORIGIN },
      });
    expect((await post(first)).status).toBe(422);
    expect((await post(second)).status).toBe(200);
  });

  it('"Didn\'t receive confirmation instructions?" mails a new link to an unconfirmed account only, answering the same for any address', async () => {
    const name = unique("lost");
    expect((await signUp({}, name)).status).toBe(200);
    await runQueuedJobs();
    const since = Date.now() - 1;
    const signInPage = await withEnv({ REQUIRE_EMAIL_CONFIRMATION: "true" }, "/auth/sign_in");
    expect(signInPage.text_).toContain('href="/auth/confirmation/new"');
    const ask = async (email: string, ip: string) => {
      const jar = new Jar();
      const csrf = await formCsrf(jar, "/auth/confirmation/new", ip);
      return web("/auth/confirmation/new", { jar, ip, form: { csrf, email }, headers: { origin: ORIGIN } });
    };
    const mine = await ask(emailOf(name), "203.0.113.51");
    const confirmed = await makeUser(unique("already"));
    const other = await ask(emailOf(confirmed.username), "203.0.113.52");
    const nobody = await ask(`${unique("ghost")}@example.com`, "203.0.113.53");
    expect(mine.status).toBe(200);
    expect(mine.text_).toContain('id="confirmation-sent"');
    expect(other.text_).toBe(mine.text_);
    expect(nobody.text_).toBe(mine.text_);
    await runQueuedJobs();
    const mails = await mailTo(emailOf(name), since);
    expect(mails).toHaveLength(1);
    expect(await mailTo(emailOf(confirmed.username), since)).toHaveLength(0);
    const link = linkIn(mails[0]!.text, "/auth/confirmation?confirmation_token=");
    const jar = new Jar();
    const csrf = await formCsrf(jar, "/auth/sign_in");
    const done = await web("/auth/confirmation", {
      jar,
      form: { csrf, confirmation_token: new URL(link).searchParams.get("confirmation_token")! },
      headers: { origin: ORIGIN },
    });
    expect(done.status).toBe(200);
  });

  it("without a mail binding the account is created unconfirmed, no mail is recorded, and sign-in says staff must confirm", async () => {
    const name = unique("nomailup");
    expect((await signUp({ EMAIL: undefined }, name)).status).toBe(200);
    expect(mailEffects()).toHaveLength(0);
    const jar = new Jar();
    const csrf = await formCsrf(jar, "/auth/sign_in");
    const refused = await withEnv({ REQUIRE_EMAIL_CONFIRMATION: "true", EMAIL: undefined }, "/auth/sign_in", {
      method: "POST",
      jar,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      body: new URLSearchParams({ csrf, email: emailOf(name), password: "a long enough password", return_to: "/" }).toString(),
    });
    expect(refused.text_).toContain("ask its staff to confirm your account");
  });
});

describe("a new e-mail address is confirmed before it is used", () => {
  it("the new address waits, gets a link, and becomes the sign-in address once the link is followed", async () => {
    const u = await makeUser(unique("change"));
    const newAddress = `${unique("moved")}@example.org`;
    const since = Date.now() - 1;
    const jar = await signIn(emailOf(u.username));
    const res = await postForm(jar, "/auth/edit/email", { email: newAddress, current_password: PASSWORD });
    expect(res.status).toBe(303);
    const page = await web("/auth/edit", { jar });
    expect(page.text_).toContain('id="pending-email"');
    const row = await env.DB.prepare("SELECT email, unconfirmed_email FROM users WHERE id = ?").bind(padId(u.userId)).first();
    expect(row).toEqual({ email: emailOf(u.username), unconfirmed_email: newAddress });
    // The old address still signs in.
    await signIn(emailOf(u.username));
    await runQueuedJobs();
    const mails = await mailTo(newAddress, since);
    expect(mails).toHaveLength(1);
    expect(await mailTo(emailOf(u.username), since)).toHaveLength(0);
    const link = linkIn(mails[0]!.text, "/auth/confirmation?confirmation_token=");
    const other = new Jar();
    const form = await web(link.slice(ORIGIN.length), { jar: other });
    const done = await web("/auth/confirmation", {
      jar: other,
      form: { csrf: hidden(form.text_, "csrf")!, confirmation_token: hidden(form.text_, "confirmation_token")! },
      headers: { origin: ORIGIN },
    });
    expect(done.status).toBe(200);
    expect(done.text_).toContain(newAddress);
    expect(await env.DB.prepare("SELECT email, unconfirmed_email FROM users WHERE id = ?").bind(padId(u.userId)).first()).toEqual({
      email: newAddress,
      unconfirmed_email: null,
    });
    await signIn(newAddress);
  });

  it("changes are limited as confirmations: 5 mails to one new address in 30 minutes (CVE-2025-54879)", async () => {
    const u = await makeUser(unique("spammer"));
    const target = `${unique("victim")}@example.org`;
    const jar = await signIn(emailOf(u.username));
    for (let i = 0; i < 5; i++) expect((await postForm(jar, "/auth/edit/email", { email: target, current_password: PASSWORD })).status).toBe(303);
    const refused = await postForm(jar, "/auth/edit/email", { email: target, current_password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.text_).toContain("Too many attempts");
  });

  it("without a mail binding the new address is used at once", async () => {
    const u = await makeUser(unique("direct"));
    const [user] = await db().select().from(users).where(eq(users.id, u.userId));
    const fx = new Effects(ORIGIN);
    const out = await changeEmail(db(), fx, { ...(env as Env), EMAIL: undefined }, async () => true, user!, {
      email: `${u.username}@example.org`,
      password: PASSWORD,
    });
    expect(out).toEqual({ email: `${u.username}@example.org`, pending: false });
    expect(fx.list).toHaveLength(0);
    expect(await env.DB.prepare("SELECT email FROM users WHERE id = ?").bind(padId(u.userId)).first("email")).toBe(`${u.username}@example.org`);
  });
});

describe("staff notices", () => {
  it("a new report is mailed to staff who may handle reports and want it; one who turned it off gets none", async () => {
    const wants = await makeUser(unique("mod"), { roleId: "1" });
    const off = await makeUser(unique("modoff"), { roleId: "1" });
    await env.DB.prepare(`UPDATE users SET settings = json_set(settings, '$."notification_emails:report"', json('false')) WHERE id = ?`)
      .bind(padId(off.userId))
      .run();
    const reporter = await makeUser(unique("reporter"));
    const target = await makeUser(unique("target"));
    const since = Date.now() - 1;
    const res = await reporter.api.post("/api/v1/reports", { account_id: target.id, comment: "spam spam spam" });
    expect(res.status).toBe(200);
    await runQueuedJobs();
    const mails = await mailTo(emailOf(wants.username), since);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain(`@${reporter.username} reported @${target.username}`);
    expect(mails[0]!.text).toContain(`${ORIGIN}/admin/reports`);
    expect(await mailTo(emailOf(off.username), since)).toHaveLength(0);
  });

  it("staff turn each notice off or on from the preferences page; other users have no such choice", async () => {
    const mod = await makeUser(unique("prefmod"), { roleId: "1" });
    const jar = await signIn(emailOf(mod.username));
    const page = await web("/settings/preferences", { jar });
    expect(page.text_).toContain('name="notify_report"');
    const saved = await postForm(
      jar,
      "/settings/preferences",
      { privacy: "public", language: "", expand_media: "default", notify_report: "0", notify_pending_account: "1", notify_trends: "0" },
      hidden(page.text_, "csrf")!,
    );
    expect(saved.status).toBe(303);
    const settings = JSON.parse(
      (await env.DB.prepare("SELECT settings FROM users WHERE id = ?").bind(padId(mod.userId)).first<{ settings: string }>())!.settings,
    );
    expect(settings).toMatchObject({
      "notification_emails:report": false,
      "notification_emails:pending_account": true,
      "notification_emails:trends": false,
    });
    const plain = await makeUser(unique("prefuser"));
    const plainJar = await signIn(emailOf(plain.username));
    expect((await web("/settings/preferences", { jar: plainJar })).text_).not.toContain('name="notify_report"');
  });

  it("a sign-up waiting for approval is mailed to staff who may manage users", async () => {
    const admin = await makeUser(unique("admin"), { roleId: "2" });
    const name = unique("waiting");
    const since = Date.now() - 1;
    const token = await appToken();
    const res = await withEnv({ REGISTRATIONS_MODE: "approval" }, "/api/v1/accounts", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "cf-connecting-ip": "192.0.2.251" },
      body: JSON.stringify({ username: name, email: emailOf(name), password: "a long enough password", agreement: true, reason: "I like birds" }),
    });
    expect(res.status).toBe(200);
    await runQueuedJobs();
    const mails = await mailTo(emailOf(admin.username), since);
    const mine = mails.filter((m) => m.text.includes(`@${name}`));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.text).toContain("I like birds");
    expect(mine[0]!.text).toContain(`${ORIGIN}/admin/pending`);
  });
});
