// Security (issue, class 11): strangers cannot lock someone out by guessing their password. Failures count per
// e-mail (25 an hour, then further failures are 429); successes never count there, and the right password is never
// refused by that counter, from the sign-in form or the password grant. Every attempt still counts per IP.
import { describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";
import { hidden, Jar, PASSWORD, registerApp, tokenRequest, web } from "./oauth-helpers";

async function formSignIn(email: string, password: string, ip: string) {
  const jar = new Jar();
  const form = await web("/auth/sign_in", { jar, ip });
  return web("/auth/sign_in", { jar, ip, form: { email, password, csrf: hidden(form.text_, "csrf")!, return_to: "/" }, headers: { origin: ORIGIN } });
}

/** One fresh address per call (100.64.0.0/10), as a botnet would send them. */
let ipSeq = 0;
const nextIp = () => `100.${64 + Math.floor(++ipSeq / 250)}.${Math.floor(ipSeq / 10) % 250}.${ipSeq % 250}`;

describe("per-e-mail failures do not lock the owner out", () => {
  it("after 25 wrong passwords from rotating addresses, the right one still signs in (form and grant); wrong ones are 429", async () => {
    const u = await makeUser("lockvictim");
    const email = `${u.username}@example.com`;
    const app = await registerApp();
    const grant = (password: string, ip: string) =>
      tokenRequest({ grant_type: "password", client_id: app.client_id, client_secret: app.client_secret, username: email, password, scope: "read" }, { ip });

    for (let i = 0; i < 25; i++) {
      if (i % 2) expect((await formSignIn(email, `guess ${i}`, nextIp())).status).toBe(401);
      else expect((await grant(`guess ${i}`, nextIp())).status).toBe(400);
    }
    // The 26th failure is throttled, from the form and from the grant.
    expect((await formSignIn(email, "guess 26", nextIp())).status).toBe(429);
    const g = await grant("guess 27", nextIp());
    expect(g.status).toBe(429);
    expect(g.body).toEqual({ error: "Too many requests" });

    // The owner, from anywhere, with the right password.
    const ok = await formSignIn(email.toUpperCase(), PASSWORD, nextIp());
    expect(ok.status).toBe(303);
    expect(ok.headers.getSetCookie().join(";")).toMatch(/session/i);
    const token = await grant(PASSWORD, nextIp());
    expect(token.status).toBe(200);
    expect(token.body.access_token).toBeTruthy();
  });

  it("successful sign-ins never use up the e-mail's budget", async () => {
    const u = await makeUser("lockbusy");
    const email = `${u.username}@example.com`;
    const app = await registerApp();
    for (let i = 0; i < 26; i++) {
      const t = await tokenRequest(
        { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret, username: email, password: PASSWORD, scope: "read" },
        { ip: nextIp() },
      );
      expect(t.status, `sign-in ${i + 1}`).toBe(200);
    }
    // A typo after 26 successes is an ordinary failure, not a 429.
    expect((await formSignIn(email, "typo", nextIp())).status).toBe(401);
  });

  it("the per-IP budget still refuses everything from one address, the right password included", async () => {
    const u = await makeUser("lockip");
    const ip = "192.0.2.77";
    for (let i = 0; i < 25; i++) expect((await formSignIn(`someone${i}@example.com`, "x", ip)).status).toBe(401);
    expect((await formSignIn(`${u.username}@example.com`, PASSWORD, ip)).status).toBe(429);
    expect((await formSignIn(`${u.username}@example.com`, PASSWORD, "192.0.2.78")).status).toBe(303);
  });
});
