// Two-factor sign-in (TOTP, RFC 6238, and recovery codes): the TOTP function against the RFC's test vectors, set-up
// through the settings page, and enforcement on the sign-in page and the password grant, including the login lockout.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { base32Decode, base32Encode, hotp, matchTotp, totp } from "../../src/lib/security/totp";
import { makeUser, ORIGIN } from "./helpers";
import { hidden, Jar, PASSWORD, passwordGrant, registerApp, web } from "./oauth-helpers";
import { codeFor, emailOf, enableTwoFactor, forgetUsedStep, postForm, signedIn } from "./settings-helpers";

const ascii = (s: string) => new TextEncoder().encode(s);

describe("TOTP (RFC 6238 appendix B test vectors)", () => {
  const sha1 = ascii("12345678901234567890");
  const sha256 = ascii("12345678901234567890123456789012");
  const sha512 = ascii("1234567890123456789012345678901234567890123456789012345678901234");
  const vectors: [number, string, string, string][] = [
    [59, "94287082", "46119246", "90693936"],
    [1111111109, "07081804", "68084774", "25091201"],
    [1111111111, "14050471", "67062674", "99943326"],
    [1234567890, "89005924", "91819424", "93441116"],
    [2000000000, "69279037", "90698825", "38618901"],
    [20000000000, "65353130", "77737706", "47863826"],
  ];
  for (const [t, s1, s256, s512] of vectors) {
    it(`T = ${t}`, async () => {
      expect(await totp(sha1, t * 1000, 8)).toBe(s1);
      expect(await totp(sha256, t * 1000, 8, "SHA-256")).toBe(s256);
      expect(await totp(sha512, t * 1000, 8, "SHA-512")).toBe(s512);
    });
  }

  it("HOTP (RFC 4226 appendix D) and 6-digit codes within one step either side", async () => {
    const expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];
    for (const [i, code] of expected.entries()) expect(await hotp(sha1, i)).toBe(code);
    const now = 1_700_000_000_000;
    const step = Math.floor(now / 30_000);
    expect(await matchTotp(sha1, await totp(sha1, now), now)).toBe(step);
    expect(await matchTotp(sha1, await totp(sha1, now - 30_000), now)).toBe(step - 1);
    expect(await matchTotp(sha1, await totp(sha1, now + 30_000), now)).toBe(step + 1);
    expect(await matchTotp(sha1, await totp(sha1, now + 60_000), now)).toBeNull();
    expect(await matchTotp(sha1, "12345", now)).toBeNull();
  });

  it("base32 round trip (RFC 4648 vectors)", () => {
    expect(base32Encode(ascii("foobar"))).toBe("MZXW6YTBOI");
    expect(base32Encode(ascii("fooba"))).toBe("MZXW6YTB");
    expect(new TextDecoder().decode(base32Decode("mzxw 6ytb oi======")!)).toBe("foobar");
    expect(base32Decode("MZ1")).toBeNull();
  });
});

async function passwordStep(username: string, ip = "198.51.100.20", password = PASSWORD) {
  const jar = new Jar();
  const form = await web("/auth/sign_in", { jar, ip });
  const res = await web("/auth/sign_in", {
    jar,
    ip,
    form: { email: emailOf(username), password, csrf: hidden(form.text_, "csrf")!, return_to: "/settings/profile" },
    headers: { origin: ORIGIN },
  });
  return { jar, res };
}

const otpStep = (jar: Jar, csrf: string, code: string, ip = "198.51.100.20") =>
  web("/auth/sign_in/otp", { jar, ip, form: { csrf, otp_attempt: code }, headers: { origin: ORIGIN } });

