// HTML pages: landing, sign-in, first-owner setup (takeover prevention), public profile and status pages.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { buildApp } from "../../src/app";
import { describe, expect, it } from "vitest";
import { statuses } from "../../src/db/schema";
import { snowflake } from "../../src/lib/text/ids";
import { ORIGIN, db, makeUser } from "./helpers";
import { Jar, hidden, web } from "./oauth-helpers";

function expectPageHeaders(res: Response) {
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect(res.headers.get("content-security-policy")).toContain("script-src 'none'");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
}

async function postStatus(accountId: string, username: string, visibility: "public" | "unlisted" | "private" | "direct", content: string, spoiler = "") {
  const id = snowflake();
  await db()
    .insert(statuses)
    .values({
      id,
      uri: `${ORIGIN}/users/${username}/statuses/${id}`,
      url: `${ORIGIN}/@${username}/${id}`,
      accountId,
      local: true,
      text: content,
      content: `<p>${content.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</p>`,
      spoilerText: spoiler,
      visibility,
      createdAt: Date.now(),
      updatedAt: Date.now(),
    });
  return id;
}

describe("landing and sign-in pages", () => {
  it("GET / shows the instance and a sign-in link", async () => {
    const res = await web("/");
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    expect(res.text_).toContain("<title>Tern</title>");
    expect(res.text_).toContain('href="/auth/sign_in"');
  });

  it("GET /auth/sign_in renders the form and sets the CSRF cookie", async () => {
    const jar = new Jar();
    const res = await web("/auth/sign_in?return_to=/@someone", { jar });
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    expect(res.text_).toMatch(/<form method="post" action="\/auth\/sign_in">/);
    expect(hidden(res.text_, "return_to")).toBe("/@someone");
    expect(hidden(res.text_, "csrf")).toBe(jar.cookies.get("tern_csrf"));
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("tern_csrf="))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);
  });

  it("uses Secure __Host- cookies over https", async () => {
    const res = await web("https://tern.test/auth/sign_in");
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-tern_csrf="));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Domain=/i);
  });

  it("refuses a signed-in session for a user disabled afterwards", async () => {
    const u = await makeUser("laterdisabled");
    const jar = new Jar();
    const form = await web("/auth/sign_in", { jar });
    await web("/auth/sign_in", {
      jar,
      form: { email: `${u.username}@example.com`, password: "correct horse battery staple", csrf: hidden(form.text_, "csrf")!, return_to: "/" },
      headers: { origin: ORIGIN },
    });
    expect((await web("/", { jar })).text_).toContain("@laterdisabled");
    await env.DB.prepare("UPDATE users SET disabled = 1 WHERE id = ?").bind(u.userId.padStart(20, "0")).run();
    expect((await web("/", { jar })).text_).not.toContain("@laterdisabled");
  });
});

