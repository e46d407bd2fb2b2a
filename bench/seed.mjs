// Seed data for the benchmark, written as SQL (multi-row INSERTs) and loaded straight into the local D1 file before
// `wrangler dev` starts. Deterministic (fixed PRNG seed) so runs compare. Shape (issue text): 1,000 local accounts,
// 50,000 statuses, a viewer following 200 accounts with a home feed of 800 rows, a few hundred notifications.
import { createHash, randomBytes } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SHAPE = {
  accounts: 1000,
  statuses: 50_000,
  viewerFollows: 200,
  homeFeedRows: 800,
  viewerFollowers: 150, // → 150 follow notifications
  favouritesOfViewer: 150, // → 150 favourite notifications
  mentionsOfViewer: 100, // → ~100 mention notifications
  viewerFavourites: 100, // statuses in the home feed the viewer has favourited
  randomFollowsPerAccount: 20,
  posters: 20, // accounts with tokens that POST /api/v1/statuses rotates through (keeps clear of per-account limits)
  remoteHosts: 0, // remote accounts (2 per host) that write `remoteShare` of the statuses (the large size only)
  remoteAccountsPerHost: 2,
  remoteShare: 0,
};

// Issue 12 point 2: the growth check seeds two sizes. `small` is the seed every figure above was measured on;
// `large` has 100,000 statuses, 5,000 local accounts and 1,000 remote accounts on 500 hosts (20% of the statuses are
// theirs), and the viewer's notifications grow 5× too: a page bounded by what it returns costs the same on both. The
// home feed stays at 800 rows: Tern keeps ~MAX_FEED_ITEMS (800) per feed, and a longer seeded feed would only make the
// first fan-out trim it. What a request's own cost depends on stays: the posters' followers (~20 each, the
// viewer's 150: a post's fan-out), the context scenario's thread (`matchThread`: one of the same size) and the
// viewer's search library (what status search reads whole: its own statuses and the statuses mentioning it), so the
// notifications grow through favourites of the viewer's statuses, not through mentions.
export const SHAPES = {
  small: SHAPE,
  large: {
    ...SHAPE,
    accounts: 5000,
    statuses: 100_000,
    favouritesOfViewer: 1750,
    remoteHosts: 500,
    remoteShare: 0.2,
  },
};

const DAY = 86_400_000;