describe("setting up two-factor authentication", () => {
  it("needs a right code from the new secret, shows 10 recovery codes once, keeps the secret sealed and the codes hashed", async () => {
    const u = await makeUser("otpsetup");
    const jar = await signedIn(u.username);
    const off = await web("/settings/otp_authentication", { jar });
    expect(off.status).toBe(200);
    expect(off.text_).toContain("<strong>off</strong>");

    expect((await postForm(jar, "/settings/otp_authentication", {})).status).toBe(303);
    const setup = await web("/settings/otp_authentication", { jar });
    const secret = /id="otp-secret">([A-Z2-7]+)</.exec(setup.text_)?.[1];
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setup.text_).toContain(`otpauth://totp/tern.test:${encodeURIComponent(emailOf(u.username)).replace("%40", "%40")}?secret=${secret}`);

    const wrong = await postForm(jar, "/settings/two_factor_authentication/confirmation", { otp_attempt: "000000" });
    expect(wrong.status).toBe(422);
    expect(wrong.text_).toContain("The two-factor code is invalid");

    const { codes } = await enableTwoFactorFromSecret(jar, secret!);
    expect(codes).toHaveLength(10);
    for (const c of codes) expect(c).toMatch(/^[0-9a-f]{16}$/);

    const stored = await env.DB.prepare("SELECT otp_secret, enabled_at FROM user_two_factor WHERE user_id = ?").bind(u.userId.padStart(20, "0")).first<any>();
    expect(stored.enabled_at).toBeGreaterThan(0);
    expect(stored.otp_secret).not.toContain(secret);
    const hashes = await env.DB.prepare("SELECT code_hash FROM otp_backup_codes WHERE user_id = ?").bind(u.userId.padStart(20, "0")).all<any>();
    expect(hashes.results).toHaveLength(10);
    for (const h of hashes.results) expect(codes).not.toContain(h.code_hash);

    const on = await web("/settings/otp_authentication", { jar });
    expect(on.text_).toContain("<strong>on</strong>");
    expect(on.text_).not.toContain(secret!);
    expect(on.text_).toContain("10 unused recovery codes left");
  });

  it("refuses a form without the session's CSRF token", async () => {
    const u = await makeUser("otpcsrf");
    const jar = await signedIn(u.username);
    const res = await web("/settings/otp_authentication", { jar, form: { csrf: "forged" }, headers: { origin: ORIGIN } });
    expect(res.status).toBe(403);
    const foreign = await web("/settings/otp_authentication", {
      jar,
      form: { csrf: hidden((await web("/settings/otp_authentication", { jar })).text_, "csrf")! },
      headers: { origin: "https://evil.example" },
    });
    expect(foreign.status).toBe(403);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM user_two_factor").first<any>()).toEqual({ n: 0 });
  });
});

async function enableTwoFactorFromSecret(jar: Jar, secret: string) {
  const res = await postForm(jar, "/settings/two_factor_authentication/confirmation", { otp_attempt: await codeFor(secret) });
  expect(res.status).toBe(200);
  const codes = [...res.text_.matchAll(/<li>([0-9a-f]{16})<\/li>/g)].map((m) => m[1]!);
  return { codes };
}

