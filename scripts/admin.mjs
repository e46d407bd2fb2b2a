#!/usr/bin/env node
// Operator commands for a Tern instance, run against the local D1 of `wrangler dev` (--local, the default; with
// --persist-to DIR for another state directory) or the deployed database (--remote), through
// `wrangler d1 execute DB`. The SQL is made here in Node with the Worker's own algorithms (WebCrypto is in Node 20):
// PBKDF2-SHA-256 password hashes over an HMAC pepper from SECRET_KEY_BASE (src/lib/security/crypto.ts), snowflake ids stored as
// 20-digit text (src/lib/text/ids.ts), the usernames and e-mails sign-up accepts (src/services/accounts/local-accounts.ts), RSA-2048
// actor keys as PEM (src/federation/signing/keys.ts). test/e2e/admin-commands.test.mjs keeps them honest: a user made here
// signs in through the Worker.
//
//   npm run admin -- create-user <username> <email> [--role user|moderator|admin|owner] [--password P] [--unapproved]
//   npm run admin -- reset-password <username> [--password P]     (signs the user out of the web pages too)
//   npm run admin -- approve <username>
//   npm run admin -- confirm <username>                           (confirms the e-mail address, as staff must without mail)
//   npm run admin -- suspend <username> --yes
//   npm run admin -- unsuspend <username>
//   npm run admin -- role <username> <user|moderator|admin|owner>
//   npm run admin -- recount                                      (account, status and instance counters)
//   npm run admin -- rotate-instance-keys --yes
//   npm run admin -- purge-remote <days> --yes [--batch 500]
// Options: --remote | --local [--persist-to DIR], --database DB, --config wrangler.toml, --origin https://host (the
// instance's public origin, for the URIs of a new account; default https://<LOCAL_DOMAIN> from wrangler.toml).
// The password pepper is SECRET_KEY_BASE from the environment, else (--local) from .dev.vars; it must be the Worker's.
// A password not given is generated and printed. Each command prints what it did; a refusal prints why and exits 2.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nodeBin } from "./node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");

export class Refusal extends Error {}

// ---- the Worker's algorithms, in Node ----

const enc = new TextEncoder();
const b64url = (bytes) => Buffer.from(bytes).toString("base64url");
export const PASSWORD_ITERATIONS = 100_000;

