// Security (outside review, F6): every check of an account's password or code outside sign-in's password step counts
// against the sign-in budgets, per account (whatever the IP) and per IP, through one function
// (src/oauth/credentials.ts). For each site: the budget's worth of wrong guesses from rotating addresses
// (CF-Connecting-IP), then the right password is refused with 429; a spent per-IP budget refuses it too; and the right
// password in a request refused for another reason answers exactly as a wrong one (the other checks come first).
import { beforeEach, describe, expect, it } from "vitest";
import { ACCOUNT_OTP_FAILURE_LIMIT, ACCOUNT_PASSWORD_FAILURE_LIMIT, LOGIN_IP_LIMIT } from "../../src/http/rate-limit";
import { makeUser, ORIGIN, type TestUser } from "./helpers";
import { hidden, type Jar, PASSWORD, web } from "./oauth-helpers";
import { installQueueCapture } from "./queues";
import { codeFor, enableTwoFactor, signedIn } from "./settings-helpers";

beforeEach(() => installQueueCapture());

const GUESSES = ACCOUNT_PASSWORD_FAILURE_LIMIT.limit;
const CODE_GUESSES = ACCOUNT_OTP_FAILURE_LIMIT.limit;

/** One fresh address per call (100.112.0.0/12), as a botnet would send them. */
let ipSeq = 0;
const nextIp = () => `100.${112 + Math.floor(++ipSeq / 62_500)}.${Math.floor(ipSeq / 250) % 250}.${ipSeq % 250}`;

/** The API helper has no per-request IP: a small fetch of our own. */
async function migrateFrom(u: TestUser, acct: string, password: string, ip = nextIp()) {
  const res = await web("/api/tern/migration", {
    json: { acct, current_password: password },
    headers: { authorization: `Bearer ${u.token}` },
    ip,
  });
  return { status: res.status, text: res.text_, headers: res.headers };
}

/** A local account that lists `u` as an alias: a valid target to move `u` to (no remote fetch). */
async function aliasTarget(u: TestUser): Promise<TestUser> {
  const b = await makeUser(`${u.username}new`);
  expect((await b.api.post("/api/tern/aliases", { acct: u.username })).status).toBe(200);
  return b;
}

/** A settings form POST with the session's CSRF token, from `ip`. */
async function settingsPost(jar: Jar, path: string, form: Record<string, string>, ip = nextIp(), csrfPath = "/settings/profile") {
  const csrf = hidden((await web(csrfPath, { jar })).text_, "csrf")!;
  return web(path, { jar, ip, form: { csrf, ...form }, headers: { origin: ORIGIN } });
}

/** Spends `ip`'s sign-in budget with wrong sign-ins of strangers. */
async function spendIp(ip: string) {
  for (let i = 0; i < LOGIN_IP_LIMIT.limit; i++) {
    const r = await web("/oauth/token", {
      ip,
      form: { grant_type: "password", client_id: "x", client_secret: "y", username: `nobody${i}@example.com`, password: "x" },
    });
    expect(r.status).not.toBe(429);
  }
}

/** The error box of a settings page. */
const errorOf = (html: string) => /<p class="error" role="alert">([\s\S]*?)<\/p>/.exec(html)?.[1] ?? null;

describe("POST /api/tern/migration (F6)", () => {
  it("after the budget's wrong passwords from rotating addresses, the right password is refused (429) and nothing moves", async () => {
    const a = await makeUser("pcmig");
    const b = await aliasTarget(a);
    for (let i = 0; i < GUESSES; i++) {
      const wrong = await migrateFrom(a, b.username, `guess ${i}`);
      expect(wrong.status, `guess ${i + 1}`).toBe(422);
      expect(JSON.parse(wrong.text).error).toMatch(/Current password is invalid/);
    }
    const right = await migrateFrom(a, b.username, PASSWORD);
    expect(right.status).toBe(429);
    expect(JSON.parse(right.text)).toEqual({ error: "Too many requests" });
    expect(right.headers.get("retry-after")).toBeTruthy();
    expect((await a.api.get("/api/tern/migration")).body.moved_to).toBeNull();
  });

  it("a spent per-IP sign-in budget refuses the right password from that address", async () => {
    const a = await makeUser("pcmigip");
    const b = await aliasTarget(a);
    await spendIp("192.0.2.140");
    expect((await migrateFrom(a, b.username, PASSWORD, "192.0.2.140")).status).toBe(429);
    expect((await a.api.get("/api/tern/migration")).body.moved_to).toBeNull();
  });

  it("the right password with an invalid target answers exactly as a wrong one", async () => {
    const a = await makeUser("pcmigeq");
    const c = await makeUser("pcmignoalias");
    for (const acct of ["", c.username, "pcmigeq", "nobody-here"]) {
      const wrong = await migrateFrom(a, acct, "not the password");
      const right = await migrateFrom(a, acct, PASSWORD);
      expect(right.status, acct).toBe(wrong.status);
      expect(right.text, acct).toBe(wrong.text);
      expect(right.status, acct).toBe(422);
      expect(right.text, acct).not.toMatch(/password/i);
    }
  });
});

