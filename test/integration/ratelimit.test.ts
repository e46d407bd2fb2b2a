// Rate limits in the RateLimiter Durable Object: login per IP and per e-mail (B11), spoofed forwarding headers (B12).
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/context";
import { clientIp } from "../../src/http/rate-limit";
import { ORIGIN, makeUser } from "./helpers";
import { Jar, hidden, registerApp, tokenRequest, web } from "./oauth-helpers";

async function formAttempt(email: string, ip: string, extraHeaders: Record<string, string> = {}) {
  const jar = new Jar();
  const form = await web("/auth/sign_in", { jar, ip });
  return web("/auth/sign_in", {
    jar,
    ip,
    form: { email, password: "wrong password", csrf: hidden(form.text_, "csrf")!, return_to: "/" },
    headers: { origin: ORIGIN, ...extraHeaders },
  });
}

describe("login throttles", () => {
  it("B11 + B12: the 26th sign-in from one IP in 5 minutes is 429, whatever X-Forwarded-For says", async () => {
    const ip = "203.0.113.50";
    for (let i = 0; i < 25; i++) {
      // Each attempt uses another e-mail, so only the per-IP rule can trip.
      const r = await formAttempt(`nobody${i}@example.com`, ip, { "x-forwarded-for": `10.1.0.${i}`, "client-ip": `::${i + 1}`, "x-real-ip": `10.2.0.${i}` });
      expect(r.status).toBe(401);
    }
    const blocked = await formAttempt("nobody-final@example.com", ip, { "x-forwarded-for": "127.0.0.1" });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("x-ratelimit-limit")).toBe("25");
    expect(blocked.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Date.parse(blocked.headers.get("x-ratelimit-reset")!)).toBeGreaterThan(Date.now());
    expect(blocked.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    // The password grant draws from the same per-IP budget.
    const app = await registerApp();
    const grant = await tokenRequest(
      { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret, username: "x@example.com", password: "y" },
      { ip },
    );
    expect(grant.status).toBe(429);
    expect(grant.body).toEqual({ error: "Too many requests" });
    // Another IP is unaffected.
    expect((await formAttempt("nobody@example.com", "203.0.113.51")).status).toBe(401);
  });

  it("B11: the 26th failed attempt for one e-mail in an hour is 429, even from rotating IPs", async () => {
    const u = await makeUser("targeted");
    const email = `${u.username}@example.com`;
    const app = await registerApp();
    for (let i = 0; i < 25; i++) {
      const ip = `198.18.${Math.floor(i / 10)}.${i}`;
      // Mix the form and the password grant: both count for the e-mail.
      if (i % 2) {
        expect((await formAttempt(email.toUpperCase(), ip)).status).toBe(401);
      } else {
        const t = await tokenRequest(
          { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret, username: email, password: "nope" },
          { ip },
        );
        expect(t.status).toBe(400);
      }
    }
    const blocked = await formAttempt(email, "198.18.9.9");
    expect(blocked.status).toBe(429);
    // The right password still signs in: only failures count per e-mail (hardening-login-lockout.test.ts).
    const jar = new Jar();
    const form = await web("/auth/sign_in", { jar, ip: "198.18.9.10" });
    const right = await web("/auth/sign_in", {
      jar,
      ip: "198.18.9.10",
      form: { email, password: "correct horse battery staple", csrf: hidden(form.text_, "csrf")!, return_to: "/" },
      headers: { origin: ORIGIN },
    });
    expect(right.status).toBe(303);
  });
});

describe("clientIp", () => {
  const ctx = (headers: Record<string, string>) => ({ req: { header: (n: string) => headers[n.toLowerCase()] } }) as unknown as Ctx;

  it("uses CF-Connecting-IP only", () => {
    expect(clientIp(ctx({ "cf-connecting-ip": "192.0.2.1", "x-forwarded-for": "10.0.0.1" }))).toBe("192.0.2.1");
    expect(clientIp(ctx({ "x-forwarded-for": "10.0.0.1" }))).toBe("unknown");
  });

  it("groups IPv6 by /64 whatever the spelling", () => {
    const a = clientIp(ctx({ "cf-connecting-ip": "2001:db8:1:2::1" }));
    const b = clientIp(ctx({ "cf-connecting-ip": "2001:0db8:0001:0002:ffff:0:0:9" }));
    const c = clientIp(ctx({ "cf-connecting-ip": "2001:db8:1:3::1" }));
    expect(a).toBe("2001:db8:1:2::/64");
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(clientIp(ctx({ "cf-connecting-ip": "::1" }))).toBe("0:0:0:0::/64");
  });
});