describe("the sign-in page with two-factor authentication", () => {
  it("asks for the code after the password, refuses a wrong one, and accepts a TOTP code or a recovery code once", async () => {
    const u = await makeUser("otpweb");
    const { secret, codes } = await enableTwoFactor(await signedIn(u.username), u.userId);

    const { jar, res } = await passwordStep(u.username);
    expect(res.status).toBe(200);
    expect(res.text_).toContain('action="/auth/sign_in/otp"');
    expect(jar.cookies.has("tern_session")).toBe(false);
    const csrf = hidden(res.text_, "csrf")!;
    // Nothing under /settings yet: the password alone is not a session.
    expect((await web("/settings/profile", { jar })).status).toBe(303);

    expect((await web("/auth/sign_in/otp", { jar, form: { csrf: "wrong", otp_attempt: await codeFor(secret) }, headers: { origin: ORIGIN } })).status).toBe(
      403,
    );
    expect((await web("/auth/sign_in/otp", { form: { csrf, otp_attempt: await codeFor(secret) }, headers: { origin: ORIGIN } })).status).toBe(401);
    const bad = await otpStep(jar, csrf, "123456");
    expect(bad.status).toBe(401);
    expect(bad.text_).toContain("Invalid two-factor code");

    const used = await codeFor(secret);
    const ok = await otpStep(jar, csrf, used);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/settings/profile");
    expect((await web("/settings/profile", { jar })).status).toBe(200);

    // The same code again (a replay) is refused, also when the clock has moved into the next 30 s step meanwhile (a
    // fresh code of that step would rightly pass, so the test replays the very code it used).
    const again = await passwordStep(u.username);
    const replay = await otpStep(again.jar, hidden(again.res.text_, "csrf")!, used);
    expect(replay.status).toBe(401);
    // Said as it is: the code was right, but each code works once.
    expect(replay.text_).toContain("This code was already used");
    expect(replay.text_).not.toContain("Invalid two-factor code");

    // A recovery code works once.
    const r1 = await passwordStep(u.username);
    expect((await otpStep(r1.jar, hidden(r1.res.text_, "csrf")!, codes[0]!)).status).toBe(303);
    const r2 = await passwordStep(u.username);
    expect((await otpStep(r2.jar, hidden(r2.res.text_, "csrf")!, codes[0]!)).status).toBe(401);
  });

  it("gives up the step after 5 wrong codes", async () => {
    const u = await makeUser("otpfive");
    const { secret } = await enableTwoFactor(await signedIn(u.username), u.userId);
    const { jar, res } = await passwordStep(u.username, "198.51.100.21");
    const csrf = hidden(res.text_, "csrf")!;
    for (let i = 0; i < 4; i++) expect((await otpStep(jar, csrf, "000000", "198.51.100.21")).status).toBe(401);
    const last = await otpStep(jar, csrf, "000000", "198.51.100.21");
    expect(last.text_).toContain("Too many invalid codes");
    const late = await otpStep(jar, csrf, await codeFor(secret), "198.51.100.21");
    expect(late.status).toBe(401);
    expect(late.text_).toContain("Please sign in again");
  });
});

describe("the password grant with two-factor authentication", () => {
  it("is refused without a valid otp_attempt (as Mastodon refuses it) and accepted with a code or a recovery code once", async () => {
    const u = await makeUser("otpgrant");
    const { secret, codes } = await enableTwoFactor(await signedIn(u.username), u.userId);
    const app = await registerApp();
    const grant = (extra: Record<string, string> = {}) => passwordGrant(app, emailOf(u.username), extra);

    const none = await grant();
    expect(none.status).toBe(400);
    expect(none.body.error).toBe("invalid_grant");
    expect((await grant({ otp_attempt: "000000" })).body.error).toBe("invalid_grant");
    const used = await codeFor(secret);
    const ok = await grant({ otp_attempt: used });
    expect(ok.status).toBe(200);
    expect(ok.body.access_token).toBeTruthy();
    // The same code again is refused (the very code: one of the next 30 s step would rightly pass).
    expect((await grant({ otp_attempt: used })).status).toBe(400);
    expect((await grant({ otp_attempt: codes[1]! })).status).toBe(200);
    expect((await grant({ otp_attempt: codes[1]! })).status).toBe(400);
    // A wrong password with a right code is still refused.
    await forgetUsedStep(u.userId);
    expect((await grant({ password: "wrong password", otp_attempt: await codeFor(secret) })).status).toBe(400);
  });

  it("wrong codes count against the e-mail's sign-in failures (the login lockout), from the form and the grant", async () => {
    const u = await makeUser("otplock");
    const { secret } = await enableTwoFactor(await signedIn(u.username), u.userId);
    const app = await registerApp();
    let ip = 0;
    const nextIp = () => `100.80.${Math.floor(++ip / 250)}.${ip % 250}`;
    const grant = (otp: string) => passwordGrant(app, emailOf(u.username), { otp_attempt: otp }, { ip: nextIp() });
    const wrongPassword = () => passwordGrant(app, emailOf(u.username), { password: "wrong password" }, { ip: nextIp() });
    // 15 wrong passwords and 10 wrong codes (the account's whole code budget, src/oauth/credentials.ts) make the
    // e-mail's 25 failures.
    for (let i = 0; i < 15; i++) expect((await wrongPassword()).status).toBe(400);
    for (let i = 0; i < 5; i++) expect((await grant(`00000${i % 10}`)).status).toBe(400);
    const step = await passwordStep(u.username, nextIp());
    const csrf = hidden(step.res.text_, "csrf")!;
    for (let i = 0; i < 5; i++) expect((await otpStep(step.jar, csrf, "999999", nextIp())).status).toBe(401);
    // 25 failures: the next wrong code is throttled.
    const throttled = await grant("111111");
    expect(throttled.status).toBe(429);
    // And so is the next wrong password, which only the e-mail's failures (codes included) can refuse.
    expect((await wrongPassword()).status).toBe(429);
    void secret;
  });
});

