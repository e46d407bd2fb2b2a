// `npm run admin` (scripts/admin.mjs) against the local D1 of a running Tern (`wrangler dev` under
// test/support/server.mjs): each command's effect is checked through the Worker's API. A user made by the script signs
// in with the password grant (the hash is made in Node exactly as the Worker checks it), an admin reaches an admin
// route, and unsafe input is refused with a message and a non-zero exit.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { RESERVED_USERNAMES } from "../../scripts/admin.mjs";
import { quietEnv, root, startTern } from "../support/server.mjs";
import { nodeBin } from "../../scripts/node.mjs";

const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const SECRET = "e2e-secret"; // startTern's SECRET_KEY_BASE
let tern;

before(async () => {
  // Sign-ups through the API must confirm their address (the `confirm` command's test); create-user's users are confirmed.
  tern = await startTern({ vars: { REQUIRE_EMAIL_CONFIRMATION: "true" } });
});
after(async () => {
  await tern?.stop();
});

function admin(...args) {
  const r = spawnSync(nodeBin, ["scripts/admin.mjs", ...args, "--local", "--persist-to", tern.persistTo], {
    cwd: root,
    encoding: "utf8",
    env: { ...quietEnv, SECRET_KEY_BASE: SECRET },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

function sql(command) {
  const r = spawnSync(nodeBin, [wranglerBin, "d1", "execute", "DB", "--local", "--persist-to", tern.persistTo, "--json", "--command", command], {
    cwd: root,
    encoding: "utf8",
    env: quietEnv,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.slice(r.stdout.indexOf("["))).map((x) => x.results);
}

async function call(path, { token, method = "GET", form } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let body;
  if (form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(form).toString();
  }
  // wrangler dev reloads the Worker when a source file changes (others edit the tree while tests run): a request cut by
  // a reload fails at the socket, and is sent again.
  let res;
  for (let attempt = 1; ; attempt++) {
    try {
      res = await fetch(`${tern.url}${path}`, { method: form && method === "GET" ? "POST" : method, headers, body });
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json, text };
}

let app;
async function passwordGrant(email, password) {
  app ??= (await call("/api/v1/apps", { form: { client_name: "ops", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write admin:read" } })).body;
  return call("/oauth/token", {
    form: { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret, username: email, password, scope: "read write admin:read" },
  });
}

const ok = (r) => assert.equal(r.code, 0, r.out);
const refused = (r, re) => {
  assert.equal(r.code, 2, r.out);
  assert.match(r.out, re);
};

describe("operator commands", () => {
  test("create-user makes an admin who signs in through the Worker and reaches an admin route", { timeout: 300_000 }, async () => {
    const made = admin("create-user", "alice", "Alice@Example.com", "--role", "admin", "--password", "correct horse 1", "--origin", tern.url);
    ok(made);
    assert.match(made.out, /created @alice <Alice@example\.com> .*role admin/);
    const t = await passwordGrant("alice@example.com", "correct horse 1");
    assert.equal(t.status, 200, t.text);
    const me = await call("/api/v1/accounts/verify_credentials", { token: t.body.access_token });
    assert.equal(me.body.username, "alice");
    assert.equal(me.body.url, `${tern.url}/@alice`);
    const adminRoute = await call("/api/v1/admin/accounts", { token: t.body.access_token });
    assert.equal(adminRoute.status, 200, adminRoute.text);

    refused(admin("create-user", "alice", "other@example.com", "--password", "long enough", "--origin", tern.url), /username @alice is taken/);
    refused(admin("create-user", "bad name!", "x@example.com", "--origin", tern.url), /bad username/);
    refused(admin("create-user", "admin", "x@example.com", "--origin", tern.url), /reserved/);
    refused(admin("create-user", "carol", "not-an-email", "--origin", tern.url), /bad e-mail/);
    refused(admin("create-user", "carol", "c@example.com", "--password", "short", "--origin", tern.url), /8 to 72/);
    refused(admin("create-user", "carol", "c@example.com", "--role", "god", "--origin", tern.url), /unknown role/);
    refused(admin("create-user", "carol", "c@example.com"), /origin is unknown/);
    refused(admin("frobnicate"), /unknown command/);
    refused(admin("approve", "nobody"), /unknown account @nobody/);
  });

  test("approve, role, suspend/unsuspend, reset-password change what the API allows", { timeout: 300_000 }, async () => {
    ok(admin("create-user", "bob", "bob@example.com", "--password", "bob password", "--unapproved", "--origin", tern.url));
    const pending = await passwordGrant("bob@example.com", "bob password"); // pending review
    assert.equal(pending.status, 400);
    assert.equal(pending.body.error, "invalid_grant");
    const approved = admin("approve", "bob");
    ok(approved);
    assert.match(approved.out, /approved @bob/);
    const t1 = await passwordGrant("bob@example.com", "bob password");
    assert.equal(t1.status, 200, t1.text);
    const token = t1.body.access_token;
    assert.equal((await call("/api/v1/admin/accounts", { token })).status, 403);
    ok(admin("role", "bob", "admin"));
    assert.equal((await call("/api/v1/admin/accounts", { token })).status, 200);
    ok(admin("role", "bob", "user"));
    assert.equal((await call("/api/v1/admin/accounts", { token })).status, 403);

    refused(admin("suspend", "bob"), /--yes/);
    assert.equal((await call("/api/v1/accounts/verify_credentials", { token })).status, 200);
    ok(admin("suspend", "bob", "--yes"));
    assert.equal((await call("/api/v1/accounts/verify_credentials", { token })).status, 403);
    ok(admin("unsuspend", "bob"));
    assert.equal((await call("/api/v1/accounts/verify_credentials", { token })).status, 200);
    refused(admin("unsuspend", "bob"), /not suspended/);

    const reset = admin("reset-password", "bob");
    ok(reset);
    const fresh = /password: (\S+)/.exec(reset.out)?.[1];
    assert.ok(fresh, reset.out);
    assert.equal((await passwordGrant("bob@example.com", "bob password")).status, 400);
    assert.equal((await passwordGrant("bob@example.com", fresh)).status, 200);
  });

  test("confirm lets an API sign-up that never confirmed its address sign in", { timeout: 300_000 }, async () => {
    const app = await (
      await fetch(`${tern.url}/api/v1/apps`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "confirm", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" }),
      })
    ).json();
    const appToken = await (
      await fetch(`${tern.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read write" }),
      })
    ).json();
    const signUp = await fetch(`${tern.url}/api/v1/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${appToken.access_token}` },
      body: JSON.stringify({ username: "dave", email: "dave@example.com", password: "dave password", agreement: true }),
    });
    assert.equal(signUp.status, 200, await signUp.text());
    assert.equal((await passwordGrant("dave@example.com", "dave password")).status, 400); // unconfirmed
    const confirmed = admin("confirm", "dave");
    ok(confirmed);
    assert.match(confirmed.out, /confirmed the e-mail address of @dave/);
    assert.equal((await passwordGrant("dave@example.com", "dave password")).status, 200);
    assert.match(admin("confirm", "dave").out, /already confirmed/);
  });

  test("recount, rotate-instance-keys and purge-remote", { timeout: 300_000 }, async () => {
    ok(admin("create-user", "dora", "dora@example.com", "--password", "dora password", "--origin", tern.url));
    const token = (await passwordGrant("dora@example.com", "dora password")).body.access_token;
    const posted = await call("/api/v1/statuses", { token, form: { status: "hello" } });
    assert.equal(posted.status, 200, posted.text);
    sql("UPDATE accounts SET statuses_count = 42, followers_count = 7 WHERE username = 'dora'");
    const recount = admin("recount");
    ok(recount);
    assert.match(recount.out, /recounted \d+ local accounts/);
    const acct = await call(`/api/v1/accounts/${posted.body.account.id}`, { token });
    assert.equal(acct.body.statuses_count, 1);
    assert.equal(acct.body.followers_count, 0);

    const actor = async () => (await fetch(`${tern.url}/actor`, { headers: { accept: "application/activity+json" } })).json();
    const before = (await actor()).publicKey.publicKeyPem;
    refused(admin("rotate-instance-keys"), /--yes/);
    ok(admin("rotate-instance-keys", "--yes"));
    const afterKey = (await actor()).publicKey.publicKeyPem;
    assert.notEqual(afterKey, before);
    assert.match(afterKey, /^-----BEGIN PUBLIC KEY-----/);

    const old = Date.now() - 40 * 24 * 3600 * 1000;
    sql(`INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES ('00000000000000000777', 'far', 'far.example', 'https://far.example/users/far', 1, 1);
      INSERT INTO statuses (id, uri, account_id, local, visibility, text, content, created_at, updated_at)
        VALUES ('00000000000000000778', 'https://far.example/s/1', '00000000000000000777', 0, 'public', '', '<p>old</p>', ${old}, ${old}),
               ('00000000000000000779', 'https://far.example/s/2', '00000000000000000777', 0, 'public', '', '<p>kept</p>', ${old}, ${old}),
               ('00000000000000000780', 'https://far.example/s/3', '00000000000000000777', 0, 'public', '', '<p>new</p>', ${Date.now()}, ${Date.now()})`);
    const kept = await call("/api/v1/statuses/779/bookmark", { token, method: "POST" });
    assert.equal(kept.status, 200, kept.text);
    refused(admin("purge-remote", "0", "--yes"), /at least 1/);
    refused(admin("purge-remote", "abc", "--yes"), /whole number/);
    refused(admin("purge-remote", "30"), /--yes/);
    const purge = admin("purge-remote", "30", "--yes");
    ok(purge);
    assert.match(purge.out, /purged 1 remote statuses older than 30 days/);
    const [left] = sql("SELECT id FROM statuses WHERE account_id = '00000000000000000777' ORDER BY id");
    assert.deepEqual(
      left.map((r) => r.id),
      ["00000000000000000779", "00000000000000000780"],
    );
  });

  test("the script's reserved names are the Worker's: both read src/lib/security/reserved-usernames.json", () => {
    const src = readFileSync(join(root, "src/services/accounts/local-accounts.ts"), "utf8");
    assert.match(src, /from "\.\.\/\.\.\/lib\/security\/reserved-usernames\.json"/);
    assert.ok(RESERVED_USERNAMES.includes("admin") && RESERVED_USERNAMES.includes("well-known"));
  });
});
