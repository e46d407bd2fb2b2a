// Authorization code flow through the HTML forms, with PKCE, and the security rows B5, B7, B8, B9.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, api, makeUser } from "./helpers";
import { Jar, PASSWORD, approve, authorizeUrl, codeFrom, hidden, pkce, registerApp, signIn, tokenRequest, web } from "./oauth-helpers";

describe("authorization code flow", () => {
  it("signs in, consents and exchanges the code (PKCE S256)", async () => {
    const u = await makeUser("flowuser");
    const app = await registerApp();
    const { verifier, challenge } = await pkce();
    const jar = new Jar();

    const authPath = authorizeUrl(app, { state: "st@te/1", code_challenge: challenge, code_challenge_method: "S256" });
    const signInPage = await web(authPath, { jar, ip: "203.0.113.1" });
    expect(signInPage.status).toBe(200);
    expect(signInPage.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(signInPage.headers.get("x-frame-options")).toBe("DENY");
    const html = signInPage.text_;
    expect(html).toMatch(/<form method="post" action="\/auth\/sign_in">/);
    expect(html).toMatch(/name="email"/);
    expect(html).toMatch(/name="password"/);
    expect(html).toMatch(/<button type="submit">Sign in<\/button>/);
    const returnTo = hidden(html, "return_to")!;
    expect(returnTo).toBe(authPath);

    const signed = await web("/auth/sign_in", {
      jar,
      ip: "203.0.113.1",
      form: { email: `${u.username}@example.com`, password: PASSWORD, csrf: hidden(html, "csrf")!, return_to: returnTo },
      headers: { origin: ORIGIN },
    });
    expect(signed.status).toBe(303);
    expect(signed.headers.get("location")).toBe(returnTo);
    const setCookie = signed.headers.getSetCookie().find((c) => c.startsWith("tern_session="))!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    // Stored hashed: the cookie value is not in D1.
    const sid = jar.cookies.get("tern_session")!;
    const raw = await env.DB.prepare("SELECT count(*) AS n FROM web_sessions WHERE id_hash = ?").bind(sid).first<{ n: number }>();
    expect(raw!.n).toBe(0);

    const consent = await web(returnTo, { jar });
    expect(consent.status).toBe(200);
    expect(consent.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const c = consent.text_;
    expect(c).toMatch(/<form method="post" action="\/oauth\/authorize">/);
    expect(c).toMatch(/<button type="submit" name="decision" value="approve">\s*Authorize\s*<\/button>/);
    expect(c).toMatch(/<button type="submit" name="decision" value="deny"[^>]*>\s*Deny\s*<\/button>/);
    expect(hidden(c, "client_id")).toBe(app.client_id);
    expect(hidden(c, "redirect_uri")).toBe(app.redirect_uri);
    expect(hidden(c, "state")).toBe("st@te/1");
    expect(hidden(c, "code_challenge")).toBe(challenge);
    expect(hidden(c, "code_challenge_method")).toBe("S256");
    expect(hidden(c, "response_type")).toBe("code");
    expect(hidden(c, "scope")).toBe("read write");

    const res = await approve(jar, app, { state: "st@te/1", code_challenge: challenge, code_challenge_method: "S256" });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe("https://app.example/cb");
    expect(loc.searchParams.get("state")).toBe("st@te/1");
    const code = loc.searchParams.get("code")!;
    expect(code.length).toBeGreaterThan(30);

    const t = await tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: app.redirect_uri,
      client_id: app.client_id,
      client_secret: app.client_secret,
      code_verifier: verifier,
    });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ token_type: "Bearer", scope: "read write" });
    expect(typeof t.body.access_token).toBe("string");
    expect(typeof t.body.created_at).toBe("number");
    const vc = await api(t.body.access_token).get("/api/v1/apps/verify_credentials");
    expect(vc.status).toBe(200);
    expect(vc.body.name).toBe("Flow App");
  });

  it("accepts JSON token requests without PKCE (Elk)", async () => {
    const u = await makeUser("elkuser");
    const app = await registerApp("https://elk.example/api/oauth/x");
    const jar = await signIn(`${u.username}@example.com`);
    const res = await approve(jar, app);
    expect(res.status).toBe(302);
    const t = await tokenRequest(
      {
        grant_type: "authorization_code",
        code: codeFrom(res.headers.get("location")),
        redirect_uri: app.redirect_uri,
        client_id: app.client_id,
        client_secret: app.client_secret,
        scope: "read write",
      },
      { form: false },
    );
    expect(t.status).toBe(200);
  });

  it("keeps the registered query and supports custom schemes", async () => {
    const u = await makeUser("ivoryuser");
    const app = await registerApp("com.tapbots.Ivory.19:/request_token?x=1");
    const jar = await signIn(`${u.username}@example.com`);
    const res = await approve(jar, app, { state: "s" });
    expect(res.headers.get("location")).toMatch(/^com\.tapbots\.Ivory\.19:\/request_token\?x=1&code=[^&]+&state=s$/);
  });

  it("redirects with access_denied when the user denies", async () => {
    const u = await makeUser("denier");
    const app = await registerApp();
    const jar = await signIn(`${u.username}@example.com`);
    const consent = await web(authorizeUrl(app, { state: "abc" }), { jar });
    const fields: Record<string, string> = { decision: "deny" };
    for (const n of ["client_id", "redirect_uri", "scope", "state", "response_type", "csrf"]) fields[n] = hidden(consent.text_, n)!;
    const res = await web("/oauth/authorize", { jar, form: fields, headers: { origin: ORIGIN } });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.searchParams.get("error")).toBe("access_denied");
    expect(loc.searchParams.get("state")).toBe("abc");
    expect(loc.searchParams.get("code")).toBeNull();
  });

  it("shows the code on a page for the out-of-band redirect URI", async () => {
    const u = await makeUser("oobuser");
    const app = await registerApp("urn:ietf:wg:oauth:2.0:oob");
    const jar = await signIn(`${u.username}@example.com`);
    const res = await approve(jar, app);
    expect(res.status).toBe(200);
    const m = /id="authorization-code">([^<]+)</.exec(res.text_);
    expect(m).not.toBeNull();
    const t = await tokenRequest({
      grant_type: "authorization_code",
      code: m![1],
      redirect_uri: app.redirect_uri,
      client_id: app.client_id,
      client_secret: app.client_secret,
    });
    expect(t.status).toBe(200);
  });

  it("supports response_mode=fragment and form_post", async () => {
    const u = await makeUser("modes");
    const app = await registerApp();
    const jar = await signIn(`${u.username}@example.com`);
    const frag = await approve(jar, app, { response_mode: "fragment", state: "f" });
    expect(frag.status).toBe(302);
    const loc = frag.headers.get("location")!;
    expect(loc).toMatch(/^https:\/\/app\.example\/cb#code=[^&]+&state=f$/);
    const post = await approve(jar, app, { response_mode: "form_post", state: "p" });
    expect(post.status).toBe(200);
    expect(post.text_).toContain('<form method="post" action="https://app.example/cb"');
    expect(hidden(post.text_, "state")).toBe("p");
    expect(hidden(post.text_, "code")!.length).toBeGreaterThan(30);
    const nonce = /<script nonce="([^"]+)">/.exec(post.text_)![1];
    expect(post.headers.get("content-security-policy")).toContain(`script-src 'nonce-${nonce}'`);
  });

  it("force_login=true shows the sign-in form even with a session, and returns without it", async () => {
    const u = await makeUser("forced");
    const app = await registerApp();
    const jar = await signIn(`${u.username}@example.com`);
    const res = await web(authorizeUrl(app, { force_login: "true" }), { jar });
    expect(res.status).toBe(200);
    expect(res.text_).toContain('action="/auth/sign_in"');
    expect(hidden(res.text_, "return_to")).not.toContain("force_login");
    const withoutForce = await web(authorizeUrl(app), { jar });
    expect(withoutForce.text_).toContain('value="approve"');
  });

  it("grants only scopes the app registered (invalid_scope back to the client)", async () => {
    const u = await makeUser("scoper");
    const app = await registerApp("https://app.example/cb", "read");
    const jar = await signIn(`${u.username}@example.com`);
    const res = await web(authorizeUrl(app, { scope: "read write", state: "q" }), { jar });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.searchParams.get("error")).toBe("invalid_scope");
    expect(loc.searchParams.get("state")).toBe("q");
  });
});