describe("first-owner setup", () => {
  it("refuses a missing or wrong token", async () => {
    for (const path of ["/setup", "/setup?token=", "/setup?token=wrong", "/setup?token=test-setup-tokenX"]) {
      const res = await web(path);
      expect(res.status, path).toBe(403);
      expectPageHeaders(res);
      expect(res.text_).not.toContain('action="/setup"');
    }
  });

  it("creates the owner once; afterwards /setup is 404 (no takeover)", async () => {
    const jar = new Jar();
    const form = await web("/setup?token=test-setup-token", { jar });
    expect(form.status).toBe(200);
    expectPageHeaders(form);
    const csrf = hidden(form.text_, "csrf")!;
    const fields = { token: "test-setup-token", csrf, username: "admin", email: "owner@example.com", password: "owner password 123" };

    expect((await web("/setup", { jar, form: { ...fields, token: "wrong" }, headers: { origin: ORIGIN } })).status).toBe(403);
    expect((await web("/setup", { jar, form: { ...fields, csrf: "" }, headers: { origin: ORIGIN } })).status).toBe(403);
    expect((await web("/setup", { form: fields, headers: { origin: ORIGIN } })).status).toBe(403);
    expect((await web("/setup", { jar, form: fields, headers: { origin: "https://evil.example" } })).status).toBe(403);
    const weak = await web("/setup", { jar, form: { ...fields, password: "short" }, headers: { origin: ORIGIN } });
    expect(weak.status).toBe(422);
    expect(weak.text_).toContain("Password is too short");

    const ok = await web("/setup", { jar, form: fields, headers: { origin: ORIGIN } });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/");
    const row = await env.DB.prepare(
      "SELECT u.role_id, u.approved, u.confirmed_at, a.username FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.email = 'owner@example.com'",
    ).first<any>();
    expect(row.username).toBe("admin");
    expect(Number(row.role_id)).toBe(3);
    expect(row.approved).toBe(1);
    expect(row.confirmed_at).not.toBeNull();
    // Signed in right away.
    expect((await web("/", { jar })).text_).toContain("@admin");

    expect((await web("/setup?token=test-setup-token")).status).toBe(404);
    const jar2 = new Jar();
    await web("/auth/sign_in", { jar: jar2 });
    const again = await web("/setup", {
      jar: jar2,
      form: { ...fields, csrf: jar2.cookies.get("tern_csrf")!, username: "attacker", email: "a@evil.example" },
      headers: { origin: ORIGIN },
    });
    expect(again.status).toBe(404);
    const owners = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE CAST(role_id AS INTEGER) = 3").first<any>();
    expect(owners.n).toBe(1);
  });

  it("refuses and explains when SETUP_TOKEN is not configured", async () => {
    const app = buildApp();
    for (const token of [undefined, ""]) {
      const ctx = createExecutionContext();
      const res = await app.fetch(new Request(`${ORIGIN}/setup?token=`), { ...env, SETUP_TOKEN: token }, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(403);
      const html = await res.text();
      expect(html).toContain("wrangler secret put SETUP_TOKEN");
      expect(html).not.toContain('action="/setup"');
    }
  });

  it("is 404 when an owner already exists", async () => {
    await makeUser("existingowner", { roleId: "3" });
    expect((await web("/setup?token=test-setup-token")).status).toBe(404);
  });
});

describe("public profile and status pages", () => {
  it("renders a profile with OpenGraph tags and recent public posts only", async () => {
    const u = await makeUser("birdie");
    await env.DB.prepare("UPDATE accounts SET display_name = ?, note = ? WHERE id = ?")
      .bind("Birdie <Tweets>", "<p>I &amp; my <b>bio</b></p>", u.id.padStart(20, "0"))
      .run();
    await postStatus(u.id, u.username, "public", "hello public world");
    await postStatus(u.id, u.username, "unlisted", "quiet unlisted post");
    await postStatus(u.id, u.username, "private", "secret followers post");
    await postStatus(u.id, u.username, "direct", "secret direct post");
    const res = await web("/@birdie");
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    const h = res.text_;
    expect(h).toContain('<meta property="og:type" content="profile"/>');
    expect(h).toContain('<meta property="og:title" content="Birdie &lt;Tweets&gt; (@birdie@tern.test)"/>');
    expect(h).toContain('<meta property="og:description" content="I &amp; my bio"/>');
    expect(h).toContain(`<meta property="og:url" content="${ORIGIN}/@birdie"/>`);
    expect(h).toMatch(/<meta property="og:image" content="http:\/\/tern\.test\/[^"]+"\/>/);
    expect(h).toContain("Birdie &lt;Tweets&gt;");
    expect(h).toContain("hello public world");
    expect(h).toContain("quiet unlisted post");
    expect(h).not.toContain("secret");
    // Case-insensitive lookup.
    expect((await web("/@BIRDIE")).status).toBe(200);
  });

  it("404 for unknown, remote-style or suspended accounts", async () => {
    expect((await web("/@nobody")).status).toBe(404);
    expect((await web("/@bad%20name")).status).toBe(404);
    const u = await makeUser("suspendedbird");
    await env.DB.prepare("UPDATE accounts SET suspended_at = ? WHERE id = ?").bind(Date.now(), u.id.padStart(20, "0")).run();
    const res = await web("/@suspendedbird");
    expect(res.status).toBe(404);
    expectPageHeaders(res);
  });

  it("renders a public status with og:type article; hidden ones are 404", async () => {
    const u = await makeUser("poster");
    const other = await makeUser("otherposter");
    const pub = await postStatus(u.id, u.username, "public", "a <script>alert(1)</script> & more");
    const cw = await postStatus(u.id, u.username, "unlisted", "behind the warning", "spoilers");
    const priv = await postStatus(u.id, u.username, "private", "followers only");
    const dm = await postStatus(u.id, u.username, "direct", "direct only");
    const res = await web(`/@poster/${pub}`);
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    expect(res.text_).toContain('<meta property="og:type" content="article"/>');
    expect(res.text_).toContain('<meta property="og:description" content="a &lt;script&gt;alert(1)&lt;/script&gt; &amp; more"/>');
    expect(res.text_).not.toContain("<script>");
    const cwPage = await web(`/@poster/${cw}`);
    expect(cwPage.status).toBe(200);
    expect(cwPage.text_).toContain('content="Content warning: spoilers"');
    expect(cwPage.text_).toContain("<summary>spoilers</summary>");
    for (const path of [`/@poster/${priv}`, `/@poster/${dm}`, `/@otherposter/${pub}`, `/@poster/abc`, `/@poster/99999999999999999999`, `/@nobody/${pub}`]) {
      expect((await web(path)).status, path).toBe(404);
    }
    void other;
  });
});
