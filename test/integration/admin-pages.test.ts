// Admin pages in the browser (/admin/...): each page renders for the owner, a role without the section's permission
// gets 403 (and a user without a staff role gets 403 everywhere), a POST without the session's CSRF token changes
// nothing, and each action changes what the API shows, with its audit-log row.
import { env, SELF } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { beforeAll, describe, expect, it } from "vitest";
import { type Api, anon, makeUser, ORIGIN, type TestUser } from "./helpers";
import { gif, jpeg, png, pngHeaderOnly } from "./media-fixtures";
import { type Jar, hidden, registerApp, signIn, tokenRequest, web } from "./oauth-helpers";

const ADMIN_SCOPES = "read write follow push admin:read admin:write";
const PAGES = [
  "/admin",
  "/admin/dashboard",
  "/admin/pending",
  "/admin/reports",
  "/admin/reports?resolved=1",
  "/admin/domains",
  "/admin/emojis",
  "/admin/emojis?remote=1",
  "/admin/announcements",
  "/admin/rules",
  "/admin/settings",
  "/admin/roles",
  "/admin/log",
];

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});

interface Staff {
  user: TestUser;
  api: Api;
  jar: Jar;
  csrf: string;
}

let seq = 0;
async function staff(roleId: string | null, name = `staff${++seq}`): Promise<Staff> {
  const user = await makeUser(name, { roleId, scopes: ADMIN_SCOPES });
  const jar = await signIn(`${name}@example.com`);
  const home = await web("/", { jar });
  return { user, api: user.api, jar, csrf: hidden(home.text_, "csrf") ?? "" };
}

/** A custom role holding only `permissions` (bits of src/lib/security/permissions.ts). */
async function role(id: string, permissions: number, position = 5) {
  await env.DB.prepare(
    "INSERT OR IGNORE INTO user_roles (id, name, color, permissions, position, highlighted, created_at, updated_at) VALUES (?, ?, '', ?, ?, 0, 0, 0)",
  )
    .bind(id.padStart(20, "0"), `Role ${id}`, permissions, position)
    .run();
  return id;
}

/** POSTs a form as the signed-in staff member, with the CSRF token unless `csrf` is given. */
function post(s: Staff, path: string, form: Record<string, string> = {}, csrf: string | null = s.csrf) {
  return web(path, { jar: s.jar, form: csrf === null ? form : { csrf, ...form }, headers: { origin: ORIGIN } });
}

async function upload(s: Staff, path: string, fields: Record<string, string | Blob>) {
  const fd = new FormData();
  fd.set("csrf", s.csrf);
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  const res = await SELF.fetch(`${ORIGIN}${path}`, { method: "POST", body: fd, headers: { cookie: s.jar.header(), origin: ORIGIN }, redirect: "manual" });
  s.jar.absorb(res);
  return Object.assign(res, { text_: await res.text() });
}

/** Follows a PRG redirect: 303 back to the section, whose page shows the flash once. */
async function followed(s: Staff, res: Response & { text_: string }, to: string) {
  expect(res.status, res.text_.slice(0, 400)).toBe(303);
  expect(res.headers.get("location")).toBe(to);
  const page = await web(to, { jar: s.jar });
  expect(page.status).toBe(200);
  return page;
}

async function logActions() {
  const r = await env.DB.prepare("SELECT action, target_type FROM admin_action_logs ORDER BY id").all<{ action: string; target_type: string }>();
  return r.results.map((x) => `${x.action}:${x.target_type}`);
}

const emojiFile = async (bytes: Uint8Array | Promise<Uint8Array>, name = "e.png", type = "image/png") => new File([await bytes], name, { type });