describe("settings pages (F6)", () => {
  const SITES: {
    name: string;
    path: string;
    csrfPath: string;
    /** A request that would succeed with `password`. */
    valid: (password: string, ctx: { target: string }) => Record<string, string>;
    /** A request refused for another reason than the password. */
    invalid: (password: string, ctx: { target: string }) => Record<string, string>;
    owner?: boolean;
  }[] = [
    {
      name: "/settings/migration",
      path: "/settings/migration",
      csrfPath: "/settings/migration",
      valid: (p, x) => ({ acct: x.target, current_password: p }),
      invalid: (p) => ({ acct: "", current_password: p }),
    },
    {
      name: "/auth/edit/password",
      path: "/auth/edit/password",
      csrfPath: "/auth/edit",
      valid: (p) => ({ current_password: p, password: "a new long password", password_confirmation: "a new long password" }),
      invalid: (p) => ({ current_password: p, password: "short", password_confirmation: "short" }),
    },
    {
      name: "/auth/edit/email",
      path: "/auth/edit/email",
      csrfPath: "/auth/edit",
      valid: (p) => ({ email: "moved-away@example.org", current_password: p }),
      invalid: (p) => ({ email: "not an address", current_password: p }),
    },
    {
      name: "/settings/delete",
      path: "/settings/delete",
      csrfPath: "/settings/delete",
      valid: (p) => ({ password: p }),
      // The owner's account cannot be deleted here, whatever the password.
      invalid: (p) => ({ password: p }),
      owner: true,
    },
  ];

  for (const site of SITES) {
    it(`${site.name}: the budget's wrong passwords from rotating addresses, then the right one is refused (429)`, async () => {
      const u = await makeUser(`pc${site.name.replace(/\W/g, "").slice(0, 12)}`);
      const target = site.path === "/settings/migration" ? (await aliasTarget(u)).username : "";
      const jar = await signedIn(u.username);
      for (let i = 0; i < GUESSES; i++) {
        const wrong = await settingsPost(jar, site.path, site.valid(`guess ${i}`, { target }), nextIp(), site.csrfPath);
        expect(wrong.status, `guess ${i + 1}`).toBe(422);
      }
      const right = await settingsPost(jar, site.path, site.valid(PASSWORD, { target }), nextIp(), site.csrfPath);
      expect(right.status).toBe(429);
      expect(right.text_).toContain("Too many attempts");
      expect(right.headers.get("retry-after")).toBeTruthy();
      // Nothing changed: the session still works and the old password still signs in.
      expect((await web("/settings/profile", { jar })).status).toBe(200);
      await signedIn(u.username, PASSWORD, nextIp());
    });

    it(`${site.name}: the right password in a request refused for another reason answers exactly as a wrong one`, async () => {
      const u = await makeUser(`pq${site.name.replace(/\W/g, "").slice(0, 12)}`, site.owner ? { roleId: "3" } : {});
      const jar = await signedIn(u.username);
      const wrong = await settingsPost(jar, site.path, site.invalid("not the password", { target: "" }), nextIp(), site.csrfPath);
      const right = await settingsPost(jar, site.path, site.invalid(PASSWORD, { target: "" }), nextIp(), site.csrfPath);
      expect(wrong.status).toBeGreaterThanOrEqual(400);
      expect(errorOf(wrong.text_)).toBeTruthy();
      expect(right.status).toBe(wrong.status);
      expect(errorOf(right.text_)).toBe(errorOf(wrong.text_));
      expect(right.text_).toBe(wrong.text_);
    });
  }

  it("a spent per-IP sign-in budget refuses the right password from that address (/auth/edit/password)", async () => {
    const u = await makeUser("pcipweb");
    const jar = await signedIn(u.username);
    await spendIp("192.0.2.141");
    const res = await settingsPost(
      jar,
      "/auth/edit/password",
      { current_password: PASSWORD, password: "a new long password", password_confirmation: "a new long password" },
      "192.0.2.141",
      "/auth/edit",
    );
    expect(res.status).toBe(429);
    await signedIn(u.username, PASSWORD, nextIp());
  });

  it("one budget per account across the sites and the API", async () => {
    const u = await makeUser("pcshared");
    const target = await aliasTarget(u);
    const jar = await signedIn(u.username);
    for (let i = 0; i < GUESSES; i++) {
      const r =
        i % 3 === 0
          ? await settingsPost(jar, "/settings/delete", { password: `g${i}` }, nextIp(), "/settings/delete")
          : i % 3 === 1
            ? await settingsPost(jar, "/auth/edit/email", { email: "x@example.org", current_password: `g${i}` }, nextIp(), "/auth/edit")
            : await migrateFrom(u, target.username, `g${i}`);
      expect(r.status).toBe(422);
    }
    expect((await migrateFrom(u, target.username, PASSWORD)).status).toBe(429);
    expect((await settingsPost(jar, "/settings/delete", { password: PASSWORD }, nextIp(), "/settings/delete")).status).toBe(429);
  });
});