/** src/lib/security/crypto.ts hashPassword: PBKDF2-SHA-256 (100,000 iterations) over HMAC-SHA-256(pepper, password). */
export async function hashPassword(password, pepperKey, iterations = PASSWORD_ITERATIONS) {
  let material = enc.encode(password);
  if (pepperKey) {
    const key = await crypto.subtle.importKey("raw", enc.encode(pepperKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    material = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(password)));
  }
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const base = await crypto.subtle.importKey("raw", material, "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, base, 256);
  return `pbkdf2-sha256$${iterations}$${b64url(salt)}$${b64url(new Uint8Array(bits))}`;
}

let lastMs = 0;
let seq = 0;
/** src/lib/text/ids.ts snowflake(): milliseconds << 16 | a per-millisecond sequence, stored 20-digit zero-padded. */
export function snowflake(now = Date.now()) {
  if (now === lastMs) seq = (seq + 1) & 0xffff;
  else {
    lastMs = now;
    seq = Math.floor(Math.random() * 0xffff);
  }
  return ((BigInt(now) << 16n) | BigInt(seq)).toString().padStart(20, "0");
}

/** The names sign-up refuses, from the same file the Worker reads (src/services/accounts/local-accounts.ts). */
export const RESERVED_USERNAMES = JSON.parse(readFileSync(new URL("../src/lib/security/reserved-usernames.json", import.meta.url), "utf8"));

export function checkUsername(u, allowReserved = false) {
  if (!u) throw new Refusal("a username is needed");
  if (u.length > 30 || !/^[a-z0-9_]+$/i.test(u)) throw new Refusal(`bad username "${u}": 1 to 30 letters, digits or underscores`);
  if (!allowReserved && RESERVED_USERNAMES.includes(u.toLowerCase())) throw new Refusal(`username "${u}" is reserved (--allow-reserved to take it anyway)`);
  return u;
}

/** src/services/accounts/local-accounts.ts normalizeEmail. */
export function normalizeEmail(raw) {
  const e = String(raw ?? "").trim();
  const m = e.length <= 254 && !/[\s"%\\<>()[\],;]/.test(e) ? /^([^@]+)@([a-z0-9-]+(?:\.[a-z0-9-]+)+)$/i.exec(e) : null;
  if (!m) throw new Refusal(`bad e-mail address "${raw}"`);
  return `${m[1]}@${m[2].toLowerCase()}`;
}

function checkPassword(p) {
  if (p.length < 8 || p.length > 72) throw new Refusal("the password must have 8 to 72 characters");
  return p;
}

export const ROLES = { user: null, moderator: "00000000000000000001", admin: "00000000000000000002", owner: "00000000000000000003" };
function roleId(name) {
  if (!(name in ROLES)) throw new Refusal(`unknown role "${name}": one of ${Object.keys(ROLES).join(", ")}`);
  return ROLES[name];
}

/** An SQL literal. SQLite strings have no backslash escapes: doubling quotes is the whole escaping. */
export function lit(v) {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new Error(`not an integer: ${v}`);
    return String(v);
  }
  const s = String(v);
  if (s.includes("\u0000")) throw new Refusal("NUL characters are not allowed");
  return `'${s.replace(/'/g, "''")}'`;
}

// ---- arguments and wrangler ----

export function parseArgs(argv) {
  const o = { positional: [], database: "DB", remote: false, local: false, persistTo: null, config: null, yes: false, allowReserved: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Refusal(`${a} needs a value`);
      return v;
    };
    if (a === "--remote") o.remote = true;
    else if (a === "--local") o.local = true;
    else if (a === "--yes" || a === "-y") o.yes = true;
    else if (a === "--unapproved") o.unapproved = true;
    else if (a === "--allow-reserved") o.allowReserved = true;
    else if (a === "--persist-to") o.persistTo = next();
    else if (a === "--database") o.database = next();
    else if (a === "--config" || a === "-c") o.config = next();
    else if (a === "--role") o.role = next();
    else if (a === "--password") o.password = next();
    else if (a === "--origin") o.origin = next();
    else if (a === "--batch") o.batch = next();
    else if (a.startsWith("-")) throw new Refusal(`unknown option ${a}`);
    else o.positional.push(a);
  }
  if (o.remote && o.local) throw new Refusal("say --local or --remote, not both");
  if (o.remote && o.persistTo) throw new Refusal("--persist-to is for --local state");
  return o;
}

/** Tries of a local statement the running `wrangler dev` holds the database for (SQLITE_BUSY): it wrote nothing. */
const LOCAL_BUSY_TRIES = 6;

function d1(o, sql) {
  const args = [wranglerBin, "d1", "execute", o.database, o.remote ? "--remote" : "--local", "--yes", "--json", "--command", sql];
  if (o.persistTo) args.push("--persist-to", o.persistTo);
  if (o.config) args.push("--config", o.config);
  const run = () =>
    spawnSync(nodeBin, args, {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 1 << 28,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", FORCE_COLOR: "0" },
    });
  let r = run();
  // The local SQLite file is shared with a running `wrangler dev`: a statement that finds it locked is rolled back
  // whole, so it is tried again after a pause.
  for (let k = 1; k < LOCAL_BUSY_TRIES && !o.remote && r.status !== 0 && /SQLITE_BUSY|database is locked/.test(`${r.stderr}${r.stdout}`); k++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250 * k);
    r = run();
  }
  if (r.status !== 0) throw new Error(`wrangler d1 execute failed (${r.status}):\n${(r.stderr || "").slice(-2000)}\n${(r.stdout || "").slice(-2000)}`);
  const out = JSON.parse(r.stdout.slice(r.stdout.indexOf("[")));
  return out.map((x) => x.results ?? []);
}