/** A small seeded PRNG (uniform in [0, 1)), so seeds and replays are the same run after run. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Snowflakes as Tern makes them ((ms << 16) | seq), unique per generator, stored zero-padded to 20 digits. */
export function idGen() {
  const seqs = new Map();
  return (ms) => {
    const s = seqs.get(ms) ?? 0;
    seqs.set(ms, s + 1);
    return ((BigInt(ms) << 16n) | BigInt(s)).toString();
  };
}
export const pad = (id) => String(id).padStart(20, "0");
export const unpad = (id) => String(id).replace(/^0+/, "") || "0";
const q = (v) => (v === null || v === undefined ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
export const sha256 = (s) => createHash("sha256").update(s).digest("hex");

export class SqlWriter {
  constructor() {
    this.parts = [];
  }
  // D1 (and workerd's SQLite) refuse statements over 100 KB, so each INSERT stays under ~90 KB.
  insert(table, columns, rows, maxChars = 90_000) {
    const head = `INSERT INTO ${table} (${columns.join(",")}) VALUES\n`;
    let values = [];
    let size = head.length;
    const flush = () => {
      if (values.length) this.parts.push(`${head + values.join(",\n")};`);
      values = [];
      size = head.length;
    };
    for (const r of rows) {
      const v = `(${r.map(q).join(",")})`;
      if (size + v.length + 2 > maxChars) flush();
      values.push(v);
      size += v.length + 2;
    }
    flush();
  }
  toString() {
    return `${this.parts.join("\n")}\n`;
  }
}

/**
 * Builds the seed for an instance served at `origin` (URIs embed it, as Tern's own rows do).
 * Returns { sql, viewer: {accountId, token}, posterTokens: [...], counts }.
 */
export function buildSeed({ origin, now = Date.now(), seed = 42, shape = SHAPE, matchThread = null }) {
  const SHAPE = shape; // the size being seeded (SHAPES)
  const rnd = mulberry32(seed);
  const pick = (n) => Math.floor(rnd() * n);
  const w = new SqlWriter();
  const start = now - 30 * DAY;

  // Accounts and users: index 0 is the viewer.
  const accId = idGen();
  const userId = idGen();
  const accounts = [];
  for (let i = 0; i < SHAPE.accounts; i++) {
    const username = i === 0 ? "viewer" : `user${String(i).padStart(4, "0")}`;
    accounts.push({ id: accId(start - DAY + i * 1000), username, created: start - DAY + i * 1000 });
  }
  const userIds = accounts.map((a) => userId(a.created));
  // Remote accounts (large size): stored as Tern stores fetched actors, `fetched_at` now so nothing refetches them.
  const remote = [];
  for (let h = 0; h < SHAPE.remoteHosts; h++)
    for (let k = 0; k < SHAPE.remoteAccountsPerHost; k++) {
      const created = start - 2 * DAY + remote.length * 1000;
      remote.push({ id: accId(created), username: `r${k}`, domain: `host${h}.remote.example`, created });
    }
  const uri = (a) => (a.domain ? `https://${a.domain}/users/${a.username}` : `${origin}/users/${a.username}`);
  insertLocalAccounts(
    w,
    origin,
    accounts.map((a, i) => ({ ...a, at: a.created, displayName: i === 0 ? "The Viewer" : `User ${i}`, bio: `Bio of ${a.username}` })),
  );
  if (remote.length) {
    insertRemoteAccounts(
      w,
      remote.map((a) => ({
        ...a,
        actor: uri(a),
        sharedInbox: `https://${a.domain}/inbox`,
        displayName: `${a.username} on ${a.domain}`,
        url: `https://${a.domain}/@${a.username}`,
        at: a.created,
      })),
      { now, discoverable: 1 },
    );
    w.insert(
      "instances",
      ["domain", "first_seen_at"],
      [...new Set(remote.map((a) => a.domain))].map((d) => [d, start]),
    );
  }
  insertUsers(
    w,
    accounts.map((a, i) => ({ ...a, userId: userIds[i] })),
    (a) => a.created,
    now,
  );

  // Follows: viewer → accounts 1..200; accounts 201..350 → viewer; plus a random graph among the others.
  const followId = idGen();
  const follows = [];
  const followPairs = new Set();
  const addFollow = (from, to, at) => {
    const k = `${from}>${to}`;
    if (from === to || followPairs.has(k)) return null;
    followPairs.add(k);
    const id = followId(at);
    follows.push([pad(id), pad(accounts[from].id), pad(accounts[to].id), 1, 0, at]);
    return id;
  };
  for (let i = 1; i <= SHAPE.viewerFollows; i++) addFollow(0, i, start + i * 1000);
  const followerNotifs = [];
  for (let i = 0; i < SHAPE.viewerFollowers; i++) {
    const from = SHAPE.viewerFollows + 1 + i;
    const at = start + pick(30 * DAY);
    const id = addFollow(from, 0, at);
    if (id) followerNotifs.push({ from, at, activity: id });
  }
  for (let a = 1; a < SHAPE.accounts; a++) {
    for (let k = 0; k < SHAPE.randomFollowsPerAccount; k++) addFollow(a, 1 + pick(SHAPE.accounts - 1), start + pick(DAY));
  }
  w.insert("follows", ["id", "account_id", "target_account_id", "show_reblogs", "notify", "created_at"], follows);

  // Statuses: ~5% reblogs, ~10% replies (a few of them to the viewer: mention notifications), the rest originals.
  const stId = idGen();
  const mentionId = idGen();
  const statuses = [];
  const mentions = [];
  const mentionNotifs = [];
  const viewerStatuses = [];
  const replyCount = new Map();
  const everyone = [...accounts, ...remote];
  const step = Math.floor((30 * DAY) / SHAPE.statuses);
  const mentionOdds = SHAPE.mentionsOfViewer / SHAPE.statuses;
  for (let i = 0; i < SHAPE.statuses; i++) {
    const at = start + i * step + pick(step);
    const author = i % 1000 === 500 ? 0 : remote.length && rnd() < SHAPE.remoteShare ? accounts.length + pick(remote.length) : 1 + pick(SHAPE.accounts - 1);
    const id = stId(at);
    const a = everyone[author];
    const r = rnd();
    let row;
    const base = { id, author, at, replyTo: null, replyToAccount: null, reblogOf: null, visibility: "public", text: "", content: "" };
    if (r < 0.05 && statuses.length > 10) {
      let target = statuses[statuses.length - 1 - pick(Math.min(2000, statuses.length))];
      if (target.reblogOf || target.visibility !== "public" || target.author === author) target = null;
      if (target) row = { ...base, reblogOf: target.id };
    } else if (r < 0.15 && statuses.length > 10) {
      const toViewer = author !== 0 && viewerStatuses.length > 0 && r < 0.05 + mentionOdds;
      const target = toViewer
        ? viewerStatuses[viewerStatuses.length - 1 - pick(Math.min(10, viewerStatuses.length))]
        : statuses[statuses.length - 1 - pick(Math.min(2000, statuses.length))];
      if (!target.reblogOf && target.visibility !== "private") {
        const tu = everyone[target.author].username;
        const text = `@${tu} reply number ${i} from ${a.username}`;
        const content = `<p><span class="h-card"><a href="${origin}/@${tu}" class="u-url mention">@<span>${tu}</span></a></span> reply number ${i} from ${a.username}</p>`;
        row = { ...base, replyTo: target.id, replyToAccount: everyone[target.author].id, text, content };
        if (target.author !== author) {
          const mid = mentionId(at);
          mentions.push([pad(mid), pad(id), pad(everyone[target.author].id), 0]);
          if (target.author === 0) mentionNotifs.push({ from: author, at, status: id, activity: mid });
        }
      }
    }
    if (!row) {
      const v = rnd();
      const text = `Status number ${i} by ${a.username}: the quick brown fox jumps over the lazy dog. #bench`;
      row = { ...base, visibility: v < 0.85 ? "public" : v < 0.95 ? "unlisted" : "private", text, content: `<p>${text}</p>` };
    }
    statuses.push(row);
    if (author === 0 && !row.reblogOf && row.visibility !== "private") viewerStatuses.push(row);
    if (row.replyTo) replyCount.set(row.replyTo, (replyCount.get(row.replyTo) ?? 0) + 1);
  }
  // The public status with the most replies: the thread the `context` scenario reads. With `matchThread` (the growth
  // check's larger size), the thread whose ancestors and descendants come closest to the given counts instead, so
  // both sizes read a context of the same size.
  let threadId = null;
  let threadReplies = -1;
  const children = new Map();
  const parentOf = new Map();
  for (const st of statuses)
    if (st.replyTo) {
      if (!children.has(st.replyTo)) children.set(st.replyTo, []);
      children.get(st.replyTo).push(st.id);
      parentOf.set(st.id, st.replyTo);
    }
  const descendants = (id) => {
    let n = 0;
    const stack = [...(children.get(id) ?? [])];
    while (stack.length) {
      n++;
      stack.push(...(children.get(stack.pop()) ?? []));
    }
    return n;
  };
  const ancestors = (id) => {
    let n = 0;
    for (let p = parentOf.get(id); p; p = parentOf.get(p)) n++;
    return n;
  };
  if (matchThread) {
    let best = Number.POSITIVE_INFINITY;
    for (const [sid, n] of replyCount) {
      const d = Math.abs(descendants(sid) - matchThread.descendants) + Math.abs(ancestors(sid) - matchThread.ancestors) + Math.abs(n - matchThread.replies);
      if (d < best) [best, threadId, threadReplies] = [d, sid, n];
    }
  } else for (const [sid, n] of replyCount) if (n > threadReplies) [threadId, threadReplies] = [sid, n];
  // The account whose statuses the `account` scenario pages: the first the viewer follows; for the growth check's
  // larger size, the one with the most statuses (a full page of 20, like the small seed's).
  let followedSample = 1;
  if (matchThread) {
    const n = new Map();
    for (const st of statuses) if (st.author >= 1 && st.author <= SHAPE.viewerFollows) n.set(st.author, (n.get(st.author) ?? 0) + 1);
    for (const [a, c] of n) if (c > (n.get(followedSample) ?? 0)) followedSample = a;
  }
  const threadDescendants = threadId ? descendants(threadId) : 0;
  const threadAncestors = threadId ? ancestors(threadId) : 0;
  w.insert(
    "statuses",
    [
      "id",
      "uri",
      "url",
      "account_id",
      "local",
      "in_reply_to_id",
      "in_reply_to_account_id",
      "reblog_of_id",
      "text",
      "content",
      "visibility",
      "language",
      "created_at",
      "updated_at",
    ],
    statuses.map((s) => {
      const a = everyone[s.author];
      const u = s.reblogOf ? `${uri(a)}/statuses/${s.id}/activity` : `${uri(a)}/statuses/${s.id}`;
      return [
        pad(s.id),
        u,
        s.reblogOf ? null : a.domain ? `https://${a.domain}/@${a.username}/${s.id}` : `${origin}/@${a.username}/${s.id}`,
        pad(a.id),
        a.domain ? 0 : 1,
        s.replyTo && pad(s.replyTo),
        s.replyToAccount && pad(s.replyToAccount),
        s.reblogOf && pad(s.reblogOf),
        s.text,
        s.content,
        s.visibility,
        s.reblogOf ? null : "en",
        s.at,
        s.at,
      ];
    }),
  );
  w.insert("mentions", ["id", "status_id", "account_id", "silent"], mentions);
  // Full-text search rows (src/services/statuses/search-index.ts writes them with each status; triggers fill statuses_fts).
  w.insert(
    "status_search",
    ["id", "text"],
    statuses.filter((s) => !s.reblogOf).map((s) => [Number(s.id), s.text]),
  );

  // Home feed: the 800 newest entries by the viewer or the accounts they follow.
  const inHome = (s) => s.author === 0 || (s.author >= 1 && s.author <= SHAPE.viewerFollows);
  const home = statuses.filter((s) => inHome(s) && s.visibility !== "direct").slice(-SHAPE.homeFeedRows);
  w.insert(
    "home_feed",
    ["account_id", "status_id", "reblog_of_id", "author_id"],
    home.map((s) => [pad(accounts[0].id), pad(s.id), s.reblogOf && pad(s.reblogOf), pad(accounts[s.author].id)]),
  );

  // Favourites: others on the viewer's statuses (notifications), the viewer on home-feed statuses.
  const favId = idGen();
  const favs = [];
  const favNotifs = [];
  const favPairs = new Set();
  for (let k = 0; k < SHAPE.favouritesOfViewer * 3 && favNotifs.length < SHAPE.favouritesOfViewer; k++) {
    const st = viewerStatuses[pick(viewerStatuses.length)];
    const from = 1 + pick(SHAPE.accounts - 1);
    const key = `${from}:${st.id}`;
    if (favPairs.has(key)) continue;
    favPairs.add(key);
    const at = Math.min(now - 1000, st.at + pick(DAY));
    const id = favId(at);
    favs.push([pad(id), pad(accounts[from].id), pad(st.id), at]);
    favNotifs.push({ from, at, status: st.id, activity: id });
  }
  const homeOriginals = home.filter((s) => !s.reblogOf && s.author !== 0);
  for (let k = 0; k < SHAPE.viewerFavourites && k < homeOriginals.length; k++) {
    const st = homeOriginals[homeOriginals.length - 1 - k * 3];
    if (!st) break;
    favs.push([pad(favId(st.at + 1000)), pad(accounts[0].id), pad(st.id), st.at + 1000]);
  }
  w.insert("favourites", ["id", "account_id", "status_id", "created_at"], favs);

  // Notifications for the viewer.
  const notifId = idGen();
  const notifs = [
    ...followerNotifs.map((n) => ({ ...n, type: "follow", status: null })),
    ...favNotifs.map((n) => ({ ...n, type: "favourite" })),
    ...mentionNotifs.map((n) => ({ ...n, type: "mention" })),
  ].sort((x, y) => x.at - y.at);
  w.insert(
    "notifications",
    ["id", "account_id", "from_account_id", "type", "status_id", "activity_id", "created_at"],
    notifs.map((n) => [pad(notifId(n.at)), pad(accounts[0].id), pad(everyone[n.from].id), n.type, n.status && pad(n.status), pad(n.activity), n.at]),
  );

  // OAuth: one app, a token for the viewer and for each poster account.
  const tokens = Array.from({ length: SHAPE.posters }, (_, i) => `bench-${i}-${randomBytes(24).toString("base64url")}`);
  insertAppTokens(w, {
    name: "Tern bench",
    clientId: `bench-${randomBytes(8).toString("hex")}`,
    clientSecret: randomBytes(16).toString("hex"),
    at: start,
    tokensAt: now - 1000,
    tokens: tokens.map((token, i) => ({ token, userId: userIds[i] })),
  });

  return {
    sql: w.toString(),
    viewer: { accountId: unpad(accounts[0].id), token: tokens[0] },
    // Ids the per-page scenarios address (bench/run.mjs): an account the viewer follows, a thread with replies.
    samples: { followedAccountId: unpad(accounts[followedSample].id), threadId, threadReplies, threadDescendants, threadAncestors },
    posterTokens: tokens,
    // Local accounts by index (0 is the viewer), padded ids: bench/posting.mjs makes some of them follow its posters.
    accountIds: accounts.map((a) => pad(a.id)),
    counts: {
      accounts: accounts.length,
      remoteAccounts: remote.length,
      remoteHosts: SHAPE.remoteHosts,
      statuses: statuses.length,
      follows: follows.length,
      homeFeed: home.length,
      notifications: notifs.length,
      favourites: favs.length,
      mentions: mentions.length,
    },
  };
}

/**
 * Local accounts as sign-up writes them: `accounts` are {id, username, at} with optional `displayName` (default: the
 * username) and `bio` (plain text; the note is it in a paragraph; default: none), created at `at`.
 */
function insertLocalAccounts(w, origin, accounts) {
  const uri = (a) => `${origin}/users/${a.username}`;
  w.insert(
    "accounts",
    [
      "id",
      "username",
      "domain",
      "display_name",
      "note",
      "note_source",
      "uri",
      "url",
      "inbox_url",
      "shared_inbox_url",
      "outbox_url",
      "followers_url",
      "following_url",
      "featured_url",
      "featured_tags_url",
      "discoverable",
      "created_at",
      "updated_at",
    ],
    accounts.map((a) => [
      pad(a.id),
      a.username,
      null,
      a.displayName ?? a.username,
      a.bio ? `<p>${a.bio}</p>` : "",
      a.bio ?? "",
      uri(a),
      `${origin}/@${a.username}`,
      `${uri(a)}/inbox`,
      `${origin}/inbox`,
      `${uri(a)}/outbox`,
      `${uri(a)}/followers`,
      `${uri(a)}/following`,
      `${uri(a)}/collections/featured`,
      `${uri(a)}/collections/tags`,
      1,
      a.at,
      a.at,
    ]),
  );
}

/**
 * Local users with their apps' tokens, for the benchmarks that post as accounts of their own (federation, posting):
 * one local account and user per name (ids from `accId`, created at `base` + its index, active at `now`), and one app
 * named `app` with a full-scope token for each, `bench-<prefix>-<username>-<random>`. Returns the accounts
 * ({username, id, at, userId}) and their tokens, in the order of `names`.
 */
export function insertTokenUsers(w, origin, { names, accId, base, now, app, prefix }) {
  const userId = idGen();
  const users = names.map((username, i) => ({ username, id: accId(base + i), at: base + i, userId: userId(base + i) }));
  insertLocalUsers(w, origin, users, base, now);
  const tokens = users.map((u) => `bench-${prefix}-${u.username}-${randomBytes(24).toString("base64url")}`);
  insertAppTokens(w, {
    name: app,
    clientId: `bench-${prefix}-${randomBytes(8).toString("hex")}`,
    clientSecret: randomBytes(16).toString("hex"),
    at: base,
    tokens: tokens.map((token, i) => ({ token, userId: users[i].userId })),
  });
  return { users, tokens };
}

/**
 * Local accounts with their users, as sign-up writes them, for the benchmarks' own seeds (streaming, soak, day): `accounts`
 * are {id, userId, username}; every row is created at `start` and was last active at `at`.
 */
export function insertLocalUsers(w, origin, accounts, start, at) {
  insertLocalAccounts(
    w,
    origin,
    accounts.map((a) => ({ ...a, at: start })),
  );
  insertUsers(w, accounts, () => start, at);
}

/**
 * The `users` rows of local accounts ({id, userId, username}): confirmed, approved, no usable password, created at
 * `createdAt(a)` and active at `activeAt`.
 */
function insertUsers(w, accounts, createdAt, activeAt) {
  w.insert(
    "users",
    [
      "id",
      "account_id",
      "email",
      "password_hash",
      "confirmed_at",
      "approved",
      "disabled",
      "settings",
      "current_sign_in_at",
      "last_active_at",
      "created_at",
      "updated_at",
    ],
    accounts.map((a) => {
      const c = createdAt(a);
      return [pad(a.userId), pad(a.id), `${a.username}@bench.test`, "bench-no-password", c, 1, 0, "{}", activeAt, activeAt, c, c];
    }),
  );
}

/** The columns of statusRow's rows. */
export const STATUS_COLUMNS = ["id", "uri", "url", "account_id", "local", "text", "content", "visibility", "language", "created_at", "updated_at"];

/** A public status in English (its content: the text in a paragraph), for the benchmarks' own seeds (day, federation). */
export function statusRow({ id, uri, url = uri, accountId, local, text, at }) {
  return [pad(id), uri, url, pad(accountId), local ? 1 : 0, text, `<p>${text}</p>`, "public", "en", at, at];
}

/**
 * Remote accounts as Tern stores fetched actors, `fetched_at` now so nothing refetches them. `accounts` are
 * {id, username, domain, actor, sharedInbox, at} (actor: the actor URI; sharedInbox: a URL or null), with optional
 * `displayName` and `url` (default: the username and the actor URI); the inbox, outbox, collections and key id hang
 * off the actor URI as a Mastodon actor's do. `publicKeyPem`: the key stored for every one of them (none by default).
 */
export function insertRemoteAccounts(w, accounts, { now, publicKeyPem = null, discoverable = null }) {
  w.insert(
    "accounts",
    [
      "id",
      "username",
      "domain",
      "display_name",
      "uri",
      "url",
      "inbox_url",
      "shared_inbox_url",
      "outbox_url",
      "followers_url",
      "following_url",
      "public_key_pem",
      "public_key_id",
      "discoverable",
      "created_at",
      "updated_at",
      "fetched_at",
    ],
    accounts.map((a) => [
      pad(a.id),
      a.username,
      a.domain,
      a.displayName ?? a.username,
      a.actor,
      a.url ?? a.actor,
      `${a.actor}/inbox`,
      a.sharedInbox,
      `${a.actor}/outbox`,
      `${a.actor}/followers`,
      `${a.actor}/following`,
      publicKeyPem,
      `${a.actor}#main-key`,
      discoverable,
      a.at,
      a.at,
      now,
    ]),
  );
}

/**
 * One OAuth app, created at `at`, and an access token with every scope (`read write follow push`) for each of
 * `tokens` ({token, userId}: the plain token and its user), created at `tokensAt`.
 */
export function insertAppTokens(w, { name, clientId, clientSecret, at, tokensAt = at, tokens }) {
  const scopes = "read write follow push";
  const appId = idGen()(at);
  w.insert(
    "oauth_applications",
    ["id", "name", "website", "redirect_uris", "scopes", "client_id", "client_secret", "created_at"],
    [[pad(appId), name, null, "urn:ietf:wg:oauth:2.0:oob", scopes, clientId, clientSecret, at]],
  );
  const tokId = idGen();
  w.insert(
    "oauth_access_tokens",
    ["id", "token_hash", "sealed", "application_id", "user_id", "scopes", "created_at"],
    tokens.map((t) => [pad(tokId(tokensAt)), sha256(t.token), null, pad(appId), pad(t.userId), scopes, tokensAt]),
  );
}

/** The local D1 file miniflare keeps under a --persist-to directory (exists once migrations have been applied). */
export function findD1File(persistDir) {
  const dir = join(persistDir, "v3", "d1", "miniflare-D1DatabaseObject");
  if (!existsSync(dir)) return null;
  const f = readdirSync(dir).find((n) => n.endsWith(".sqlite"));
  return f ? join(dir, f) : null;
}

/**
 * Loads the seed SQL into the local D1 while no server is running. The sqlite3 CLI (if installed) writes the file
 * directly in a second or two; otherwise `wrangler d1 execute --file` does the same through miniflare (slower).
 */
export function loadSeed({ persistDir, sql, cwd, log = () => {}, useCli = true }) {
  const file = join(persistDir, "bench-seed.sql");
  writeFileSync(file, `BEGIN;\n${sql}COMMIT;\n`);
  const db = findD1File(persistDir);
  const hasCli = spawnSync("sqlite3", ["-version"], { stdio: "ignore" }).status === 0;
  if (db && hasCli && useCli) {
    log(`seeding with sqlite3 into ${db}`);
    execFileSync("sqlite3", ["-bail", db, `.read ${file}`], { stdio: ["ignore", "inherit", "inherit"] });
    return "sqlite3";
  }
  // wrangler runs each file as one batch (no BEGIN/COMMIT allowed) and its local workerd falls over on very large
  // files, so the statements go in files of ~400 KB.
  log("seeding with wrangler d1 execute (no sqlite3 CLI found; this takes a minute or two)");
  const statements = sql.split(/;\n(?=INSERT INTO )/).map((x) => x.replace(/;?\s*$/, ";"));
  const files = [];
  let cur = [];
  let size = 0;
  for (const st of statements) {
    if (size + st.length > 400_000 && cur.length) {
      files.push(cur.join("\n"));
      cur = [];
      size = 0;
    }
    cur.push(st);
    size += st.length;
  }
  if (cur.length) files.push(cur.join("\n"));
  files.forEach((content, i) => {
    const f = join(persistDir, `bench-seed-${i}.sql`);
    writeFileSync(f, `${content}\n`);
    log(`  wrangler d1 execute ${i + 1}/${files.length}`);
    execFileSync("npx", ["wrangler", "d1", "execute", "DB", "--local", "--persist-to", persistDir, "--file", f, "--yes"], {
      cwd,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    });
  });
  return "wrangler";
}
