// Security (outside review, F2): second-factor codes are limited per account, whatever the IP, as Mastodon's
// MAX_2FA_ATTEMPTS_PER_HOUR does: after 10 wrong codes in the hour, from the password grant and the sign-in page's code
// step together, even the right code is refused (429) until the hour ends. Each request comes from a new address
// (CF-Connecting-IP), so the per-IP sign-in budget never applies.
import { describe, expect, it } from "vitest";
import { ACCOUNT_OTP_FAILURE_LIMIT } from "../../src/http/rate-limit";
import { makeUser, ORIGIN } from "./helpers";
import { hidden, Jar, PASSWORD, passwordGrant, registerApp, web } from "./oauth-helpers";
import { codeFor, emailOf, enableTwoFactor, signedIn } from "./settings-helpers";

const BUDGET = ACCOUNT_OTP_FAILURE_LIMIT.limit;

/** One fresh address per call (100.96.0.0/12), as a botnet would send them. */
let ipSeq = 0;
const nextIp = () => `100.${96 + Math.floor(++ipSeq / 62_500)}.${Math.floor(ipSeq / 250) % 250}.${ipSeq % 250}`;

/** The sign-in form's password step, from a new address: the page asking for the code, and its jar. */
async function passwordStep(username: string) {
  const jar = new Jar();
  const ip = nextIp();
  const form = await web("/auth/sign_in", { jar, ip });
  const res = await web("/auth/sign_in", {
    jar,
    ip,
    form: { email: emailOf(username), password: PASSWORD, csrf: hidden(form.text_, "csrf")!, return_to: "/settings/profile" },
    headers: { origin: ORIGIN },
  });
  expect(res.status).toBe(200);
  expect(res.text_).toContain('action="/auth/sign_in/otp"');
  return { jar, csrf: hidden(res.text_, "csrf")! };
}

const codeStep = (jar: Jar, csrf: string, code: string) =>
  web("/auth/sign_in/otp", { jar, ip: nextIp(), form: { csrf, otp_attempt: code }, headers: { origin: ORIGIN } });

describe("second-factor codes per account (F2)", () => {
  it("password grant: 10 wrong codes from 10 addresses, then the right code is refused (429) and no token is issued", async () => {
    const u = await makeUser("tfgrant");
    const { secret } = await enableTwoFactor(await signedIn(u.username), u.userId);
    const app = await registerApp();
    for (let i = 0; i < BUDGET; i++) {
      const wrong = await passwordGrant(app, emailOf(u.username), { otp_attempt: String(100000 + i) }, { ip: nextIp() });
      expect(wrong.status, `wrong code ${i + 1}`).toBe(400);
      expect(wrong.body.error).toBe("invalid_grant");
    }
    const right = await passwordGrant(app, emailOf(u.username), { otp_attempt: await codeFor(secret) }, { ip: nextIp() });
    expect(right.status).toBe(429);
    expect(right.body).toEqual({ error: "Too many requests" });
    expect(right.body.access_token).toBeUndefined();
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(3000);
    // A recovery code is a second factor too: refused alike.
    expect((await passwordGrant(app, emailOf(u.username), { otp_attempt: "0123456789abcdef" }, { ip: nextIp() })).status).toBe(429);
  });

  it("sign-in page: 10 wrong codes over two password steps from rotating addresses, then the right code is refused (429)", async () => {
    const u = await makeUser("tfweb");
    const { secret, codes } = await enableTwoFactor(await signedIn(u.username), u.userId);
    for (let round = 0; round < BUDGET / 5; round++) {
      const { jar, csrf } = await passwordStep(u.username);
      for (let i = 0; i < 5; i++) expect((await codeStep(jar, csrf, String(200000 + round * 5 + i))).status).toBe(401);
    }
    const { jar, csrf } = await passwordStep(u.username);
    const right = await codeStep(jar, csrf, await codeFor(secret));
    expect(right.status).toBe(429);
    expect(right.text_).toContain("Too many sign-in attempts");
    expect(right.headers.get("retry-after")).toBeTruthy();
    expect(jar.cookies.has("tern_session")).toBe(false);
    expect((await codeStep(jar, csrf, codes[0]!)).status).toBe(429);
    expect((await web("/settings/profile", { jar })).status).toBe(303);
  });

  it("the grant and the sign-in page share one budget", async () => {
    const u = await makeUser("tfboth");
    const { secret } = await enableTwoFactor(await signedIn(u.username), u.userId);
    const app = await registerApp();
    for (let i = 0; i < BUDGET - 5; i++) expect((await passwordGrant(app, emailOf(u.username), { otp_attempt: "000000" }, { ip: nextIp() })).status).toBe(400);
    const step = await passwordStep(u.username);
    for (let i = 0; i < 5; i++) expect((await codeStep(step.jar, step.csrf, "999999")).status).toBe(401);
    const again = await passwordStep(u.username);
    expect((await codeStep(again.jar, again.csrf, await codeFor(secret))).status).toBe(429);
    expect((await passwordGrant(app, emailOf(u.username), { otp_attempt: await codeFor(secret) }, { ip: nextIp() })).status).toBe(429);
  });
});