describe("B5: redirect_uri must match exactly", () => {
  it.each([
    ["prefix", "https://app.example/cb.evil.com"],
    ["traversal", "https://app.example/cb/../x"],
    ["case", "https://APP.example/cb"],
    ["path case", "https://app.example/CB"],
    ["trailing slash", "https://app.example/cb/"],
    ["added query", "https://app.example/cb?x=1"],
    ["other host", "https://evil.example/cb"],
  ])("%s -> error page, no redirect", async (_label, uri) => {
    const app = await registerApp();
    const res = await web(authorizeUrl({ ...app, redirect_uri: uri }));
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.text_).toContain("invalid_redirect_uri");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
  });

  it("unknown client -> error page, no redirect", async () => {
    const res = await web(`/oauth/authorize?client_id=nope&redirect_uri=${encodeURIComponent("https://app.example/cb")}&response_type=code`);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.text_).toContain("invalid_client");
  });

  it("a tampered redirect_uri in the consent POST is refused too", async () => {
    const u = await makeUser("tamper");
    const app = await registerApp();
    const jar = await signIn(`${u.username}@example.com`);
    const consent = await web(authorizeUrl(app), { jar });
    const fields: Record<string, string> = { decision: "approve" };
    for (const n of ["client_id", "scope", "state", "response_type", "csrf"]) fields[n] = hidden(consent.text_, n)!;
    fields.redirect_uri = "https://evil.example/steal";
    const res = await web("/oauth/authorize", { jar, form: fields, headers: { origin: ORIGIN } });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });
});