describe("access", () => {
  it("every page renders for the owner, with the HTML page headers and the section menu", async () => {
    const owner = await staff("3");
    for (const path of PAGES) {
      const res = await web(path, { jar: owner.jar });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("content-security-policy")).toContain("script-src 'none'");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.text_).toContain('href="/admin/log"');
      expect(res.text_).not.toContain("<script");
    }
    // The front page links to /admin for staff only.
    expect((await web("/", { jar: owner.jar })).text_).toContain('href="/admin"');
    const plain = await staff(null);
    expect((await web("/", { jar: plain.jar })).text_).not.toContain('href="/admin"');
  });

  it("signed out: GETs go to the sign-in page and come back; POSTs are refused", async () => {
    const res = await web("/admin/domains?x=1");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/auth/sign_in?return_to=${encodeURIComponent("/admin/domains?x=1")}`);
    const p = await web("/admin/domains/blocks", { form: { domain: "evil.example" }, headers: { origin: ORIGIN } });
    expect(p.status).toBe(403);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM domain_blocks").first("n")).toBe(0);
  });

  it("a user without a staff role gets 403 on every page and every action", async () => {
    const plain = await staff(null);
    for (const path of PAGES) expect((await web(path, { jar: plain.jar })).status, path).toBe(403);
    expect((await post(plain, "/admin/domains/blocks", { domain: "evil.example" })).status).toBe(403);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM domain_blocks").first("n")).toBe(0);
  });

  it("each section needs its own permission (403 without it), for GET and POST", async () => {
    // manage_federation (1 << 5) only
    const fed = await staff(await role("60", 1 << 5));
    expect((await web("/admin", { jar: fed.jar })).status).toBe(200);
    expect((await web("/admin/domains", { jar: fed.jar })).status).toBe(200);
    for (const path of PAGES.filter((p) => p !== "/admin" && !p.startsWith("/admin/domains"))) {
      expect((await web(path, { jar: fed.jar })).status, path).toBe(403);
    }
    const menu = (await web("/admin", { jar: fed.jar })).text_;
    expect(menu).toContain('href="/admin/domains"');
    expect(menu).not.toContain('href="/admin/emojis"');
    // The moderator role (view_audit_log, view_dashboard, manage_reports, manage_appeals, manage_users).
    const mod = await staff("1");
    for (const path of ["/admin/dashboard", "/admin/pending", "/admin/reports", "/admin/log"])
      expect((await web(path, { jar: mod.jar })).status, path).toBe(200);
    for (const path of ["/admin/domains", "/admin/emojis", "/admin/announcements", "/admin/rules", "/admin/settings", "/admin/roles"]) {
      expect((await web(path, { jar: mod.jar })).status, path).toBe(403);
    }
    expect((await post(mod, "/admin/rules", { text: "No spam" })).status).toBe(403);
    expect((await post(mod, "/admin/settings", { title: "Mine now" })).status).toBe(403);
    expect((await post(mod, "/admin/roles", { name: "Boss", permissions_given: "1", "permissions[]": "administrator" })).status).toBe(403);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM rules").first("n")).toBe(0);
    expect(await logActions()).toEqual([]);
  });

  it("a POST without the session's CSRF token, with another one, or from another origin is refused and changes nothing", async () => {
    const owner = await staff("3");
    const other = await staff("3");
    expect((await post(owner, "/admin/domains/blocks", { domain: "evil.example" }, null)).status).toBe(403);
    expect((await post(owner, "/admin/domains/blocks", { domain: "evil.example" }, "x".repeat(43))).status).toBe(403);
    expect((await post(owner, "/admin/domains/blocks", { domain: "evil.example" }, other.csrf)).status).toBe(403);
    const crossSite = await web("/admin/domains/blocks", {
      jar: owner.jar,
      form: { csrf: owner.csrf, domain: "evil.example" },
      headers: { origin: "https://attacker.example" },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.text_).toContain("could not be verified");
    const res = await upload({ ...owner, csrf: "" }, "/admin/emojis", { shortcode: "blob", image: await emojiFile(png(8, 8)) });
    expect(res.status).toBe(403);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM domain_blocks").first("n")).toBe(0);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM custom_emojis").first("n")).toBe(0);
    expect(await logActions()).toEqual([]);
  });
});

describe("actions change what the API shows", () => {
  it("domain blocks: create, conflict (422, nothing lost), edit, delete; allows: add and remove", async () => {
    const owner = await staff("3");
    let page = await followed(
      owner,
      await post(owner, "/admin/domains/blocks", {
        domain: "Evil.Example",
        severity: "suspend",
        reject_media: "1",
        public_comment: "<b>spam</b>",
        confirmed: "1",
      }),
      "/admin/domains",
    );
    expect(page.text_).toContain("Blocked evil.example (suspend).");
    expect(page.text_).toContain("Public: &lt;b&gt;spam&lt;/b&gt;");
    expect((await web("/admin/domains", { jar: owner.jar })).text_).not.toContain("Blocked evil.example");
    let list = await owner.api.get("/api/v1/admin/domain_blocks");
    expect(list.body).toMatchObject([{ domain: "evil.example", severity: "suspend", reject_media: true, public_comment: "<b>spam</b>" }]);
    const id = list.body[0].id;

    const again = await post(owner, "/admin/domains/blocks", { form: "block", domain: "evil.example", private_comment: "kept" });
    expect(again.status).toBe(422);
    expect(again.text_).toContain("already imposed stricter limits on evil.example");
    expect(again.text_).toContain('value="kept"');

    page = await followed(owner, await post(owner, `/admin/domains/blocks/${id}`, { severity: "silence", obfuscate: "1" }), "/admin/domains");
    list = await owner.api.get(`/api/v1/admin/domain_blocks/${id}`);
    expect(list.body).toMatchObject({ domain: "evil.example", severity: "silence", reject_media: false, obfuscate: true });

    await followed(owner, await post(owner, `/admin/domains/blocks/${id}/delete`, { confirmed: "1" }), "/admin/domains");
    expect((await owner.api.get("/api/v1/admin/domain_blocks")).body).toEqual([]);

    const bad = await post(owner, "/admin/domains/blocks", { domain: "not a domain" });
    expect(bad.status).toBe(422);
    expect(bad.text_).toContain("Domain is invalid");

    await followed(owner, await post(owner, "/admin/domains/allows", { domain: "friend.example" }), "/admin/domains");
    const allows = await owner.api.get("/api/v1/admin/domain_allows");
    expect(allows.body).toMatchObject([{ domain: "friend.example" }]);
    await followed(owner, await post(owner, `/admin/domains/allows/${allows.body[0].id}/delete`, { confirmed: "1" }), "/admin/domains");
    expect((await owner.api.get("/api/v1/admin/domain_allows")).body).toEqual([]);
    expect(await logActions()).toEqual(["create:DomainBlock", "update:DomainBlock", "destroy:DomainBlock", "create:DomainAllow", "destroy:DomainAllow"]);
    // The log names what each entry changed: the domain, not the table and id.
    const log = (await web("/admin/log", { jar: owner.jar })).text_;
    expect(log).toContain("<td>deleted</td><td>allowed domain friend.example</td>");
    expect(log).toContain("<td>deleted</td><td>domain block evil.example</td>");
  });

  it("pending sign-ups: approve and reject", async () => {
    const owner = await staff("3");
    const a = await makeUser("waiting1", { approved: false });
    const b = await makeUser("waiting2", { approved: false });
    const page = await web("/admin/pending", { jar: owner.jar });
    expect(page.text_).toContain("@waiting1");
    expect(page.text_).toContain("waiting2@example.com");
    await followed(owner, await post(owner, `/admin/pending/${a.id}/approve`), "/admin/pending");
    expect((await owner.api.get(`/api/v1/admin/accounts/${a.id}`)).body.approved).toBe(true);
    expect((await a.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    const after = await followed(owner, await post(owner, `/admin/pending/${b.id}/reject`, { confirmed: "1" }), "/admin/pending");
    expect(after.text_).toContain("Rejected @waiting2.");
    expect(after.text_).not.toContain("@waiting1<");
    expect((await owner.api.get(`/api/v1/admin/accounts/${b.id}`)).status).toBe(404);
    // Approving someone already approved is refused (403 page), as by the API.
    expect((await post(owner, `/admin/pending/${a.id}/approve`)).status).toBe(403);
    expect(await logActions()).toEqual(["approve:User", "reject:User"]);
  });

  it("reports: assign, resolve, reopen, and an account action that resolves the report", async () => {
    const owner = await staff("3");
    const reporter = await makeUser("reporter");
    const target = await makeUser("troll");
    const st = await target.api.post("/api/v1/statuses", { status: "<script>alert(1)</script> buy now" });
    const rep = await reporter.api.post("/api/v1/reports", { account_id: target.id, status_ids: [st.body.id], comment: "spam <i>here</i>", category: "spam" });
    expect(rep.status).toBe(200);
    const id = rep.body.id;
    const queue = await web("/admin/reports", { jar: owner.jar });
    expect(queue.text_).toContain(`Report #${id}`);
    expect(queue.text_).toContain("spam &lt;i&gt;here&lt;/i&gt;");
    expect(queue.text_).toContain("&lt;script&gt;alert(1)&lt;/script&gt; buy now");
    expect(queue.text_).not.toContain("<script>");

    await followed(owner, await post(owner, `/admin/reports/${id}/assign_to_self`), "/admin/reports");
    expect((await owner.api.get(`/api/v1/admin/reports/${id}`)).body.assigned_account.id).toBe(owner.user.id);
    await followed(owner, await post(owner, `/admin/reports/${id}/resolve`), "/admin/reports");
    expect((await owner.api.get(`/api/v1/admin/reports/${id}`)).body.action_taken).toBe(true);
    expect((await web("/admin/reports?resolved=1", { jar: owner.jar })).text_).toContain(`Report #${id}`);
    await followed(owner, await post(owner, `/admin/reports/${id}/reopen`), "/admin/reports");
    expect((await owner.api.get(`/api/v1/admin/reports/${id}`)).body.action_taken).toBe(false);

    await followed(owner, await post(owner, `/admin/reports/${id}/action`, { type: "silence", confirmed: "1" }), "/admin/reports");
    const shown = (await owner.api.get(`/api/v1/admin/reports/${id}`)).body;
    expect(shown.action_taken).toBe(true);
    expect(shown.target_account.silenced).toBe(true);
    const bad = await post(owner, `/admin/reports/${id}/action`, { type: "explode" });
    expect(bad.status).toBe(422);
    expect(bad.text_).toContain("Type is not included in the list");
    expect(await logActions()).toEqual(["assigned_to_self:Report", "resolve:Report", "reopen:Report", "silence:Account", "resolve:Report"]);

    // A reports-only role may handle reports but not act on accounts (the accounts API's permission).
    const reportsOnly = await staff(await role("61", 1 << 4));
    expect((await post(reportsOnly, `/admin/reports/${id}/reopen`)).status).toBe(303);
    expect((await post(reportsOnly, `/admin/reports/${id}/action`, { type: "suspend" })).status).toBe(403);
    expect((await owner.api.get(`/api/v1/admin/accounts/${target.id}`)).body.suspended).toBe(false);
  });

  it("custom emojis: upload with size, type and shortcode checks, category, disable and enable, delete", async () => {
    const owner = await staff("3");
    const page = await followed(
      owner,
      await upload(owner, "/admin/emojis", { shortcode: "blobcat", category: "Blobs", image: await emojiFile(png(16, 16)) }),
      "/admin/emojis",
    );
    expect(page.text_).toContain("Added :blobcat:.");
    let list = await anon.get("/api/v1/custom_emojis");
    expect(list.body).toMatchObject([{ shortcode: "blobcat", category: "Blobs", visible_in_picker: true }]);
    const url: string = list.body[0].url;
    expect(url).toMatch(/^http:\/\/tern\.test\/media\/custom_emojis\/[0-9a-f]{32}\/blobcat\.png$/);
    const img = await SELF.fetch(url);
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/png");
    await img.arrayBuffer();

    // Refusals: 422 with the reason, nothing stored.
    const refused = async (fields: Record<string, string | Blob>, message: string) => {
      const res = await upload(owner, "/admin/emojis", { form: "upload", ...fields });
      expect(res.status).toBe(422);
      expect(res.text_).toContain(message);
      return res;
    };
    await refused({ shortcode: "jpg", image: await emojiFile(jpeg(8, 8), "x.png") }, "content type is invalid");
    await refused(
      { shortcode: "svg", image: await emojiFile(new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'></svg>")) },
      "content type is invalid",
    );
    await refused({ shortcode: "huge", image: await emojiFile(pngHeaderOnly(64, 64, 256 * 1024)) }, "less than 256 KB");
    const kept = await refused({ shortcode: "bad code!", image: await emojiFile(png(8, 8)) }, "Shortcode must be");
    expect(kept.text_).toContain('value="bad code!"');
    await refused({ shortcode: "blobcat", image: await emojiFile(gif(8, 8), "g.gif", "image/gif") }, "Shortcode has already been taken");
    await refused({ shortcode: "none" }, "Image can&#39;t be blank");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM custom_emojis").first("n")).toBe(1);
    const objects = await env.MEDIA.list({ prefix: "custom_emojis/" });
    expect(objects.objects).toHaveLength(1);

    const id = (await env.DB.prepare("SELECT id FROM custom_emojis").first<string>("id"))!.replace(/^0+/, "");
    await followed(owner, await post(owner, `/admin/emojis/${id}`, { category: "Cats" }), "/admin/emojis");
    expect((await anon.get("/api/v1/custom_emojis")).body[0].category).toBe("Cats");
    await followed(owner, await post(owner, `/admin/emojis/${id}`, { disabled: "1" }), "/admin/emojis");
    expect((await anon.get("/api/v1/custom_emojis")).body).toEqual([]);
    await followed(owner, await post(owner, `/admin/emojis/${id}`, { disabled: "0" }), "/admin/emojis");
    await followed(owner, await post(owner, `/admin/emojis/${id}`, { visible_in_picker: "0" }), "/admin/emojis");
    list = await anon.get("/api/v1/custom_emojis");
    expect(list.body).toMatchObject([{ shortcode: "blobcat", category: "Cats", visible_in_picker: false }]);
    await followed(owner, await post(owner, `/admin/emojis/${id}/delete`, { confirmed: "1" }), "/admin/emojis");
    expect((await anon.get("/api/v1/custom_emojis")).body).toEqual([]);
    expect((await env.MEDIA.list({ prefix: "custom_emojis/" })).objects).toHaveLength(0);
    expect(await logActions()).toEqual([
      "create:CustomEmoji",
      "update:CustomEmoji",
      "disable:CustomEmoji",
      "enable:CustomEmoji",
      "update:CustomEmoji",
      "destroy:CustomEmoji",
    ]);
  });

  it("custom emojis: a remote emoji is copied to a local one (fetched through the guard, checked like an upload)", async () => {
    const owner = await staff("3");
    const bytes = await png(12, 12);
    fetchMock
      .get("https://emoji.example")
      .intercept({ path: "/files/party.png" })
      .reply(200, bytes, { headers: { "content-type": "image/png" } });
    fetchMock
      .get("https://emoji.example")
      .intercept({ path: "/files/fake.png" })
      .reply(200, "<html>nope</html>", { headers: { "content-type": "image/png" } });
    const insert = (id: string, shortcode: string, url: string) =>
      env.DB.prepare(
        "INSERT INTO custom_emojis (id, shortcode, domain, image_remote_url, visible_in_picker, disabled, created_at) VALUES (?, ?, 'emoji.example', ?, 1, 0, 0)",
      )
        .bind(id.padStart(20, "0"), shortcode, url)
        .run();
    await insert("900", "party", "https://emoji.example/files/party.png");
    await insert("901", "fake", "https://emoji.example/files/fake.png");
    expect((await web("/admin/emojis?remote=1", { jar: owner.jar })).text_).toContain(":party:");
    expect((await anon.get("/api/v1/custom_emojis")).body).toEqual([]);
    await followed(owner, await post(owner, "/admin/emojis/900/copy"), "/admin/emojis");
    const list = await anon.get("/api/v1/custom_emojis");
    expect(list.body).toMatchObject([{ shortcode: "party" }]);
    expect(list.body[0].url).toMatch(/^http:\/\/tern\.test\/media\/custom_emojis\//);
    expect(new Uint8Array(await (await SELF.fetch(list.body[0].url)).arrayBuffer())).toEqual(bytes);
    const fake = await post(owner, "/admin/emojis/901/copy");
    expect(fake.status).toBe(422);
    expect(fake.text_).toContain("content type is invalid");
    // Copying twice: the local shortcode is taken.
    expect((await post(owner, "/admin/emojis/900/copy")).status).toBe(422);
    expect(await logActions()).toEqual(["copy:CustomEmoji"]);
  });

  it("announcements: create published, unpublish, edit, delete", async () => {
    const owner = await staff("3");
    const reader = await makeUser("reader");
    await followed(owner, await post(owner, "/admin/announcements", { text: "Maintenance <tonight>", published: "1" }), "/admin/announcements");
    let seen = await reader.api.get("/api/v1/announcements");
    expect(seen.body).toHaveLength(1);
    expect(seen.body[0].content).toContain("Maintenance &lt;tonight&gt;");
    const id = seen.body[0].id;
    await followed(
      owner,
      await post(owner, `/admin/announcements/${id}`, { text: "Maintenance moved", starts_at: "2030-01-01T10:00", ends_at: "2030-01-01T12:00" }),
      "/admin/announcements",
    );
    seen = await reader.api.get("/api/v1/announcements");
    expect(seen.body[0]).toMatchObject({ starts_at: "2030-01-01T10:00:00.000Z", ends_at: "2030-01-01T12:00:00.000Z" });
    expect(seen.body[0].content).toContain("Maintenance moved");
    const bad = await post(owner, `/admin/announcements/${id}`, { text: "x", starts_at: "2030-01-01T10:00", ends_at: "2029-01-01T10:00", form: id });
    expect(bad.status).toBe(422);
    await followed(owner, await post(owner, `/admin/announcements/${id}/unpublish`), "/admin/announcements");
    expect((await reader.api.get("/api/v1/announcements")).body).toEqual([]);
    await followed(owner, await post(owner, `/admin/announcements/${id}/publish`), "/admin/announcements");
    expect((await reader.api.get("/api/v1/announcements")).body).toHaveLength(1);
    await followed(owner, await post(owner, `/admin/announcements/${id}/delete`, { confirmed: "1" }), "/admin/announcements");
    expect((await reader.api.get("/api/v1/announcements")).body).toEqual([]);
    expect(await logActions()).toEqual(["create:Announcement", "update:Announcement", "update:Announcement", "update:Announcement", "destroy:Announcement"]);
  });

  it("rules and server settings show in the instance documents", async () => {
    const owner = await staff("3");
    await followed(owner, await post(owner, "/admin/rules", { text: "Be kind", hint: "really", priority: "2" }), "/admin/rules");
    await followed(owner, await post(owner, "/admin/rules", { text: "No spam", priority: "1" }), "/admin/rules");
    let rules = await anon.get("/api/v1/instance/rules");
    expect(rules.body.map((r: { text: string }) => r.text)).toEqual(["No spam", "Be kind"]);
    const kind = rules.body[1].id;
    await followed(owner, await post(owner, `/admin/rules/${kind}`, { text: "Be very kind", priority: "0" }), "/admin/rules");
    rules = await anon.get("/api/v1/instance/rules");
    expect(rules.body.map((r: { text: string }) => r.text)).toEqual(["Be very kind", "No spam"]);
    expect((await post(owner, "/admin/rules", { text: "   " })).status).toBe(422);
    await followed(owner, await post(owner, `/admin/rules/${kind}/delete`, { confirmed: "1" }), "/admin/rules");
    expect((await anon.get("/api/v1/instance/rules")).body.map((r: { text: string }) => r.text)).toEqual(["No spam"]);

    await followed(
      owner,
      await post(owner, "/admin/settings", {
        title: "Tern <Test>",
        short_description: "A small place",
        contact_email: "admin@tern.test",
        registrations_mode: "approval",
        registrations_message: "",
      }),
      "/admin/settings",
    );
    const v2 = await anon.get("/api/v2/instance");
    expect(v2.body).toMatchObject({ title: "Tern <Test>", description: "A small place", contact: { email: "admin@tern.test" } });
    expect((await web("/admin/settings", { jar: owner.jar })).text_).toContain('value="Tern &lt;Test&gt;"');
    const bad = await post(owner, "/admin/settings", { form: "settings", title: "kept", contact_email: "not an address" });
    expect(bad.status).toBe(422);
    expect(bad.text_).toContain('value="kept"');
    expect((await post(owner, "/admin/settings", { registrations_mode: "everyone" })).status).toBe(422);

    // The registrations mode set here wins over REGISTRATIONS_MODE: documents, NodeInfo, the front page and sign-up.
    const signUp = async (username: string) => {
      const app = await registerApp();
      const t = await tokenRequest({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read write" });
      const body = { username, email: `${username}@example.net`, password: "a long enough password", agreement: true, locale: "en", reason: "hi" };
      return web("/api/v1/accounts", { json: body, ip: "192.0.2.77", headers: { authorization: `Bearer ${t.body.access_token}` } });
    };
    await followed(owner, await post(owner, "/admin/settings", { registrations_mode: "closed" }), "/admin/settings");
    expect((await anon.get("/api/v2/instance")).body.registrations).toMatchObject({ enabled: false, approval_required: false });
    expect((await anon.get("/api/v1/instance")).body.registrations).toBe(false);
    expect((await anon.get("/nodeinfo/2.0")).body.openRegistrations).toBe(false);
    expect((await web("/")).text_).not.toContain("sign up");
    expect((await signUp("latecomer")).status).toBe(403);
    await followed(owner, await post(owner, "/admin/settings", { registrations_mode: "approval" }), "/admin/settings");
    expect((await anon.get("/api/v2/instance")).body.registrations).toMatchObject({ enabled: true, approval_required: true });
    expect((await signUp("latecomer")).status).toBe(200);
    expect((await web("/admin/pending", { jar: owner.jar })).text_).toContain("@latecomer");
    await followed(owner, await post(owner, "/admin/settings", { title: "" }), "/admin/settings");
    expect((await anon.get("/api/v2/instance")).body.title).toBe("Tern");

    // Thumbnail: an image is stored in R2 and shown on the page; anything else is refused.
    await followed(owner, await upload(owner, "/admin/settings/thumbnail", { thumbnail: await emojiFile(png(40, 20)) }), "/admin/settings");
    const key = await env.DB.prepare("SELECT value FROM instance_settings WHERE key = 'site_thumbnail'").first<string>("value");
    expect(key).toMatch(/^site_uploads\/[0-9a-f]{32}\/thumbnail\.png$/);
    expect((await anon.get("/api/v2/instance")).body.thumbnail.url).toBe(`${ORIGIN}/media/${key}`);
    expect((await anon.get("/api/v1/instance")).body.thumbnail).toBe(`${ORIGIN}/media/${key}`);
    const thumb = await SELF.fetch(`${ORIGIN}/media/${key}`);
    expect(thumb.status).toBe(200);
    await thumb.arrayBuffer();
    expect((await upload(owner, "/admin/settings/thumbnail", { thumbnail: new File(["hello"], "t.png") })).status).toBe(422);
    await followed(owner, await post(owner, "/admin/settings/thumbnail/delete", { confirmed: "1" }), "/admin/settings");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM instance_settings WHERE key = 'site_thumbnail'").first("n")).toBe(0);
    expect((await anon.get("/api/v2/instance")).body.thumbnail.url).toBe(`${ORIGIN}/headers/original/missing.png`);
    expect(await logActions()).toEqual([
      "create:Rule",
      "create:Rule",
      "update:Rule",
      "destroy:Rule",
      "update:Form::AdminSettings",
      "update:Form::AdminSettings",
      "update:Form::AdminSettings",
      "update:Form::AdminSettings",
      "update:Form::AdminSettings",
      "update:Form::AdminSettings",
    ]);
  });

  it("roles: create, edit permissions (which changes what its holders may open), and Mastodon's limits", async () => {
    const owner = await staff("3");
    await followed(
      owner,
      await post(owner, "/admin/roles", {
        name: "Emoji keeper",
        color: "#aa00ff",
        position: "20",
        permissions_given: "1",
        "permissions[]": "manage_custom_emojis",
      }),
      "/admin/roles",
    );
    const row = await env.DB.prepare("SELECT id, permissions, position, color FROM user_roles WHERE name = 'Emoji keeper'").first<{
      id: string;
      permissions: number;
      position: number;
      color: string;
    }>();
    expect(row).toMatchObject({ permissions: 1 << 14, position: 20, color: "#aa00ff" });
    const roleId = row!.id.replace(/^0+/, "");
    const keeper = await staff(roleId);
    expect((await web("/admin/emojis", { jar: keeper.jar })).status).toBe(200);
    expect((await web("/admin/rules", { jar: keeper.jar })).status).toBe(403);

    // Permissions are the checked boxes: none checked removes them all.
    const form = new URLSearchParams({ csrf: owner.csrf, name: "Emoji keeper", position: "20", permissions_given: "1" });
    form.append("permissions[]", "manage_rules");
    form.append("permissions[]", "manage_custom_emojis");
    const res = await SELF.fetch(`${ORIGIN}/admin/roles/${roleId}`, {
      method: "POST",
      body: form,
      headers: { cookie: owner.jar.header(), origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    await res.arrayBuffer();
    expect((await web("/admin/rules", { jar: keeper.jar })).status).toBe(200);

    // A moderator-like role with manage_roles cannot grant what it lacks, nor edit roles at or above its position.
    const rolesAdmin = await staff(await role("62", (1 << 17) | (1 << 14), 50));
    const elevated = await post(rolesAdmin, "/admin/roles", {
      form: "create",
      name: "Sneaky",
      position: "1",
      permissions_given: "1",
      "permissions[]": "administrator",
    });
    expect(elevated.status).toBe(422);
    expect(elevated.text_).toContain("permissions you do not have");
    expect(elevated.text_).toContain('value="Sneaky"');
    expect((await post(rolesAdmin, "/admin/roles/3", { name: "Mine", permissions_given: "1" })).status).toBe(403);
    expect((await post(rolesAdmin, "/admin/roles", { name: "Too high", position: "51" })).status).toBe(422);
    expect((await post(rolesAdmin, "/admin/roles/62", { name: "Self", position: "50", permissions_given: "1" })).status).toBe(422);
    expect((await web("/admin/roles", { jar: rolesAdmin.jar })).text_).toContain("Emoji keeper");
    expect(await logActions()).toEqual(["create:UserRole", "update:UserRole"]);
  });

  it("the dashboard shows the measures and the audit log pages", async () => {
    const owner = await staff("3");
    await makeUser("newcomer");
    const dash = await web("/admin/dashboard", { jar: owner.jar });
    expect(dash.text_).toContain('data-measure="new_users"');
    expect(dash.text_).toMatch(/<strong>\d+<\/strong>New users/);
    for (let i = 0; i < 52; i++) await post(owner, "/admin/rules", { text: `Rule ${i}` });
    const first = await web("/admin/log", { jar: owner.jar });
    expect(first.text_.match(/data-log=/g)).toHaveLength(50);
    const older = /href="(\/admin\/log\?max_id=\d+)"/.exec(first.text_)?.[1];
    expect(older).toBeDefined();
    const second = await web(older!, { jar: owner.jar });
    expect(second.text_.match(/data-log=/g)).toHaveLength(2);
  });
});

describe("what a new admin reads", () => {
  it("the roles page counts the users holding each role, the owner's included", async () => {
    const owner = await staff("3");
    await staff("1");
    await staff("1");
    const page = (await web("/admin/roles", { jar: owner.jar })).text_;
    const users = (name: string) => new RegExp(`data-role="${name}"[\\s\\S]*?data-users="(\\d+)"`).exec(page)?.[1];
    expect(users("Owner")).toBe("1");
    expect(users("Moderator")).toBe("2");
    expect(users("Admin")).toBe("0");
    expect(page).toContain("position 1000, 1 user)");
    expect(page).toContain("position 10, 2 users)");
  });

  it("destructive actions show what they will do and act only once confirmed", async () => {
    const owner = await staff("3");
    const reporter = await makeUser("reporter");
    const target = await makeUser("troll");
    const rep = await reporter.api.post("/api/v1/reports", { account_id: target.id, comment: "spam", category: "spam" });
    const id = rep.body.id;

    // The report's action: the first POST is the question, with the form to send again; nothing is done yet.
    const ask = await post(owner, `/admin/reports/${id}/action`, { type: "suspend" });
    expect(ask.status).toBe(200);
    expect(ask.text_).toContain("Suspend @troll?");
    expect(ask.text_).toContain("resolve this report and every other open report about @troll");
    expect(ask.text_).toContain(`action="/admin/reports/${id}/action"`);
    expect(hidden(ask.text_, "type")).toBe("suspend");
    expect(hidden(ask.text_, "confirmed")).toBe("1");
    expect(ask.text_).toContain('href="/admin/reports"');
    expect((await owner.api.get(`/api/v1/admin/accounts/${target.id}`)).body.suspended).toBe(false);
    expect(await logActions()).toEqual([]);
    // Sent again as the page sends it: done.
    const fields = { type: hidden(ask.text_, "type")!, confirmed: hidden(ask.text_, "confirmed")! };
    await followed(owner, await post(owner, `/admin/reports/${id}/action`, fields), "/admin/reports");
    expect((await owner.api.get(`/api/v1/admin/accounts/${target.id}`)).body.suspended).toBe(true);

    // A domain block that suspends asks first; one that only limits does not.
    const suspend = await post(owner, "/admin/domains/blocks", { form: "block", domain: "Spam.Example", severity: "suspend" });
    expect(suspend.status).toBe(200);
    expect(suspend.text_).toContain("Suspend spam.example?");
    expect(hidden(suspend.text_, "domain")).toBe("Spam.Example");
    expect((await owner.api.get("/api/v1/admin/domain_blocks")).body).toEqual([]);
    await followed(owner, await post(owner, "/admin/domains/blocks", { domain: "quiet.example", severity: "silence" }), "/admin/domains");

    // Deletes ask too: a rule stays until the question is answered.
    await followed(owner, await post(owner, "/admin/rules", { text: "Be kind" }), "/admin/rules");
    const rule = (await anon.get("/api/v1/instance/rules")).body[0].id;
    const del = await post(owner, `/admin/rules/${rule}/delete`);
    expect(del.status).toBe(200);
    expect(del.text_).toContain("Delete this rule?");
    expect(del.text_).toContain("Be kind");
    expect((await anon.get("/api/v1/instance/rules")).body).toHaveLength(1);
    // A missing record is refused at the question already.
    expect((await post(owner, "/admin/rules/999999/delete")).status).toBe(404);
  });

  it("the audit log names accounts by handle, and domains, roles and settings by name, even once deleted", async () => {
    const owner = await staff("3");
    const target = await makeUser("troll");
    const waiting = await makeUser("waiting", { approved: false });
    const reporter = await makeUser("reporter");
    const rep = await reporter.api.post("/api/v1/reports", { account_id: target.id, comment: "spam", category: "spam" });
    await post(owner, `/admin/reports/${rep.body.id}/action`, { type: "silence", confirmed: "1" });
    await post(owner, `/admin/pending/${waiting.id}/reject`, { confirmed: "1" });
    await post(owner, "/admin/domains/blocks", { domain: "gone.example", severity: "silence" });
    const block = (await owner.api.get("/api/v1/admin/domain_blocks")).body[0].id;
    await post(owner, `/admin/domains/blocks/${block}/delete`, { confirmed: "1" });
    await post(owner, "/admin/settings", { title: "Renamed" });
    await post(owner, "/admin/roles", { name: "Helpers", position: "5" });
    await upload(owner, "/admin/emojis", { shortcode: "blobcat", image: await emojiFile(png(16, 16)) });
    const log = (await web("/admin/log", { jar: owner.jar })).text_;
    for (const entry of [
      "<td>limited</td><td>@troll</td>",
      "<td>resolved</td><td>a report on @troll</td>",
      "<td>rejected</td><td>@waiting</td>",
      "<td>created</td><td>domain block gone.example</td>",
      "<td>deleted</td><td>domain block gone.example</td>",
      "<td>changed</td><td>the server settings</td>",
      "<td>created</td><td>role Helpers</td>",
      "<td>created</td><td>custom emoji :blobcat:</td>",
    ]) {
      expect(log).toContain(entry);
    }
    expect(log).not.toMatch(/Account #|Report #|report #|Form::AdminSettings|DomainBlock/);
  });
});