function vars(o) {
  const file = o.config ?? join(root, "wrangler.toml");
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  return { localDomain: /^\s*LOCAL_DOMAIN\s*=\s*"([^"]*)"/m.exec(text)?.[1] ?? "" };
}

function pepper(o) {
  if (process.env.SECRET_KEY_BASE !== undefined) return process.env.SECRET_KEY_BASE;
  const devVars = join(root, ".dev.vars");
  if (!o.remote && existsSync(devVars)) {
    const m = /^\s*SECRET_KEY_BASE\s*=\s*"?([^"\n]*)"?\s*$/m.exec(readFileSync(devVars, "utf8"));
    if (m) return m[1];
  }
  throw new Refusal("SECRET_KEY_BASE is not set: export the Worker's SECRET_KEY_BASE so the password hash matches what it checks");
}

function origin(o) {
  const raw = o.origin ?? (vars(o).localDomain ? `https://${vars(o).localDomain}` : "");
  if (!raw) throw new Refusal("the instance's origin is unknown: pass --origin https://your.domain (LOCAL_DOMAIN is empty in wrangler.toml)");
  let u;
  try {
    u = new URL(raw);
  } catch {
    throw new Refusal(`bad --origin "${raw}"`);
  }
  if (!/^https?:$/.test(u.protocol) || u.pathname !== "/" || u.search || u.hash) throw new Refusal(`bad --origin "${raw}": scheme://host[:port] only`);
  return u.origin;
}

function needYes(o, what) {
  if (!o.yes) throw new Refusal(`${what}: add --yes to do it`);
}

function findLocal(o, username) {
  checkUsername(username, true);
  const [rows] = d1(
    o,
    // Flags computed in SQL: `wrangler d1 execute --json` prints NULL as the string "null".
    `SELECT a.id AS account_id, a.username, a.suspended_at IS NOT NULL AS suspended, u.id AS user_id, u.approved, u.confirmed_at IS NOT NULL AS confirmed FROM accounts a JOIN users u ON u.account_id = a.id
     WHERE lower(a.username) = lower(${lit(username)}) AND a.domain IS NULL`,
  );
  const row = rows?.[0];
  if (!row) throw new Refusal(`unknown account @${username} (no local user of that name)`);
  return row;
}

const generated = () => b64url(crypto.getRandomValues(new Uint8Array(12)));

// ---- commands ----