describe("turning two-factor authentication off", () => {
  it("needs the password and a code; afterwards the password alone signs in", async () => {
    const u = await makeUser("otpoff");
    const jar = await signedIn(u.username);
    const { secret } = await enableTwoFactor(jar, u.userId);
    expect(
      (
        await postForm(
          jar,
          "/settings/two_factor_authentication_methods/disable",
          { current_password: "nope", otp_attempt: await codeFor(secret) },
          await csrf(jar),
        )
      ).status,
    ).toBe(422);
    expect(
      (await postForm(jar, "/settings/two_factor_authentication_methods/disable", { current_password: PASSWORD, otp_attempt: "000000" }, await csrf(jar)))
        .status,
    ).toBe(422);
    const off = await postForm(
      jar,
      "/settings/two_factor_authentication_methods/disable",
      { current_password: PASSWORD, otp_attempt: await codeFor(secret) },
      await csrf(jar),
    );
    expect(off.status).toBe(303);
    const shown = await web("/settings/otp_authentication", { jar });
    expect(shown.text_).toContain("Two-factor authentication is off.");
    const { res } = await passwordStep(u.username, "198.51.100.30");
    expect(res.status).toBe(303);
  });

  it("new recovery codes replace the old ones", async () => {
    const u = await makeUser("otpregen");
    const jar = await signedIn(u.username);
    const { secret, codes } = await enableTwoFactor(jar, u.userId);
    const code = await codeFor(secret);
    const res = await postForm(jar, "/settings/two_factor_authentication/recovery_codes", { otp_attempt: code }, await csrf(jar));
    expect(res.status).toBe(200);
    // The same code again is refused, saying why.
    const reused = await postForm(jar, "/settings/two_factor_authentication/recovery_codes", { otp_attempt: code }, await csrf(jar));
    expect(reused.status).toBe(422);
    expect(reused.text_).toContain("This code was already used");
    const wrong = await postForm(jar, "/settings/two_factor_authentication/recovery_codes", { otp_attempt: "000000" }, await csrf(jar));
    expect(wrong.text_).toContain("The two-factor code is invalid.");
    const fresh = [...res.text_.matchAll(/<li>([0-9a-f]{16})<\/li>/g)].map((m) => m[1]!);
    expect(fresh).toHaveLength(10);
    const old = await passwordStep(u.username, "198.51.100.31");
    expect((await otpStep(old.jar, hidden(old.res.text_, "csrf")!, codes[0]!, "198.51.100.31")).status).toBe(401);
    const neu = await passwordStep(u.username, "198.51.100.31");
    expect((await otpStep(neu.jar, hidden(neu.res.text_, "csrf")!, fresh[0]!, "198.51.100.31")).status).toBe(303);
  });
});

const csrf = async (jar: Jar) => hidden((await web("/settings/otp_authentication", { jar })).text_, "csrf")!;