describe("B7: authorization codes", () => {
  async function codeFor(username: string, app?: Awaited<ReturnType<typeof registerApp>>) {
    const u = await makeUser(username);
    app ??= await registerApp();
    const jar = await signIn(`${u.username}@example.com`);
    const res = await approve(jar, app);
    return { app, code: codeFrom(res.headers.get("location")) };
  }
  const exchange = (app: { client_id: string; client_secret: string; redirect_uri: string }, code: string, extra: Record<string, string> = {}) =>
    tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: app.redirect_uri,
      client_id: app.client_id,
      client_secret: app.client_secret,
      ...extra,
    });

  it("a code used twice fails and revokes the token from the first exchange", async () => {
    const { app, code } = await codeFor("twice");
    const first = await exchange(app, code);
    expect(first.status).toBe(200);
    expect((await api(first.body.access_token).get("/api/v1/apps/verify_credentials")).status).toBe(200);
    const second = await exchange(app, code);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    expect(second.body.error_description).toMatch(/authorization grant is invalid/);
    expect((await api(first.body.access_token).get("/api/v1/apps/verify_credentials")).status).toBe(401);
  });

  it("a code is bound to its client", async () => {
    const { app, code } = await codeFor("otherclient");
    const other = await registerApp();
    const res = await exchange(other, code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
    expect((await exchange(app, code)).status).toBe(200);
  });

  it("a code is bound to its redirect_uri", async () => {
    const registered = await registerApp("https://app.example/cb\nhttps://app.example/other");
    const app = { ...registered, redirect_uri: "https://app.example/cb" };
    const { code } = await codeFor("redirectbound", app);
    const res = await exchange({ ...app, redirect_uri: "https://app.example/other" }, code);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("a code expires after 10 minutes", async () => {
    const { app, code } = await codeFor("expired");
    await env.DB.prepare("UPDATE oauth_access_grants SET expires_at = ?")
      .bind(Date.now() - 1)
      .run();
    const res = await exchange(app, code);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("codes are stored hashed", async () => {
    const { code } = await codeFor("hashedcode");
    const row = await env.DB.prepare("SELECT count(*) AS n FROM oauth_access_grants WHERE code_hash = ?").bind(code).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });
});

describe("B8: PKCE is S256 only", () => {
  it("code_challenge_method=plain -> invalid_request back to the client", async () => {
    const u = await makeUser("plainer");
    const app = await registerApp();
    const jar = await signIn(`${u.username}@example.com`);
    const res = await web(authorizeUrl(app, { code_challenge: "a".repeat(43), code_challenge_method: "plain", state: "p" }), { jar });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.searchParams.get("error")).toBe("invalid_request");
    expect(loc.searchParams.get("state")).toBe("p");
  });

  it("a wrong or missing code_verifier -> invalid_grant", async () => {
    const u = await makeUser("verifier");
    const app = await registerApp();
    const { verifier, challenge } = await pkce();
    const jar = await signIn(`${u.username}@example.com`);
    const res = await approve(jar, app, { code_challenge: challenge, code_challenge_method: "S256" });
    const code = codeFrom(res.headers.get("location"));
    const base = { grant_type: "authorization_code", code, redirect_uri: app.redirect_uri, client_id: app.client_id, client_secret: app.client_secret };
    const other = await pkce();
    expect((await tokenRequest({ ...base, code_verifier: other.verifier })).body.error).toBe("invalid_grant");
    expect((await tokenRequest(base)).body.error).toBe("invalid_grant");
    // Failed verifications do not burn the code for the legitimate client.
    expect((await tokenRequest({ ...base, code_verifier: verifier })).status).toBe(200);
  });
});

describe("B9: CSRF and framing", () => {
  async function consentFields(username: string) {
    const u = await makeUser(username);
    const app = await registerApp();
    const jar = await signIn(`${u.username}@example.com`);
    const consent = await web(authorizeUrl(app), { jar });
    const fields: Record<string, string> = { decision: "approve" };
    for (const n of ["client_id", "redirect_uri", "scope", "state", "response_type", "csrf"]) fields[n] = hidden(consent.text_, n)!;
    return { jar, fields };
  }

  it("consent POST without the CSRF token -> 403, no code", async () => {
    const { jar, fields } = await consentFields("nocsrf");
    delete fields.csrf;
    const res = await web("/oauth/authorize", { jar, form: fields, headers: { origin: ORIGIN } });
    expect(res.status).toBe(403);
    expect(res.headers.get("location")).toBeNull();
  });

  it("consent POST with a wrong CSRF token -> 403", async () => {
    const { jar, fields } = await consentFields("badcsrf");
    const res = await web("/oauth/authorize", { jar, form: { ...fields, csrf: "x".repeat(43) }, headers: { origin: ORIGIN } });
    expect(res.status).toBe(403);
  });

  it("consent POST from a foreign Origin -> 403 even with the token", async () => {
    const { jar, fields } = await consentFields("foreignorigin");
    const res = await web("/oauth/authorize", { jar, form: fields, headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    const nullOrigin = await web("/oauth/authorize", { jar, form: fields, headers: { origin: "null" } });
    expect(nullOrigin.status).toBe(403);
  });

  it("consent POST without a session -> 403", async () => {
    const { fields } = await consentFields("nosession");
    const res = await web("/oauth/authorize", { form: fields, headers: { origin: ORIGIN } });
    expect(res.status).toBe(403);
  });

  it("sign-in POST without the double-submit cookie or from a foreign Origin -> 403", async () => {
    const u = await makeUser("csrfsignin");
    const jar = new Jar();
    const form = await web("/auth/sign_in", { jar });
    const csrf = hidden(form.text_, "csrf")!;
    const creds = { email: `${u.username}@example.com`, password: PASSWORD, csrf, return_to: "/" };
    expect((await web("/auth/sign_in", { form: creds, headers: { origin: ORIGIN } })).status).toBe(403);
    expect((await web("/auth/sign_in", { jar, form: creds, headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect((await web("/auth/sign_in", { jar, form: { ...creds, csrf: "" }, headers: { origin: ORIGIN } })).status).toBe(403);
    expect((await web("/auth/sign_in", { jar, form: creds, headers: { origin: ORIGIN } })).status).toBe(303);
  });

  it("sign-in only returns to same-origin paths", async () => {
    const u = await makeUser("openredirect");
    for (const target of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]) {
      const jar = new Jar();
      const form = await web("/auth/sign_in", { jar });
      const res = await web("/auth/sign_in", {
        jar,
        form: { email: `${u.username}@example.com`, password: PASSWORD, csrf: hidden(form.text_, "csrf")!, return_to: target },
        headers: { origin: ORIGIN },
      });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/");
    }
  });

  it("a wrong password re-renders the form with an error", async () => {
    const u = await makeUser("wrongpw");
    const jar = new Jar();
    const form = await web("/auth/sign_in", { jar });
    const res = await web("/auth/sign_in", {
      jar,
      form: { email: `${u.username}@example.com`, password: "nope nope nope", csrf: hidden(form.text_, "csrf")!, return_to: "/" },
      headers: { origin: ORIGIN },
    });
    expect(res.status).toBe(401);
    expect(res.text_).toContain("Invalid e-mail address or password.");
    expect(jar.cookies.has("tern_session")).toBe(false);
  });

  it("sign-out needs the session's CSRF token and ends the session", async () => {
    const u = await makeUser("signout");
    const jar = await signIn(`${u.username}@example.com`);
    const landing = await web("/", { jar });
    expect(landing.text_).toContain("@signout");
    const csrf = hidden(landing.text_, "csrf")!;
    expect((await web("/auth/sign_out", { jar, form: { csrf: "wrong" }, headers: { origin: ORIGIN } })).status).toBe(403);
    const out = await web("/auth/sign_out", { jar, form: { csrf }, headers: { origin: ORIGIN } });
    expect(out.status).toBe(303);
    const after = await web("/", { jar });
    expect(after.text_).not.toContain("@signout");
  });
});