const commands = {
  async "create-user"(o, [username, email]) {
    checkUsername(username, o.allowReserved);
    const mail = normalizeEmail(email);
    const role = roleId(o.role ?? "user");
    const password = checkPassword(o.password ?? generated());
    const base = origin(o);
    const secret = pepper(o);
    const [taken, takenMail] = d1(
      o,
      `SELECT 1 FROM accounts WHERE lower(username) = lower(${lit(username)}) AND domain IS NULL; SELECT 1 FROM users WHERE lower(email) = lower(${lit(mail)})`,
    );
    if (taken.length) throw new Refusal(`the username @${username} is taken`);
    if (takenMail.length) throw new Refusal(`the e-mail address ${mail} is taken`);
    const now = Date.now();
    const accountId = snowflake(now);
    const userId = snowflake(now);
    const uri = `${base}/users/${username}`;
    const hash = await hashPassword(password, secret);
    const approved = o.unapproved ? 0 : 1;
    d1(
      o,
      `INSERT INTO accounts (id, username, domain, uri, url, inbox_url, shared_inbox_url, outbox_url, followers_url, following_url, featured_url,
         featured_tags_url, discoverable, created_at, updated_at)
       VALUES (${lit(accountId)}, ${lit(username)}, NULL, ${lit(uri)}, ${lit(`${base}/@${username}`)}, ${lit(`${uri}/inbox`)}, ${lit(`${base}/inbox`)},
         ${lit(`${uri}/outbox`)}, ${lit(`${uri}/followers`)}, ${lit(`${uri}/following`)}, ${lit(`${uri}/collections/featured`)},
         ${lit(`${uri}/collections/tags`)}, NULL, ${now}, ${now});
       INSERT INTO users (id, account_id, email, password_hash, confirmed_at, approved, role_id, created_at, updated_at)
       VALUES (${lit(userId)}, ${lit(accountId)}, ${lit(mail)}, ${lit(hash)}, ${now}, ${approved}, ${lit(role)}, ${now}, ${now})`,
    );
    console.log(`created @${username} <${mail}> (account ${BigInt(accountId)}, role ${o.role ?? "user"}${approved ? "" : ", pending approval"}) at ${uri}`);
    if (!o.password) console.log(`password: ${password}`);
  },

  async "reset-password"(o, [username]) {
    const u = findLocal(o, username);
    const password = checkPassword(o.password ?? generated());
    const hash = await hashPassword(password, pepper(o));
    d1(
      o,
      `UPDATE users SET password_hash = ${lit(hash)}, updated_at = ${Date.now()} WHERE id = ${lit(u.user_id)};
       DELETE FROM web_sessions WHERE user_id = ${lit(u.user_id)}`,
    );
    console.log(`reset the password of @${u.username}; its web sessions were signed out`);
    if (!o.password) console.log(`password: ${password}`);
  },

  async approve(o, [username]) {
    const u = findLocal(o, username);
    if (u.approved) return console.log(`@${u.username} is already approved; nothing done`);
    d1(o, `UPDATE users SET approved = 1, updated_at = ${Date.now()} WHERE id = ${lit(u.user_id)}`);
    console.log(`approved @${u.username}`);
  },

  // Mastodon's admin "Confirm" (Admin::ConfirmationsController): needed for sign-ups under REQUIRE_EMAIL_CONFIRMATION
  // when the instance sends no mail (no EMAIL binding), or when a confirmation mail never arrived.
  async confirm(o, [username]) {
    const u = findLocal(o, username);
    if (u.confirmed) return console.log(`@${u.username} is already confirmed; nothing done`);
    const now = Date.now();
    d1(o, `UPDATE users SET confirmed_at = ${now}, updated_at = ${now} WHERE id = ${lit(u.user_id)} AND confirmed_at IS NULL`);
    console.log(`confirmed the e-mail address of @${u.username}`);
  },

  async suspend(o, [username]) {
    const u = findLocal(o, username);
    if (u.suspended) return console.log(`@${u.username} is already suspended; nothing done`);
    needYes(o, `suspending @${u.username} signs it out of every app and hides its profile and posts`);
    const now = Date.now();
    d1(o, `UPDATE accounts SET suspended_at = ${now}, suspension_origin = 'local', updated_at = ${now} WHERE id = ${lit(u.account_id)}`);
    console.log(`suspended @${u.username} (its tokens stop working now; open streams close within 5 minutes)`);
  },

  async unsuspend(o, [username]) {
    const u = findLocal(o, username);
    if (!u.suspended) throw new Refusal(`@${u.username} is not suspended`);
    d1(o, `UPDATE accounts SET suspended_at = NULL, suspension_origin = NULL, updated_at = ${Date.now()} WHERE id = ${lit(u.account_id)}`);
    console.log(`unsuspended @${u.username}`);
  },

  async role(o, [username, name]) {
    if (!name) throw new Refusal(`which role? one of ${Object.keys(ROLES).join(", ")}`);
    const id = roleId(name);
    const u = findLocal(o, username);
    d1(o, `UPDATE users SET role_id = ${lit(id)}, updated_at = ${Date.now()} WHERE id = ${lit(u.user_id)}`);
    console.log(`@${u.username} now has the role ${name}`);
  },

  async recount(o) {
    const [, , , stats] = d1(
      o,
      `UPDATE accounts SET statuses_count = (SELECT count(*) FROM statuses s WHERE s.account_id = accounts.id),
         following_count = (SELECT count(*) FROM follows f WHERE f.account_id = accounts.id),
         followers_count = (SELECT count(*) FROM follows f WHERE f.target_account_id = accounts.id)
       WHERE domain IS NULL;
       UPDATE statuses SET replies_count = (SELECT count(*) FROM statuses r WHERE r.in_reply_to_id = statuses.id AND r.visibility <> 'direct'),
         reblogs_count = (SELECT count(*) FROM statuses r WHERE r.reblog_of_id = statuses.id),
         favourites_count = (SELECT count(*) FROM favourites f WHERE f.status_id = statuses.id)
       WHERE local = 1;
       UPDATE instance_stats SET
         user_count = (SELECT count(*) FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.approved = 1 AND a.suspended_at IS NULL),
         status_count = (SELECT count(*) FROM statuses WHERE local = 1 AND reblog_of_id IS NULL),
         domain_count = (SELECT count(*) FROM (SELECT domain FROM instances UNION SELECT domain FROM accounts WHERE domain IS NOT NULL))
       WHERE id = 1;
       SELECT (SELECT count(*) FROM accounts WHERE domain IS NULL) AS accounts, (SELECT count(*) FROM statuses WHERE local = 1) AS statuses,
         user_count, status_count, domain_count FROM instance_stats WHERE id = 1`,
    );
    const s = stats?.[0] ?? {};
    console.log(
      `recounted ${s.accounts ?? 0} local accounts (statuses, following, followers) and ${s.statuses ?? 0} local statuses (replies, boosts, favourites); instance: ${s.user_count} users, ${s.status_count} posts, ${s.domain_count} domains`,
    );
  },

  async "rotate-instance-keys"(o) {
    const [rows] = d1(o, `SELECT id, uri FROM accounts WHERE username = 'instance.actor' AND domain IS NULL`);
    const actor = rows?.[0];
    if (!actor) throw new Refusal("there is no instance actor yet (Tern makes it the first time it federates); nothing to rotate");
    needYes(o, "rotating the instance actor's keys makes servers that cached the old key re-fetch it");
    const alg = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) };
    const pair = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]);
    const pem = (der, label) =>
      `-----BEGIN ${label}-----\n${Buffer.from(der)
        .toString("base64")
        .match(/.{1,64}/g)
        .join("\n")}\n-----END ${label}-----\n`;
    const pub = pem(await crypto.subtle.exportKey("spki", pair.publicKey), "PUBLIC KEY");
    const priv = pem(await crypto.subtle.exportKey("pkcs8", pair.privateKey), "PRIVATE KEY");
    d1(
      o,
      `INSERT INTO account_keys (account_id, private_key_pem) VALUES (${lit(actor.id)}, ${lit(priv)})
         ON CONFLICT (account_id) DO UPDATE SET private_key_pem = excluded.private_key_pem;
       UPDATE accounts SET public_key_pem = ${lit(pub)}, public_key_id = uri || '#main-key', updated_at = ${Date.now()} WHERE id = ${lit(actor.id)}`,
    );
    console.log(`rotated the keys of the instance actor ${actor.uri} (new RSA-2048 pair; signing uses it from the next request)`);
  },

  async "purge-remote"(o, [days]) {
    const n = Number(days);
    if (!/^\d+$/.test(days ?? "") || !Number.isSafeInteger(n) || n < 1)
      throw new Refusal(`the age in days must be a whole number of at least 1 (got "${days ?? ""}")`);
    const batch = Math.min(1000, Math.max(1, Number(o.batch ?? 500) || 500));
    needYes(o, `purging remote statuses older than ${n} days deletes them from this server`);
    const cutoff = Date.now() - n * 24 * 3600 * 1000;
    // Mastodon's `tootctl statuses remove`: remote statuses nobody here interacted with (no local favourite, bookmark,
    // pin, mention, boost or reply; not boosted or quoted by anyone, so nothing is left pointing at a removed status).
    const pick = `SELECT s.id FROM statuses s WHERE s.local = 0 AND s.created_at < ${cutoff}
      AND NOT EXISTS (SELECT 1 FROM favourites f JOIN accounts a ON a.id = f.account_id WHERE f.status_id = s.id AND a.domain IS NULL)
      AND NOT EXISTS (SELECT 1 FROM bookmarks b WHERE b.status_id = s.id)
      AND NOT EXISTS (SELECT 1 FROM status_pins p WHERE p.status_id = s.id)
      AND NOT EXISTS (SELECT 1 FROM mentions m JOIN accounts a ON a.id = m.account_id WHERE m.status_id = s.id AND a.domain IS NULL)
      AND NOT EXISTS (SELECT 1 FROM statuses r WHERE r.reblog_of_id = s.id)
      AND NOT EXISTS (SELECT 1 FROM statuses r WHERE r.in_reply_to_id = s.id AND r.local = 1)
      AND NOT EXISTS (SELECT 1 FROM quotes q WHERE q.quoted_status_id = s.id)
      ORDER BY s.id LIMIT ${batch}`;
    let total = 0;
    for (;;) {
      const [rows] = d1(o, pick);
      if (!rows.length) break;
      const ids = lit(JSON.stringify(rows.map((r) => r.id)));
      const set = `(SELECT value FROM json_each(${ids}))`;
      d1(
        o,
        [
          `DELETE FROM notifications WHERE status_id IN ${set}`,
          `DELETE FROM home_feed WHERE status_id IN ${set}`,
          `DELETE FROM list_feed WHERE status_id IN ${set}`,
          `DELETE FROM mentions WHERE status_id IN ${set}`,
          `DELETE FROM status_tags WHERE status_id IN ${set}`,
          `DELETE FROM favourites WHERE status_id IN ${set}`,
          `DELETE FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE status_id IN ${set})`,
          `DELETE FROM polls WHERE status_id IN ${set}`,
          `DELETE FROM status_edits WHERE status_id IN ${set}`,
          // A file cached in R2 (issue 32) is left to the cron's cleanup of detached media, which deletes its objects
          // with the row (at its next run: detached_at 0 is long past; this script cannot reach R2).
          `UPDATE media_attachments SET status_id = NULL, detached_at = 0 WHERE status_id IN ${set} AND (file_key IS NOT NULL OR preview_key IS NOT NULL)`,
          `DELETE FROM media_attachments WHERE status_id IN ${set}`,
          `DELETE FROM quotes WHERE status_id IN ${set}`,
          `DELETE FROM statuses WHERE id IN ${set}`,
        ].join(";\n"),
      );
      total += rows.length;
      console.log(`  removed ${rows.length} statuses`);
      if (rows.length < batch) break;
    }
    console.log(
      `purged ${total} remote statuses older than ${n} days (with their media rows, mentions, tags, polls and feed entries; cached media files go with the next cleanup of detached media)`,
    );
  },
};

export async function run(argv) {
  const o = parseArgs(argv);
  const [cmd, ...rest] = o.positional;
  const fn = cmd ? commands[cmd] : undefined;
  if (!fn) throw new Refusal(`${cmd ? `unknown command "${cmd}"` : "no command given"}; commands: ${Object.keys(commands).join(", ")}`);
  console.log(`(${o.remote ? "remote" : "local"} database ${o.database}${o.persistTo ? ` in ${o.persistTo}` : ""})`);
  await fn(o, rest);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  run(process.argv.slice(2)).catch((e) => {
    if (e instanceof Refusal) {
      console.error(`admin: refused: ${e.message}`);
      process.exit(2);
    }
    console.error(`admin: failed: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
  });
}