describe("two-factor settings (F6)", () => {
  it("turning two-factor off: wrong guesses, then the right password and code are refused (429)", async () => {
    const u = await makeUser("pc2faoff");
    const jar = await signedIn(u.username);
    const { secret } = await enableTwoFactor(jar, u.userId);
    const path = "/settings/two_factor_authentication_methods/disable";
    const csrfPath = "/settings/otp_authentication";
    for (let i = 0; i < CODE_GUESSES; i++) {
      const wrong = await settingsPost(jar, path, { current_password: `guess ${i}`, otp_attempt: String(300000 + i) }, nextIp(), csrfPath);
      expect(wrong.status, `guess ${i + 1}`).toBe(422);
    }
    const right = await settingsPost(jar, path, { current_password: PASSWORD, otp_attempt: await codeFor(secret) }, nextIp(), csrfPath);
    expect(right.status).toBe(429);
    expect((await web(csrfPath, { jar })).text_).not.toContain("Two-factor authentication is off.");
  });

  it("turning two-factor off: the right password with a wrong code answers exactly as a wrong password", async () => {
    const u = await makeUser("pc2faeq");
    const jar = await signedIn(u.username);
    await enableTwoFactor(jar, u.userId);
    const path = "/settings/two_factor_authentication_methods/disable";
    const csrfPath = "/settings/otp_authentication";
    const wrong = await settingsPost(jar, path, { current_password: "not the password", otp_attempt: "000000" }, nextIp(), csrfPath);
    const right = await settingsPost(jar, path, { current_password: PASSWORD, otp_attempt: "000000" }, nextIp(), csrfPath);
    expect(wrong.status).toBe(422);
    expect(right.status).toBe(wrong.status);
    expect(right.text_).toBe(wrong.text_);
  });

  it("new recovery codes: wrong codes from rotating addresses, then the right code is refused (429)", async () => {
    const u = await makeUser("pcregen");
    const jar = await signedIn(u.username);
    const { secret } = await enableTwoFactor(jar, u.userId);
    const path = "/settings/two_factor_authentication/recovery_codes";
    const csrfPath = "/settings/otp_authentication";
    for (let i = 0; i < CODE_GUESSES; i++) expect((await settingsPost(jar, path, { otp_attempt: String(400000 + i) }, nextIp(), csrfPath)).status).toBe(422);
    const right = await settingsPost(jar, path, { otp_attempt: await codeFor(secret) }, nextIp(), csrfPath);
    expect(right.status).toBe(429);
    expect(right.text_).not.toMatch(/<li>[0-9a-f]{16}<\/li>/);
  });
});
