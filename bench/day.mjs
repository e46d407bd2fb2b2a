#!/usr/bin/env node
// `npm run bench:day` (issue 12, point 7, "A $0 day, measured"): replays one day of a single-user instance against a
// throwaway local Tern (entry bench/day-entry.js: Tern plus counters of every billed unit) and prints each quota line
// of the Workers free plan against what it counted. The day is compressed in time, not in counts:
//   instance: the owner, 300 remote followers on 120 hosts (shared inboxes), following 200 remote accounts (same
//   hosts), 400 of their statuses and 50 of the owner's already stored; remote servers are loopback stubs
//   (bench/fed-peers.mjs, 127.0.1.1…120) that answer 202 to every delivery;
//   the day: 20 posts by the owner (REST), 100 favourites + 100 boosts of remote statuses, 3,000 signed incoming
//   activities (Create, Like, Announce, Follow, Update, Delete; mix printed), 15 cron ticks (scaled to 1,440), two
//   clients: 2 × 144 poll bursts (every 5 min for 12 h: home since_id, notifications since_id, markers) and 4 app
//   opens each (8 requests), plus one `user` WebSocket each, open while the queues drain.
// Method: every HTTP request is sent alone, with the JOBS and DELIVERY consumers held (so nothing else runs), and the
// CPU of the workerd runtime (sum over its threads of /proc/<pid>/task/*/schedstat, ns) is read before it and after
// the invocation ended: when the response says work was left running (waitUntil: an inbox POST processes its activity
// after the 202, src/background/effects-runner.ts runAfterResponse), the bench waits for it (`?settle=1`, minus that control
// request's own CPU), so an inbox POST's figure is the request and its after-response processing. Then the held JOBS
// batches are let through ONE at a time (`?step=jobs`), each measured the same way, then the DELIVERY messages (one
// per invocation: a pack of ≤ DELIVERY_PACK inboxes or a single retry; per-inbox CPU = invocation ÷ inboxes); whatever is left
// after --delivery-steps drains freely (its CPU is total ÷ batches). Counts (requests, queue messages per type, D1
// rows, DO calls, R2 operations) come from the entry's counters. Each measured invocation's D1 round trips are counted
// too, and a calibration at the start (bad-token 401 minus no-token 401, as bench/run.mjs) gives the local CPU of one
// round trip: "≈ without local D1" = max(0, CPU − round trips × that), a rough estimate (printed next to each CPU row). Options: --fraction=F (replay F of the incoming
// activities, polls and owner actions, and scale the counts by 1/F), --delivery-steps=N (all), --dump=FILE (raw
// per-invocation figures as JSON), --d1-apart (D1 in its own process: CPU without SQLite), --dos-apart (the Durable
// Objects and R2 in another process too: the Worker's CPU without theirs, theirs printed apart), --queues-apart (the local
// queue simulator in that other process), --apart (all three: the Worker's CPU alone), --profile[=FILE] and
// --alloc[=survivors] (where the isolate spends its time or allocates, over the whole mix; below), --perf[=FILE] (what
// the runtime did inside the slowest invocations, with Linux perf; below), --media-cache=off (incoming media not cached:
// the same work as a tree from before the cache), --keep, --log.
// Takes ~5–8 minutes on 2 shared cores. bench/README.md, "What a single-user instance costs".
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { signedPostHeaders, startPeers } from "./fed-peers.mjs";
import { stubAccount } from "./fed-seed.mjs";
import {
  idGen,
  insertAppTokens,
  insertLocalUsers,
  insertRemoteAccounts,
  loadSeed,
  mulberry32,
  pad,
  SqlWriter,
  STATUS_COLUMNS,
  sha256,
  statusRow,
  unpad,
} from "./seed.mjs";
import { threadCpuMs } from "./cpu.mjs";
import { attachIsolate, reportAlloc, reportCpu, startAllocProfile, startCpuProfile } from "./inspector.mjs";
import { reportPerf, startPerf } from "./perf-tails.mjs";
import { root, startBenchServer } from "./server.mjs";
import { prepareBefore } from "./streaming-compare.mjs";

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const FRACTION = Math.min(1, Math.max(0.01, Number(opt("fraction") ?? 1)));
const DELIVERY_STEPS = Number(opt("delivery-steps") ?? Number.POSITIVE_INFINITY);
// --threads=js: count only workerd's main thread, where the isolates run JavaScript (and local D1's SQLite), leaving
// out V8's background threads (concurrent GC, optimizing compiles) and the runtime's I/O threads.
const JS_THREAD_ONLY = opt("threads") === "js";
// --d1-apart: local D1 served by its own workerd process (bench/d1-host.mjs, reached through bench/d1-remote.js), so
// the measured workerd's CPU leaves SQLite out, as production bills D1 apart; what remains is the Worker, the D1
// binding's work in it (sending statements, parsing results) and the Durable Objects it calls.
// --dos-apart: the Durable Objects served by another workerd process as well (bench/services-host.mjs, the same
// bundle, reached through bench/do-remote.js; implies --d1-apart), so the measured workerd's CPU leaves out theirs, as
// production bills each object call as an invocation of its own; that process's CPU is read around each measured
// invocation too and printed apart (what the invocation caused there). R2 is served there too (bench/r2-remote.js,
// since 2026-11-29): local R2's simulator writes each object to disk in whichever process calls it, and production
// bills R2 apart.
// --queues-apart: the queues' local simulator (Miniflare's broker) in that other process too (bench/queue-remote.js:
// sends go there, its relay hands each batch back to the measured Worker), as Queues is a service of its own.
// --apart: --d1-apart, --dos-apart and --queues-apart: what the measured workerd runs is the Worker (and Miniflare's
// entry router in front of it, the no-op baseline).
const APART = flag("apart");
const DOS_APART = APART || flag("dos-apart");
const QUEUES_APART = APART || flag("queues-apart");
const D1_APART = flag("d1-apart") || DOS_APART || QUEUES_APART;
// --profile[=FILE] or --alloc: a V8 CPU (or sampling heap) profile of Tern's isolate over the whole replay after the
// calibration (bench/inspector.mjs; the bundle unminified, the inspector on), printed per measured invocation. The
// inspector costs CPU of its own: read the shares, not the CPU figures, of such a run.
const PROFILE = flag("profile") || opt("profile") !== undefined;
// --alloc=survivors: only what outlived a scavenge (what the young generation's collections copy and promote).
const ALLOC = flag("alloc") || opt("alloc") === "survivors";
// --perf[=FILE]: Linux perf on the measured workerd over the replay (bench/perf-tails.mjs): what the runtime did inside
// the slowest invocations, and per kind (collections, objects destroyed, RSA, fetch, JavaScript), where the V8
// profile sees only JavaScript. Needs \`perf\` (Debian: linux-perf) and permission to trace the process.
const PERF = flag("perf") || opt("perf") !== undefined;
// --heap: the V8 heap of Tern's isolate after each phase (garbage not yet collected included: workerd's inspector does
// not answer HeapProfiler.collectGarbage), with the measured workerd's resident memory beside it. Workers give an
// isolate 128 MB.
const HEAP = flag("heap");
// --report-every=N: RATE_LIMIT_REPORT_EVERY for the run (1: the RateLimiter asked on every request, as before issue 34).
// --verify-only: stop after the baselines, the calibration and issue 34's verify_credentials ÷ no-op ratio (~1 minute).
const VERIFY_ONLY = flag("verify-only");
/** Issue 34 point 3: a signed-in verify_credentials costs at most this many no-op requests of the measured workerd. */
const VERIFY_RATIO_GOAL = 2.5;
/** Rounds of no-op and verify_credentials batches, alternating (--verify-rounds=N). */
const VERIFY_ROUNDS = Math.max(1, Number(opt("verify-rounds") ?? 4));
const SURVIVORS = opt("alloc") === "survivors";
// --src=<commit>: the same bench entry on that commit's src/ and schema (its migrations/; bench/day-compare.mjs: the
// "before" side of issue 34 point 2, served the same way in the same sitting). The entry and the modules it imports
// are the working tree's; the seed is this tree's (it writes no column or table the before commits lack).
const SRC_REV = opt("src");
const DAY_ENTRY_FILES = ["day-entry.js", "entry-counters.js", "d1-remote.js", "do-remote.js", "queue-remote.js", "r2-remote.js"];

const DAY = 86_400_000;
const HOSTS = 120;
const FOLLOWERS = 300;
const FOLLOWING = 200;
const STRANGERS = 100; // remote accounts that Follow the owner during the day
/**
 * Remote media (issue 32): a quarter of the incoming notes carry one photo (a 1280×960 JPEG), and the accounts first
 * seen during the day (the strangers who follow) have an avatar and a header, all served by the peers and fetched into
 * R2 by Tern's media cache (REMOTE_MEDIA_CACHE). Cached copies live MEDIA_CACHE_RETENTION_DAYS (7): the R2 storage
 * line is the day's bytes × 7.
 */
const DAY_MEDIA = { photoShare: 0.25, retentionDays: 7 };
const OWNER_OLD_STATUSES = 50;
const REMOTE_STATUSES_PER_FOLLOWED = 2;
const DAY_PLAN = {
  posts: 20,
  favourites: 100,
  boosts: 100,
  incoming: 3000,
  mix: { Create: 0.47, Like: 0.2, Announce: 0.17, Follow: 0.03, Update: 0.065, Delete: 0.065 },
  cronTicks: 15,
  cronPerDay: 1440,
  clients: 2,
  pollBursts: 144, // per client: every 5 min for 12 h
  appOpens: 4, // per client per day
  idleHours: 12, // sockets open, hibernated
  tokenCheckMinutes: 5, // src/streaming/hub.ts TOKEN_CHECK_MS: one alarm per signed-in hub
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.error("[bench:day]", ...a);
const fmt = (n, d = 0) =>
  n === null || n === undefined || Number.isNaN(n) ? "–" : Number(n).toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });

// ---- CPU of the workerd runtime, from outside ----

function procStat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = s.lastIndexOf(")");
    return { pid, comm: s.slice(s.indexOf("(") + 1, close), ppid: Number(s.slice(close + 2).split(" ")[1]) };
  } catch {
    return null;
  }
}

/** workerd processes under rootPid (or rootPid itself), without the proxy serving `port` when there is another. */
function runtimePids(rootPid, port) {
  const all = readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map((n) => procStat(Number(n)))
    .filter(Boolean);
  const kids = new Map();
  for (const p of all) kids.set(p.ppid, [...(kids.get(p.ppid) ?? []), p]);
  const found = [];
  const self = procStat(rootPid);
  if (self?.comm.includes("workerd")) found.push(rootPid);
  const stack = [rootPid];
  while (stack.length) {
    for (const c of kids.get(stack.pop()) ?? []) {
      if (c.comm.includes("workerd")) found.push(c.pid);
      stack.push(c.pid);
    }
  }
  const runtime = found.filter((pid) => {
    try {
      return !readFileSync(`/proc/${pid}/cmdline`, "utf8")
        .split("\0")
        .some((a) => new RegExp(`^--socket-addr=entry=[^=]*:${port}$`).test(a));
    } catch {
      return false;
    }
  });
  return runtime.length ? runtime : found;
}

/** Nanoseconds on CPU, summed over every thread (with --threads=js, the main thread) of the given processes. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const cpuNs = (pids) => (threadCpuMs(pids, { thread: JS_THREAD_ONLY ? "workerd" : undefined }) ?? 0) * 1e6;

// ---- seed ----

function buildDaySeed({ origin, peerPort, publicKeyPem, now = Date.now() }) {
  const w = new SqlWriter();
  const start = now - 30 * DAY;
  const accId = idGen();
  const owner = { id: accId(start), userId: idGen()(start), username: "owner" };
  insertLocalUsers(w, origin, [owner], start, now);
  const ownerUri = `${origin}/users/owner`;

  const tokens = ["poster", "client1", "client2"].map((n) => `bench-day-${n}-${sha256(`${owner.id}:${n}:${now}`).slice(0, 32)}`);
  insertAppTokens(w, {
    name: "Tern day bench",
    clientId: "bench-day",
    clientSecret: "bench-day-secret",
    at: start,
    tokens: tokens.map((token) => ({ token, userId: owner.userId })),
  });

  const remote = [];
  const mk = (prefix, i) => {
    const at = start + 1000 + remote.length * 10;
    const a = stubAccount({ h: (i % HOSTS) + 1, peerPort, username: `${prefix}${i}`, id: accId(at), at });
    remote.push(a);
    return a;
  };
  const followers = Array.from({ length: FOLLOWERS }, (_, i) => mk("f", i));
  const followed = Array.from({ length: FOLLOWING }, (_, i) => mk("a", i));
  const strangers = Array.from({ length: STRANGERS }, (_, i) => mk("x", i));
  insertRemoteAccounts(w, remote, { now, publicKeyPem });
  const followId = idGen();
  w.insert(
    "follows",
    ["id", "account_id", "target_account_id", "show_reblogs", "notify", "created_at"],
    [
      ...followers.map((f) => [pad(followId(f.at)), pad(f.id), pad(owner.id), 1, 0, f.at]),
      ...followed.map((f) => [pad(followId(f.at + 1)), pad(owner.id), pad(f.id), 1, 0, f.at + 1]),
    ],
  );

  const stId = idGen();
  const remoteStatuses = [];
  const srows = [];
  followed.forEach((a, i) => {
    for (let k = 0; k < REMOTE_STATUSES_PER_FOLLOWED; k++) {
      const at = now - 2 * DAY + (i * REMOTE_STATUSES_PER_FOLLOWED + k) * 60_000;
      const id = stId(at);
      const uri = `${a.actor}/statuses/seed-${k}`;
      const text = `Seeded remote status ${k} by ${a.actor}`;
      srows.push(statusRow({ id, uri, accountId: a.id, local: false, text, at }));
      remoteStatuses.push({ id: unpad(id), uri, author: a });
    }
  });
  const ownerStatuses = [];
  for (let k = 0; k < OWNER_OLD_STATUSES; k++) {
    const at = now - 3 * DAY + k * 3_600_000;
    const id = stId(at);
    const text = `Owner's older status ${k}`;
    srows.push(statusRow({ id, uri: `${ownerUri}/statuses/${unpad(id)}`, url: `${origin}/@owner/${unpad(id)}`, accountId: owner.id, local: true, text, at }));
    ownerStatuses.push({ id: unpad(id), uri: `${ownerUri}/statuses/${unpad(id)}` });
  }
  w.insert("statuses", STATUS_COLUMNS, srows);
  return { sql: w.toString(), owner: { ...owner, uri: ownerUri }, tokens, followers, followed, strangers, remoteStatuses, ownerStatuses };
}

// ---- incoming activities ----

function buildActivities(seed, n, rnd) {
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
  const weights = Object.entries(DAY_PLAN.mix);
  const choose = () => {
    let x = rnd();
    for (const [k, w] of weights) {
      x -= w;
      if (x < 0) return k;
    }
    return "Create";
  };
  const AS = "https://www.w3.org/ns/activitystreams";
  const PUBLIC = `${AS}#Public`;
  const acts = [];
  const live = []; // notes created (and not deleted) so far
  const liked = new Set();
  const announced = new Set();
  let strangerNext = 0;
  let noteSeq = 0;
  // A quarter of the day's notes carry a photo (what Tern's media cache fetches into R2: DAY_MEDIA), with its sizes and
  // blurhash, as Mastodon, GoToSocial and Misskey send them.
  const note = (author, id, text, mention, photo = false) => ({
    id,
    type: "Note",
    attributedTo: author.actor,
    content: `<p>${text}</p>`,
    ...(photo
      ? {
          attachment: [
            {
              type: "Document",
              mediaType: "image/jpeg",
              url: `http://${author.domain}/media/photo-${id.split("/").pop()}.jpg`,
              width: 1280,
              height: 960,
              name: "a photo",
              blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
            },
          ],
        }
      : {}),
    to: [PUBLIC],
    cc: [`${author.actor}/followers`, ...(mention ? [seed.owner.uri] : [])],
    published: new Date().toISOString(),
    // A page URL other than the id, as Mastodon's (https://host/@name/123 for https://host/users/name/statuses/123).
    url: id.replace("/users/", "/@").replace("/statuses/", "/"),
    ...(mention ? { tag: [{ type: "Mention", href: seed.owner.uri, name: "@owner" }] } : {}),
  });
  const ownerTargets = () => [...seed.ownerStatuses, ...seed.posted];
  while (acts.length < n) {
    let type = choose();
    if ((type === "Update" || type === "Delete") && live.length === 0) type = "Create";
    if (type === "Follow" && strangerNext >= seed.strangers.length) type = "Like";
    const k = acts.length;
    if (type === "Create") {
      const a = pick(seed.followed);
      const id = `${a.actor}/statuses/day-${noteSeq++}`;
      const mention = rnd() < 0.1;
      const photo = rnd() < DAY_MEDIA.photoShare;
      acts.push({
        type,
        actor: a,
        body: {
          "@context": AS,
          id: `${id}/activity`,
          type: "Create",
          actor: a.actor,
          to: [PUBLIC],
          object: note(a, id, `Day note ${k} from ${a.actor}`, mention, photo),
        },
      });
      live.push({ id, author: a, mention, photo });
    } else if (type === "Update") {
      const x = live[Math.floor(rnd() * live.length)];
      const obj = { ...note(x.author, x.id, `Day note edited (${k})`, x.mention, x.photo), updated: new Date(Date.now() + k).toISOString() };
      acts.push({
        type,
        actor: x.author,
        body: { "@context": AS, id: `${x.id}#updates/${k}`, type: "Update", actor: x.author.actor, to: [PUBLIC], object: obj },
      });
    } else if (type === "Delete") {
      const i = Math.floor(rnd() * live.length);
      const x = live.splice(i, 1)[0];
      acts.push({
        type,
        actor: x.author,
        body: { "@context": AS, id: `${x.id}#delete`, type: "Delete", actor: x.author.actor, to: [PUBLIC], object: { id: x.id, type: "Tombstone" } },
      });
    } else if (type === "Like") {
      let a;
      let s;
      for (let tries = 0; tries < 50; tries++) {
        a = pick(seed.followers);
        s = pick(ownerTargets());
        if (!liked.has(`${a.actor} ${s.uri}`)) break;
      }
      liked.add(`${a.actor} ${s.uri}`);
      acts.push({ type, actor: a, body: { "@context": AS, id: `${a.actor}#likes/${k}`, type: "Like", actor: a.actor, object: s.uri } });
    } else if (type === "Announce") {
      const a = pick(seed.followed);
      // 70% boosts of statuses by other followed accounts (stored here), 30% of the owner's statuses.
      let s;
      for (let tries = 0; tries < 50; tries++) {
        s = rnd() < 0.7 ? pick(seed.remoteStatuses) : pick(ownerTargets());
        if (s.author !== a && !announced.has(`${a.actor} ${s.uri}`)) break;
      }
      announced.add(`${a.actor} ${s.uri}`);
      acts.push({
        type,
        actor: a,
        body: {
          "@context": AS,
          id: `${a.actor}/statuses/boost-${k}/activity`,
          type: "Announce",
          actor: a.actor,
          to: [PUBLIC],
          cc: [`${a.actor}/followers`],
          object: s.uri,
          published: new Date().toISOString(),
        },
      });
    } else if (type === "Follow") {
      const a = seed.strangers[strangerNext++];
      acts.push({ type, actor: a, body: { "@context": AS, id: `${a.actor}#follows/${k}`, type: "Follow", actor: a.actor, object: seed.owner.uri } });
    }
  }
  return acts;
}

// ---- helpers ----

/** The peers' media files: blurred noise as JPEG, about the size of a phone photo's web copy, an avatar and a header. */
async function dayMediaFiles() {
  const { default: sharp } = await import("sharp");
  const jpeg = (w, h) =>
    sharp(randomBytes(w * h * 3), { raw: { width: w, height: h, channels: 3 } })
      .blur(2)
      .jpeg({ quality: 80 })
      .toBuffer();
  const [photo, avatar, header] = await Promise.all([jpeg(1280, 960), jpeg(400, 400), jpeg(1500, 500)]);
  const files = { photo, avatar, header };
  log(
    `remote media: photo ${(photo.length / 1024).toFixed(0)} KB, avatar ${(avatar.length / 1024).toFixed(0)} KB, header ${(header.length / 1024).toFixed(0)} KB`,
  );
  return {
    files,
    serve: (path) => {
      const m = /^\/media\/(photo|avatar|header)-[\w.-]+\.jpg$/.exec(path);
      return m ? { type: "image/jpeg", bytes: files[m[1]] } : null;
    },
  };
}

function summary(values) {
  const s = [...values].sort((a, b) => a - b);
  const q = (p) => (s.length ? s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] : Number.NaN);
  return {
    n: s.length,
    p50: q(0.5),
    p99: q(0.99),
    max: s.length ? s[s.length - 1] : Number.NaN,
    mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : Number.NaN,
  };
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...String(r[i])].length)));
  return rows
    .map((r, j) => {
      const line = `| ${r.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
      return j === 0 ? `${line}\n| ${widths.map((w) => "-".repeat(w)).join(" | ")} |` : line;
    })
    .join("\n");
}

// ---- main ----

async function main() {
  const t00 = Date.now();
  const rnd = mulberry32(7);
  const media = await dayMediaFiles();
  const peers = await startPeers({ hosts: HOSTS, files: media.serve });
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const publicKeyPem = publicKey.export({ type: "spki", format: "pem" });
  let seed;
  log(`peers on port ${peers.port} (${peers.mode}); seeding and starting Tern ...`);
  const big = "1000000";
  let entry = join(root, "bench", "day-entry.js");
  let migrationsDir = null;
  if (SRC_REV) {
    // The commit's src/ on its own schema (migrations/): an index added or dropped since counts on one side only.
    const before = prepareBefore(root, SRC_REV, DAY_ENTRY_FILES, { migrations: true });
    if (before.error) throw new Error(before.error);
    entry = before.entry;
    migrationsDir = before.migrationsDir;
    log(`--src=${SRC_REV}: Tern's src/ and migrations/ of ${before.sha.slice(0, 12)}, this tree's bench entry`);
  }
  const server = await startBenchServer({
    keep: flag("keep"),
    log: flag("log"),
    entry,
    migrationsDir,
    d1Apart: D1_APART,
    dosApart: DOS_APART,
    queuesApart: QUEUES_APART,
    inspect: PROFILE || ALLOC || HEAP,
    // Every /api request counted by the RateLimiter object as in production (no loopback safelist); the budgets are
    // raised so the compressed day is never refused (the object is still called once per request).
    vars: {
      ALLOW_LOOPBACK_FETCH: "true",
      // --media-cache=off: incoming media stay on their servers (the work before issue 32 cached them), so a day of
      // an older tree and this one do the same work (day-compare.mjs passes it to both).
      REMOTE_MEDIA_CACHE: opt("media-cache") === "off" ? "false" : "true",
      RATE_LIMIT_SAFELIST: "none",
      // --report-every=1: every request asks the RateLimiter object, as before issue 34 (default: Tern's, 10).
      ...(opt("report-every") ? { RATE_LIMIT_REPORT_EVERY: opt("report-every") } : {}),
      RATE_LIMIT_API_PER_ACCOUNT: big,
      RATE_LIMIT_API_PER_TOKEN: big,
      RATE_LIMIT_API_PER_IP: big,
      RATE_LIMIT_PAGING: big,
      RATE_LIMIT_STATUSES: big,
      RATE_LIMIT_FAVOURITES: big,
      RATE_LIMIT_FOLLOWS: big,
    },
    seed: (persistTo, origin) => {
      seed = buildDaySeed({ origin, peerPort: peers.port, publicKeyPem });
      // The strangers this replay's Follows will bring (they follow in order): first seen today, so their pictures are due.
      const newcomers = seed.strangers.slice(0, Math.ceil(STRANGERS * FRACTION));
      seed.sql += newcomers
        .map(
          (a) =>
            `UPDATE accounts SET avatar_remote_url = 'http://${a.domain}/media/avatar-${a.username}.jpg', header_remote_url = 'http://${a.domain}/media/header-${a.username}.jpg'  WHERE id = '${pad(a.id)}';\n`,
        )
        .join("");
      log(`seeded with ${loadSeed({ persistDir: persistTo, sql: seed.sql, cwd: root, log })}`);
    },
  });
  const base = server.url;
  const port = Number(new URL(base).port);
  const pids = runtimePids(server.pid, port);
  const canCpu = pids.length > 0;
  log(`Tern at ${base}; workerd runtime pid(s) ${pids.join(",") || "none found: no CPU figures"}`);
  // --dos-apart / --queues-apart: the services process's workerd (no proxy in front of it: port 0 matches none).
  const servicesPids = server.servicesPid ? runtimePids(server.servicesPid, 0) : [];
  if (server.servicesPid) log(`services process's workerd pid(s) ${servicesPids.join(",") || "none found: no CPU figures for it"}`);
  const servicesNs = () => (servicesPids.length ? cpuNs(servicesPids) : 0);
  let controls = 0; // control requests sent (each costs the services process ctlServices with --dos-apart)
  const control = async (q = "") => {
    controls++;
    const res = await fetch(`${base}/__bench/day${q ? `?${q}` : ""}`, { signal: AbortSignal.timeout(180_000) });
    if (!res.ok) throw new Error(`/__bench/day answered ${res.status}`);
    return res.json();
  };
  const auth = (i) => ({ authorization: `Bearer ${seed.tokens[i]}` });
  // fetch: kind → CPU of the whole invocation (after-response work included); response: kind → CPU until the
  // response (only requests that left work running); delivery: one entry per DELIVERY invocation.
  const cpu = { fetch: {}, response: {}, jobs: [], delivery: [], deliveryBatch: [], cron: { light: [], heavy: [] } };
  // D1 round trips of each measured invocation, in the same places and order as its CPU in `cpu` (NaN: not known).
  const rts = { fetch: {}, jobs: [], delivery: [], cron: { light: [], heavy: [] } };
  // --dos-apart / --queues-apart: the services process's CPU during each measured invocation (its share of the control request's
  // subtracted), in the same places and order as `cpu`.
  const servicesCpu = { fetch: {}, jobs: [], delivery: [], cron: { light: [], heavy: [] } };
  let ctlServices = 0; // the control request's CPU in the services process (it reads the objects' counters), p50
  const statuses = {};
  const notes = [];
  let ctlCpu = 0; // the control request's own CPU (p50), measured below
  // Each measured invocation's span, µs on the monotonic clock (perf's samples are placed on it): { kind, ms, from, to }.
  const windows = [];
  let verifyRatio = null; // issue 34 point 3, from the calibration: { verify, noop (ms), ratio, rt, dos }

  /**
   * One request, alone, with workerd's CPU read before it and once its invocation has ended: after the response, or,
   * when the response says it left work running (`x-bench-after`, day-entry.js), once that work is done (`?settle=1`,
   * whose own CPU is subtracted).
   */
  async function measured(kind, url, init = {}) {
    const from = nowUs();
    const c0 = canCpu ? cpuNs(pids) : 0;
    const o0 = servicesNs();
    let status;
    let body = null;
    let after = 0;
    let rt0 = Number.NaN;
    let rt = Number.NaN;
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
      status = res.status;
      after = Number(res.headers.get("x-bench-after") ?? 0);
      rt0 = Number(res.headers.get("x-bench-rt0") ?? Number.NaN);
      rt = Number(res.headers.get("x-bench-rt") ?? Number.NaN) - rt0;
      const text = await res.text();
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    } catch (e) {
      status = `network: ${e.cause?.code ?? e.message}`;
    }
    let ms = canCpu ? (cpuNs(pids) - c0) / 1e6 : null;
    if (after > 0) {
      if (ms !== null) {
        cpu.response[kind] ??= [];
        cpu.response[kind].push(ms);
      }
      const st = await control("settle=1");
      if (!st.settle?.ok && notes.length < 8) notes.push(`${kind}: work after the response still pending after ${st.settle?.ms} ms`);
      if (ms !== null) ms = (cpuNs(pids) - c0) / 1e6 - ctlCpu;
      rt = Number(st.d1n) - rt0; // the after-response work's round trips included
    }
    if (ms !== null) {
      windows.push({ kind, ms, from, to: nowUs() });
      cpu.fetch[kind] ??= [];
      cpu.fetch[kind].push(ms);
      rts.fetch[kind] ??= [];
      rts.fetch[kind].push(rt);
      servicesCpu.fetch[kind] ??= [];
      servicesCpu.fetch[kind].push((servicesNs() - o0) / 1e6 - (after > 0 ? ctlServices : 0));
    }
    const key = `${kind} ${status}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
    return { status, body };
  }

  try {
    // ---- warm-up (not counted): isolate start, the instance actor's and the owner's key pairs ----
    for (const p of ["/bench-noop", "/actor", "/users/owner"]) {
      await fetch(`${base}${p}`, { headers: { accept: "application/activity+json" } })
        .then((r) => r.arrayBuffer())
        .catch(() => {});
    }
    await fetch(`${base}/api/v1/accounts/verify_credentials`, { headers: auth(0) }).then((r) => r.arrayBuffer());
    await sleep(1500);
    // Baselines: a request Tern answers 404 without D1 (the runtime's own cost per request), and the control request.
    const noop = [];
    const ctl = [];
    const ctlS = [];
    for (let i = 0; i < 30; i++) {
      let c0 = cpuNs(pids);
      await fetch(`${base}/bench-noop`).then((r) => r.arrayBuffer());
      noop.push((cpuNs(pids) - c0) / 1e6);
      c0 = cpuNs(pids);
      const o0 = servicesNs();
      await control();
      ctl.push((cpuNs(pids) - c0) / 1e6);
      ctlS.push((servicesNs() - o0) / 1e6);
    }
    const noopCpu = summary(noop).p50;
    ctlCpu = summary(ctl).p50;
    ctlServices = summary(ctlS).p50;
    log(
      `baselines: no-op request ${noopCpu.toFixed(2)} ms CPU, control request ${ctlCpu.toFixed(2)} ms` +
        (servicesPids.length ? ` (and ${ctlServices.toFixed(2)} ms in the services process)` : ""),
    );

    // Calibration of one local D1 round trip (as bench/run.mjs): N requests with an unknown token (one indexed lookup
    // that finds nothing, then 401) minus N no-op requests (404, no D1), each batch sent one request at a time.
    const CAL_N = 200;
    const calBatch = async (path, headers) => {
      const k0 = await control();
      const c0 = cpuNs(pids);
      let rtSum = 0;
      const st = {};
      for (let i = 0; i < CAL_N; i++) {
        const res = await fetch(`${base}${path}`, { headers });
        await res.arrayBuffer();
        st[res.status] = (st[res.status] ?? 0) + 1;
        rtSum += Number(res.headers.get("x-bench-rt") ?? 0) - Number(res.headers.get("x-bench-rt0") ?? 0);
      }
      const ms = (cpuNs(pids) - c0) / 1e6 - ctlCpu;
      const k1 = await control();
      const doCalls = (k) => Object.values(k.dos ?? {}).reduce((a, d) => a + d.requests, 0);
      return { ms, rt: rtSum / CAL_N, statuses: st, dos: (doCalls(k1) - doCalls(k0)) / CAL_N };
    };
    const calNoop = await calBatch("/bench-noop", {});
    const calBad = await calBatch("/api/v1/accounts/verify_credentials", { authorization: "Bearer nope" });
    // Here every /api request also calls the RateLimiter object (no loopback safelist): when the same request without a
    // token makes the same object calls and no round trip, it is the baseline instead, so one round trip is all that differs.
    const calAnon = await calBatch("/api/v1/accounts/verify_credentials", {});
    const perRtOf = (b) => (canCpu ? Math.max(0, calBad.ms - b.ms) / CAL_N / Math.max(1, calBad.rt - b.rt) : null);
    const anonFits = calAnon.rt === 0 && calAnon.dos === calBad.dos;
    const perRt = perRtOf(anonFits ? calAnon : calNoop);
    const cal = { n: CAL_N, perRt, perRtNoop: perRtOf(calNoop), anonFits, noop: calNoop, bad: calBad, anon: calAnon };
    log(
      `D1 calibration: bad token ${(calBad.ms / CAL_N).toFixed(2)} ms (${calBad.rt} RT, ${calBad.dos} DO calls, ${JSON.stringify(calBad.statuses)}), ` +
        `no-op ${(calNoop.ms / CAL_N).toFixed(2)} ms (${calNoop.rt} RT, ${JSON.stringify(calNoop.statuses)}), ` +
        `no token ${(calAnon.ms / CAL_N).toFixed(2)} ms (${calAnon.rt} RT, ${calAnon.dos} DO calls, ${JSON.stringify(calAnon.statuses)}) → ` +
        `${perRt?.toFixed(2)} ms per round trip (${anonFits ? "bad token − no token" : "bad token − no-op"}; bad token − no-op ${cal.perRtNoop?.toFixed(2)})`,
    );

    // Issue 34 point 3: verify_credentials with a valid token (the RateLimiter and the token lookup as in production:
    // no safelist, budgets raised) against the no-op 404, in the same sitting; after a warm batch so its tokens are known.
    // The no-op's own CPU moves by a third between batches on a shared machine, so the two alternate for VERIFY_ROUNDS
    // rounds of CAL_N each and the ratio is of the sums (the calibration's no-op batch above is the first round's).
    await calBatch("/api/v1/accounts/verify_credentials", auth(1));
    const vRounds = [];
    for (let i = 0; i < VERIFY_ROUNDS; i++) {
      const noop = i === 0 ? calNoop : await calBatch("/bench-noop", {});
      vRounds.push({ noop, verify: await calBatch("/api/v1/accounts/verify_credentials", auth(1)) });
    }
    const calVerify = vRounds.at(-1).verify;
    const vMs = vRounds.reduce((a, r) => a + r.verify.ms, 0) / (VERIFY_ROUNDS * CAL_N);
    const nMs = vRounds.reduce((a, r) => a + r.noop.ms, 0) / (VERIFY_ROUNDS * CAL_N);
    const ratio = vMs / Math.max(1e-9, nMs);
    const perRound = vRounds.map((r) => (r.verify.ms / Math.max(1e-9, r.noop.ms)).toFixed(2)).join(", ");
    verifyRatio = { verify: vMs, noop: nMs, ratio, rt: calVerify.rt, dos: calVerify.dos, rounds: VERIFY_ROUNDS, perRound };
    if (opt("dump") && VERIFY_ONLY) writeFileSync(opt("dump"), JSON.stringify({ verify: verifyRatio }));
    console.log(
      `verify_credentials ${vMs.toFixed(2)} ms (${calVerify.rt} RT, ${calVerify.dos} DO calls, ${JSON.stringify(calVerify.statuses)}) ÷ ` +
        `no-op ${nMs.toFixed(2)} ms = ${ratio.toFixed(2)}× ${ratio <= VERIFY_RATIO_GOAL ? "✓" : "✗"} (goal ≤ ${VERIFY_RATIO_GOAL}×${apartLabel()}; ` +
        `${VERIFY_ROUNDS} alternating rounds of ${CAL_N}, each round's ratio ${perRound})`,
    );
    if (VERIFY_ONLY) return;

    const perfFile = PERF ? (typeof opt("perf") === "string" ? opt("perf") : join(tmpdir(), "tern-day.perf")) : null;
    const stopPerf = PERF && canCpu ? await startPerf(pids[0], perfFile) : null;
    if (PERF) log(stopPerf ? `perf recording workerd ${pids[0]} into ${perfFile}` : "--perf: perf cannot record here (not installed, or not permitted)");
    let stopProfile = null;
    let isolate = null;
    if (HEAP) isolate = await attachIsolate(server.inspectorPort);
    const heapMark = async (label) => {
      if (!HEAP) return;
      const { usedSize, totalSize } = (await isolate.cdp("Runtime.getHeapUsage")).result;
      const rss = pids.map((p) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0) / 1024);
      log(
        `heap after ${label}: ${(usedSize / 2 ** 20).toFixed(1)} MiB used of ${(totalSize / 2 ** 20).toFixed(1)}; workerd RSS ${rss.map((r) => r.toFixed(0)).join(" + ")} MiB`,
      );
    };
    await heapMark("the calibration");
    if (PROFILE || ALLOC) {
      isolate = await attachIsolate(server.inspectorPort);
      stopProfile = await (ALLOC ? startAllocProfile(isolate, { survivors: SURVIVORS }) : startCpuProfile(isolate));
      log(`profiling Tern's isolate (${ALLOC ? "allocation" : "CPU"}): its CPU figures below include the inspector's cost`);
    }

    // ---- streaming: two clients, one `user` socket each, one subscribe message each ----
    const events = {};
    const sockets = await Promise.all(
      [1, 2].map(
        (i) =>
          new Promise((resolve, reject) => {
            const ws = new WebSocket(`${base.replace(/^http/, "ws")}/api/v1/streaming?stream=user`, { headers: auth(i), perMessageDeflate: false });
            ws.on("open", () => {
              ws.send(JSON.stringify({ type: "subscribe", stream: "user:notification" }));
              resolve(ws);
            });
            ws.on("message", (data) => {
              try {
                const m = JSON.parse(String(data));
                const k = m.event ?? (m.error ? "error" : "?");
                events[k] = (events[k] ?? 0) + 1;
              } catch {
                events.unparsed = (events.unparsed ?? 0) + 1;
              }
            });
            ws.on("error", reject);
          }),
      ),
    );
    await sleep(500);
    await control("reset=1&hold=jobs,delivery");
    const servicesDay0 = { ns: servicesNs(), controls };
    // The sockets' opening (2 Worker requests, 2 hub fetches, router writes) and subscribe messages happened before
    // the reset: count them as the day's (the two upgrades are added below from this snapshot).
    const t0 = Date.now();
    const phases = [];
    const snap = async (name) => {
      const s = await control();
      phases.push({ name, s, at: Date.now() });
      if (s.inflight > 0 && notes.length < 8) notes.push(`${name}: ${s.inflight} waitUntil promise(s) still pending`);
      return s;
    };

    // ---- the owner: posts, favourites, boosts ----
    const nPosts = Math.round(DAY_PLAN.posts * FRACTION);
    seed.posted = [];
    for (let i = 0; i < nPosts; i++) {
      const r = await measured("post", `${base}/api/v1/statuses`, {
        method: "POST",
        headers: { ...auth(0), "content-type": "application/json" },
        body: JSON.stringify({ status: `Owner's post ${i} of the day: hello to 300 followers`, visibility: "public" }),
      });
      if (r.body?.uri) seed.posted.push({ id: r.body.id, uri: r.body.uri });
    }
    const nFav = Math.round(DAY_PLAN.favourites * FRACTION);
    const nBoost = Math.round(DAY_PLAN.boosts * FRACTION);
    for (let i = 0; i < nFav + nBoost; i++) {
      const st = seed.remoteStatuses[i];
      const what = i < nFav ? "favourite" : "reblog";
      await measured(what, `${base}/api/v1/statuses/${st.id}/${what}`, { method: "POST", headers: auth(0) });
    }
    await snap("owner actions");
    log(`owner: ${nPosts} posts, ${nFav} favourites, ${nBoost} boosts (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    await heapMark("the owner's actions");

    // ---- incoming activities ----
    const nIn = Math.round(DAY_PLAN.incoming * FRACTION);
    const acts = buildActivities(seed, nIn, rnd);
    const mix = {};
    const inboxUrl = `${base}/inbox`;
    for (const [i, a] of acts.entries()) {
      mix[a.type] = (mix[a.type] ?? 0) + 1;
      const body = JSON.stringify(a.body);
      const r = await measured(`inbox ${a.type}`, inboxUrl, {
        method: "POST",
        headers: signedPostHeaders(inboxUrl, body, `${a.actor.actor}#main-key`, privateKey),
        body,
      });
      if (r.status !== 202 && notes.length < 5) notes.push(`inbox ${a.type} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 160)}`);
      if ((i + 1) % 500 === 0) log(`  inbox ${i + 1}/${nIn}`);
    }
    await snap("incoming");
    log(`incoming: ${nIn} activities ${JSON.stringify(mix)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    await heapMark("the incoming activities");

    // ---- the held queues: JOBS one batch at a time, then DELIVERY ----
    let idle = 0;
    let steps = 0;
    let dSteps = 0;
    for (;;) {
      const s = await control();
      const w = s.waiting ?? {};
      const which = w.jobs > 0 ? "jobs" : w.delivery > 0 && dSteps < DELIVERY_STEPS ? "delivery" : null;
      if (!which) {
        if (++idle > 12) break; // ~3.6 s with nothing waiting (the delivery broker waits ≤ 1 s to fill a batch)
        await sleep(300);
        continue;
      }
      idle = 0;
      const from = nowUs();
      const c0 = cpuNs(pids);
      const o0 = servicesNs();
      const r = await control(`step=${which}`);
      const ms = (cpuNs(pids) - c0) / 1e6 - ctlCpu;
      if (r.stepped?.ok) {
        windows.push({ kind: `${which} #${cpu[which].length}`, ms, from, to: nowUs() });
        cpu[which].push(ms);
        servicesCpu[which].push((servicesNs() - o0) / 1e6 - ctlServices);
        rts[which].push(r.d1n - s.d1n);
        if (which === "delivery") cpu.deliveryBatch.push(r.stepped.batch ?? { messages: 1, inboxes: 1, types: {} });
      }
      steps++;
      if (which === "delivery") dSteps++;
      if (steps % 100 === 0) log(`  ${steps} batches stepped (jobs ${cpu.jobs.length}, delivery ${cpu.delivery.length})`);
    }
    await snap("jobs drained");
    log(`jobs: ${cpu.jobs.length} batches stepped one at a time (${((Date.now() - t0) / 1000).toFixed(0)} s); releasing deliveries`);
    await heapMark("the jobs");

    // ---- cron: DAY_PLAN.cronTicks consecutive minutes (every 5th runs the housekeeping) ----
    // After the held JOBS were stepped, as a consumer that keeps up would have run them by then: a request's effects
    // journaled in its write's batch (src/effects/commit.ts) are claimed and gone before a cron minute could send them
    // again; what the cron queues drains with the deliveries below.
    const minute0 = Math.floor(Date.now() / 60_000) * 60_000;
    for (let k = 0; k < DAY_PLAN.cronTicks; k++) {
      const at = minute0 + k * 60_000;
      const b = await control();
      const c0 = cpuNs(pids);
      const o0 = servicesNs();
      const r = await control(`cron=${at}`);
      const ms = (cpuNs(pids) - c0) / 1e6 - ctlCpu;
      const which = new Date(at).getUTCMinutes() % 5 === 0 ? "heavy" : "light";
      cpu.cron[which].push(ms);
      servicesCpu.cron[which].push((servicesNs() - o0) / 1e6 - ctlServices);
      rts.cron[which].push(r.d1n - b.d1n);
    }
    await snap("cron");

    const before = await control();
    const c0 = cpuNs(pids);
    const tr = Date.now();
    await control("release=jobs,delivery");
    let last = before;
    let quiet = 0;
    let polls = 0;
    while (Date.now() - tr < 600_000) {
      await sleep(1000);
      const s = await control();
      polls++;
      const sent = (s.sent.delivery?.messages ?? 0) + (s.sent.jobs?.messages ?? 0);
      const done = (s.queues.delivery?.acked ?? 0) + (s.queues.delivery?.retried ?? 0) + (s.queues.jobs?.acked ?? 0) + (s.queues.jobs?.retried ?? 0);
      const moved = s.queues.delivery?.batches !== last.queues.delivery?.batches || s.queues.jobs?.batches !== last.queues.jobs?.batches;
      last = s;
      quiet = moved ? 0 : quiet + 1;
      if (done >= sent && quiet >= 3) break;
      if (quiet >= 15) break; // delayed messages (retries, later effects) are not waited for
    }
    const freeBatches =
      (last.queues.delivery?.batches ?? 0) - (before.queues.delivery?.batches ?? 0) + ((last.queues.jobs?.batches ?? 0) - (before.queues.jobs?.batches ?? 0));
    const freeCpu = (cpuNs(pids) - c0) / 1e6 - polls * ctlCpu;
    await snap("deliveries drained");
    log(`deliveries: ${freeBatches} more batches drained freely in ${((Date.now() - tr) / 1000).toFixed(0)} s; peers received ${peers.received.count}`);
    await heapMark("the deliveries");

    // ---- the clients: app opens and poll bursts (after the drain, so polls find the day's entries) ----
    const home = await fetch(`${base}/api/v1/timelines/home?limit=40`, { headers: auth(1) }).then((r) => r.json());
    const notifs = await fetch(`${base}/api/v1/notifications?limit=40`, { headers: auth(1) }).then((r) => r.json());
    // A poll finds what came in over 5 minutes: ~10 home entries and ~6 notifications on this day.
    const homeSince = Array.isArray(home) && home.length ? home[Math.min(10, home.length - 1)].id : "0";
    const notifSince = Array.isArray(notifs) && notifs.length ? notifs[Math.min(6, notifs.length - 1)].id : "0";
    const opens = Math.round(DAY_PLAN.appOpens * FRACTION);
    const bursts = Math.round(DAY_PLAN.pollBursts * FRACTION);
    for (let c = 1; c <= DAY_PLAN.clients; c++) {
      for (let k = 0; k < opens; k++) {
        for (const p of [
          "/api/v1/accounts/verify_credentials",
          "/api/v2/instance",
          "/api/v1/timelines/home?limit=40",
          "/api/v1/notifications?limit=40",
          "/api/v1/custom_emojis",
          "/api/v2/filters",
          "/api/v1/lists",
          "/api/v1/preferences",
        ])
          await measured("client open", `${base}${p}`, { headers: auth(c) });
      }
      for (let k = 0; k < bursts; k++) {
        await measured("poll home", `${base}/api/v1/timelines/home?since_id=${homeSince}`, { headers: auth(c) });
        await measured("poll notifications", `${base}/api/v1/notifications?since_id=${notifSince}`, { headers: auth(c) });
        await measured("poll markers", `${base}/api/v1/markers?timeline[]=home&timeline[]=notifications`, { headers: auth(c) });
      }
    }
    await sleep(1500);
    const end = await snap("clients");
    // The services process over the day since the reset (its share of the control requests taken out).
    const servicesDay = servicesPids.length ? (servicesNs() - servicesDay0.ns) / 1e6 - (controls - servicesDay0.controls) * ctlServices : null;
    log(`clients: ${DAY_PLAN.clients} × (${opens} opens + ${bursts} poll bursts) (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    await heapMark("the clients");
    for (const ws of sockets) ws.close();

    if (stopPerf) await stopPerf();
    if (stopProfile) {
      const profile = await stopProfile();
      isolate.close();
      const n = Object.values(cpu.fetch).flat().length + cpu.jobs.length + cpu.delivery.length + cpu.cron.light.length + cpu.cron.heavy.length;
      const label = `the replayed day (${FRACTION} of it): ${n} measured invocations and ${freeBatches} freely drained batches`;
      const file = typeof opt("profile") === "string" ? opt("profile") : join(tmpdir(), ALLOC ? "tern-day.heapprofile" : "tern-day.cpuprofile");
      writeFileSync(file, JSON.stringify(profile));
      if (ALLOC) reportAlloc(profile, { n, label });
      else reportCpu(profile, { n, label });
      log(`profile written to ${file}`);
    }
    const counts = report({
      end,
      cpu,
      rts,
      servicesCpu,
      servicesDay,
      cal,
      noopCpu,
      ctlCpu,
      freeBatches,
      freeCpu,
      mix,
      events,
      statuses,
      notes,
      peers,
      elapsed: (Date.now() - t00) / 1000,
    });
    // --dump=FILE: every invocation's CPU and round trips in the order measured, and its span on the monotonic clock.
    // With it, the day's counted figures (day-compare.mjs compares them: no count may be worse).
    if (opt("dump")) writeFileSync(opt("dump"), JSON.stringify({ cpu, rts, windows, verify: verifyRatio, fraction: FRACTION, counts }));
    if (stopPerf) await reportPerf(perfFile, windows);
  } finally {
    await server.stop();
    await peers.close();
  }
}

// ---- the report ----

/** What ran outside the measured workerd. */
function apartLabel() {
  const apart = [D1_APART && "D1", DOS_APART && "the Durable Objects and R2", QUEUES_APART && "the queue simulator"].filter(Boolean);
  if (!apart.length) return "";
  return `; ${apart.length > 1 ? `${apart.slice(0, -1).join(", ")} and ${apart[apart.length - 1]}` : apart[0]} in other processes`;
}

const LIMITS = {
  requests: 100_000,
  cpuMs: 10,
  queueOps: 10_000,
  rowsRead: 5_000_000,
  rowsWritten: 100_000,
  doRequests: 100_000,
  doGbS: 13_000,
  r2A: 1_000_000 / 30,
  r2B: 10_000_000 / 30,
  r2Bytes: 10e9,
  imagesPerDay: 5_000 / 30,
};
const PAID = {
  base: 5,
  requests: { included: 10e6, per: 0.3 },
  cpuMs: { included: 30e6, per: 0.02 },
  queueOps: { included: 1e6, per: 0.4 },
  rowsRead: { included: 25e9, per: 0.001 },
  rowsWritten: { included: 50e6, per: 1.0 },
  doRequests: { included: 1e6, per: 0.15 },
  doGbS: { included: 400_000, per: 12.5 },
  r2A: { included: 1e6, per: 4.5 },
  r2B: { included: 10e6, per: 0.36 },
};

function report({ end, cpu, rts, servicesCpu, servicesDay, cal, noopCpu, ctlCpu, freeBatches, freeCpu, mix, events, statuses, notes, peers, elapsed }) {
  const scale = 1 / FRACTION;
  const s = end;
  const sum = (o) => Object.values(o ?? {}).reduce((a, b) => a + b, 0);
  const cronScale = DAY_PLAN.cronPerDay / DAY_PLAN.cronTicks;
  // Rows: everything but the cron is replayed at FRACTION; the cron ticks scale to 1,440.
  const d1 = (k) => s.d1[k] ?? { r: 0, w: 0, n: 0 };
  const dayKinds = Object.keys(s.d1).filter((k) => k !== "cron");
  const rowsRead = dayKinds.reduce((a, k) => a + d1(k).r, 0) * scale + d1("cron").r * cronScale;
  const rowsWritten = dayKinds.reduce((a, k) => a + d1(k).w, 0) * scale + d1("cron").w * cronScale;
  const fetches = sum(s.fetch);
  const upgrades = DAY_PLAN.clients; // opened before the reset
  const batches = Object.values(s.queues).reduce((a, q) => a + q.batches, 0);
  const workerRequests = (fetches + batches) * scale + upgrades + DAY_PLAN.cronPerDay;
  // Queue operations: one write per 64 KB sent, one read per delivery attempt (arrived), one delete per ack.
  const qo = {};
  for (const name of new Set([...Object.keys(s.sent), ...Object.keys(s.queues)])) {
    const sent = s.sent[name] ?? { messages: 0, units: 0 };
    const q = s.queues[name] ?? { arrived: 0, acked: 0, retried: 0 };
    qo[name] = { sent: sent.messages, units: sent.units, arrived: q.arrived, acked: q.acked, retried: q.retried, ops: sent.units + q.arrived + q.acked };
  }
  const queueOps = sum(Object.fromEntries(Object.entries(qo).map(([k, v]) => [k, v.ops]))) * scale;
  // Durable Objects: counted calls (+ the two sockets' opening before the reset: hub fetch, router writes, subscribe
  // message), and the 12 h idle: one token-check alarm per signed-in hub every 5 minutes, ~the mean call's duration.
  const doReq = Object.values(s.dos).reduce((a, d) => a + d.requests, 0);
  const doMs = Object.values(s.dos).reduce((a, d) => a + d.activeMs, 0);
  const alarms = ((DAY_PLAN.idleHours * 60) / DAY_PLAN.tokenCheckMinutes) * 1; // one hub: the owner's
  const openCalls = 2 * 3; // per socket: hub fetch, routerSetHub, webSocketMessage (subscribe)
  const meanCallMs = doReq ? doMs / doReq : 5;
  const doRequests = doReq * scale + alarms + openCalls;
  const doGbS = ((doMs * scale + (alarms + openCalls) * meanCallMs) / 1000) * 0.125;
  const r2 = Object.values(s.r2).reduce((a, r) => ({ a: a.a + r.a, b: a.b + r.b }), { a: 0, b: 0 });
  const r2A = r2.a * scale;
  const r2B = r2.b * scale;
  const r2Bytes = Object.values(s.r2).reduce((a, r) => a + (r.bytes ?? 0), 0) * scale;
  const r2Stored = r2Bytes * DAY_MEDIA.retentionDays;
  const images = Object.values(s.images ?? {}).reduce((a, r) => ({ info: a.info + r.info, t: a.t + r.transformations }), { info: 0, t: 0 });
  const transformations = images.t * scale;

  const isInbox = (k) => k.startsWith("inbox");
  const fetchKinds = Object.keys(cpu.fetch);
  const apiCpu = summary(fetchKinds.filter((k) => !isInbox(k)).flatMap((k) => cpu.fetch[k]));
  const inboxCpu = summary(fetchKinds.filter(isInbox).flatMap((k) => cpu.fetch[k]));
  const inboxResp = summary(
    Object.keys(cpu.response)
      .filter(isInbox)
      .flatMap((k) => cpu.response[k]),
  );
  const fetchCpu = summary(Object.values(cpu.fetch).flat());
  const jobsCpu = summary(cpu.jobs);
  const delCpu = summary(cpu.delivery);
  // DELIVERY invocations (one message each): packs of a new activity's inboxes, and single inboxes (retries).
  const delOf = (pred) => cpu.delivery.filter((_, i) => pred(cpu.deliveryBatch[i]));
  const isPack = (b) => (b?.types?.pack ?? 0) > 0;
  // The pack size (DELIVERY_PACK in src/federation/outbound/delivery.ts): the largest pack the day sent.
  const fullPack = Math.max(0, ...cpu.deliveryBatch.filter(isPack).map((b) => b.inboxes ?? 0));
  const fullPackCpu = summary(delOf((b) => isPack(b) && b.inboxes >= fullPack));
  const perInbox = summary(cpu.delivery.map((ms, i) => ms / Math.max(1, cpu.deliveryBatch[i]?.inboxes ?? 1)));
  const stepInboxes = cpu.deliveryBatch.reduce((a, b) => a + (b?.inboxes ?? 0), 0);
  const total = (a) => a.reduce((x, y) => x + y, 0);
  const cronAll = summary([...cpu.cron.light, ...cpu.cron.heavy]);
  const allCpu = summary([...Object.values(cpu.fetch).flat(), ...cpu.jobs, ...cpu.delivery, ...cpu.cron.light, ...cpu.cron.heavy]);
  const pmm = (x, d = 1) => `${fmt(x.p50, d)} / ${fmt(x.p99, d)} / ${fmt(x.max, d)} ms`;
  // ≈ without local D1: each invocation's CPU minus its D1 round trips × the calibrated CPU of one local round trip.
  const perRt = cal?.perRt ?? null;
  const est = (ms, rt) => ms.map((m, i) => (perRt === null ? Number.NaN : Math.max(0, m - (Number.isFinite(rt[i]) ? rt[i] : 0) * perRt)));
  const fetchMs = (pred) => fetchKinds.filter(pred).flatMap((k) => cpu.fetch[k]);
  const fetchRt = (pred) => fetchKinds.filter(pred).flatMap((k) => rts.fetch[k] ?? []);
  const all = () => true;
  const cronMs = [...cpu.cron.light, ...cpu.cron.heavy];
  const cronRt = [...rts.cron.light, ...rts.cron.heavy];
  const pick = (arr, pred) => arr.filter((_, i) => pred(cpu.deliveryBatch[i]));
  const noD1 = {
    api: est(
      fetchMs((k) => !isInbox(k)),
      fetchRt((k) => !isInbox(k)),
    ),
    inbox: est(fetchMs(isInbox), fetchRt(isInbox)),
    jobs: est(cpu.jobs, rts.jobs),
    delivery: est(cpu.delivery, rts.delivery),
    cron: est(cronMs, cronRt),
  };
  noD1.fullPack = pick(noD1.delivery, (b) => (b?.types?.pack ?? 0) > 0 && b.inboxes >= fullPack);
  const noD1All = summary([...est(fetchMs(all), fetchRt(all)), ...noD1.jobs, ...noD1.delivery, ...noD1.cron]);
  const estRow = (arr) => {
    const x = summary(arr);
    return ["    ≈ without local D1 (estimate)", "10 ms", pmm(x), x.n ? (x.p99 <= 10 ? "✓ p99" : "✗ p99") : "–"];
  };

  const mark = (v, lim) => (v <= lim ? `✓ ${fmt((1 - v / lim) * 100, 0)}% headroom` : `✗ ${fmt(v / lim, 1)}× the limit`);
  const out = [];
  out.push("");
  out.push(
    `A day of a single-user instance (issue 12 point 7), replayed in ${fmt(elapsed, 0)} s${FRACTION < 1 ? `, ${FRACTION} of the day, counts ×${fmt(scale, 1)}` : ""}.`,
  );
  out.push(
    `Incoming mix: ${Object.entries(mix)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}. Peers received ${peers.received.count} deliveries on ${peers.received.hosts.size} hosts.`,
  );
  out.push("");
  const rows = [["quota line (Workers Free)", "free-plan limit", "counted for the day", "fits?"]];
  rows.push(["Worker requests", "100,000 / day", fmt(workerRequests), mark(workerRequests, LIMITS.requests)]);
  rows.push(["CPU per invocation, max (all kinds)", "10 ms", `${fmt(allCpu.max, 1)} ms`, allCpu.max <= 10 ? "✓" : "✗"]);
  rows.push(["CPU per invocation, p99 (all kinds)", "10 ms", `${fmt(allCpu.p99, 1)} ms`, allCpu.p99 <= 10 ? "✓" : "✗"]);
  rows.push(["CPU per invocation, ≈ without local D1 (estimate), max", "10 ms", `${fmt(noD1All.max, 1)} ms`, noD1All.max <= 10 ? "✓" : "✗"]);
  rows.push(["CPU per invocation, ≈ without local D1 (estimate), p99", "10 ms", `${fmt(noD1All.p99, 1)} ms`, noD1All.p99 <= 10 ? "✓" : "✗"]);
  const p99mark = (x) => (x.n ? (x.p99 <= 10 ? "✓ p99" : "✗ p99") : "–");
  rows.push(["  API requests p50 / p99 / max", "10 ms", pmm(apiCpu), p99mark(apiCpu)]);
  rows.push(estRow(noD1.api));
  rows.push(["  inbox POSTs, with after-response work", "10 ms", pmm(inboxCpu), p99mark(inboxCpu)]);
  rows.push(estRow(noD1.inbox));
  rows.push(["  JOBS batches p50 / p99 / max", "10 ms", pmm(jobsCpu), p99mark(jobsCpu)]);
  rows.push(estRow(noD1.jobs));
  rows.push(["  DELIVERY invocations (1 message each)", "10 ms", pmm(delCpu), p99mark(delCpu)]);
  rows.push(estRow(noD1.delivery));
  rows.push([`    of which full packs (${fullPack} inboxes)`, "10 ms", pmm(fullPackCpu), p99mark(fullPackCpu)]);
  rows.push(["  cron p50 / max", "10 ms", `${fmt(cronAll.p50, 1)} / ${fmt(cronAll.max, 1)} ms`, cronAll.max <= 10 ? "✓" : "✗"]);
  rows.push(estRow(noD1.cron));
  rows.push(["Queue operations", "10,000 / day", fmt(queueOps), mark(queueOps, LIMITS.queueOps)]);
  rows.push(["D1 rows read", "5,000,000 / day", fmt(rowsRead), mark(rowsRead, LIMITS.rowsRead)]);
  rows.push(["D1 rows written", "100,000 / day", fmt(rowsWritten), mark(rowsWritten, LIMITS.rowsWritten)]);
  rows.push(["Durable Object requests", "100,000 / day", fmt(doRequests), mark(doRequests, LIMITS.doRequests)]);
  rows.push(["Durable Object duration", "13,000 GB-s / day", `${fmt(doGbS, 1)} GB-s`, mark(doGbS, LIMITS.doGbS)]);
  rows.push(["R2 class A operations", "1,000,000 / month (33,333 / day)", fmt(r2A), mark(r2A, LIMITS.r2A)]);
  rows.push(["R2 class B operations", "10,000,000 / month (333,333 / day)", fmt(r2B), mark(r2B, LIMITS.r2B)]);
  rows.push([
    `R2 storage (the day's ${fmt(r2Bytes / 2 ** 20, 1)} MiB × ${DAY_MEDIA.retentionDays} days kept)`,
    "10 GB",
    `${fmt(r2Stored / 1e9, 2)} GB`,
    mark(r2Stored, LIMITS.r2Bytes),
  ]);
  rows.push([
    `Images transformations (${fmt(images.info * scale)} info calls besides)`,
    "5,000 / month (167 / day)",
    fmt(transformations),
    mark(transformations, LIMITS.imagesPerDay),
  ]);
  out.push(table(rows));
  out.push("");

  // Where they come from.
  const detail = [["what", "count (replayed)"]];
  for (const [k, v] of Object.entries(s.fetch)) detail.push([`fetch: ${k}`, fmt(v)]);
  for (const [k, v] of Object.entries(s.after ?? {}))
    detail.push([`fetch: ${k} requests that left work running after the response (waitUntil promises ${fmt(v.promises)})`, fmt(v.requests)]);
  detail.push(["fetch: streaming upgrades (opened before counting)", fmt(upgrades)]);
  for (const [k, q] of Object.entries(s.queues))
    detail.push([
      `queue batches: ${k} (messages ${fmt(q.arrived)}${k === "delivery" ? `, inboxes ${fmt(q.inboxes)}` : ""}, acked ${fmt(q.acked)}, retried ${fmt(q.retried)}; sizes ${JSON.stringify(q.sizes)})`,
      fmt(q.batches),
    ]);
  detail.push([`cron runs (${DAY_PLAN.cronTicks} replayed, scaled ×${fmt(cronScale, 0)})`, fmt(s.scheduled)]);
  for (const [k, v] of Object.entries(s.d1)) detail.push([`D1 ${k}: round trips ${fmt(v.n)}, rows read / written`, `${fmt(v.r)} / ${fmt(v.w)}`]);
  for (const [k, d] of Object.entries(s.dos))
    detail.push([
      `DO ${k}: ${Object.entries(d.byMethod)
        .map(([m, n]) => `${m} ${n}`)
        .join(", ")}; active`,
      `${fmt(d.requests)} calls, ${fmt(d.activeMs / 1000, 1)} s`,
    ]);
  detail.push([`DO modelled: ${alarms} token-check alarms (12 h, one hub) + ${openCalls} calls opening the 2 sockets`, fmt(alarms + openCalls)]);
  for (const [k, r] of Object.entries(s.r2))
    detail.push([`R2 ${k}: ${JSON.stringify(r.ops)}`, `A ${r.a}, B ${r.b}, ${fmt((r.bytes ?? 0) / 2 ** 20, 1)} MiB put`]);
  for (const [k, r] of Object.entries(s.images ?? {})) detail.push([`Images ${k}: info / transformations`, `${r.info} / ${r.transformations}`]);
  detail.push(["remote media files the peers served", fmt(peers?.received?.files ?? 0)]);
  detail.push(["streaming events received on the 2 sockets", JSON.stringify(events)]);
  out.push(table(detail));
  out.push("");

  // Queue operations by queue, sender and message type (ops per message: the queue's ops ÷ its messages sent, 3 when
  // every message is under 64 KB, read once and acked).
  const qRows = [["queue messages (replayed)", "messages", "ops"]];
  for (const [qn, v] of Object.entries(qo)) {
    const t = s.sent[qn] ?? { by: {}, packs: {}, packSizes: {}, inboxes: 0 };
    const per = v.sent ? v.ops / v.sent : 3;
    qRows.push([
      `${qn}: sent ${fmt(v.sent)} (${fmt(v.units)} × 64 KB)${qn === "delivery" ? ` for ${fmt(t.inboxes)} inboxes` : ""} + read ${fmt(v.arrived)} + deleted ${fmt(v.acked)}`,
      fmt(v.sent),
      fmt(v.ops),
    ]);
    for (const [k, n] of Object.entries(t.by).sort((a, b) => b[1] - a[1])) qRows.push([`  ${qn} sent by ${k}`, fmt(n), fmt(n * per)]);
    for (const [k, n] of Object.entries(t.packs).sort((a, b) => b[1] - a[1])) qRows.push([`  ${qn} messages carrying ${k}`, fmt(n), fmt(n * per)]);
    for (const [k, n] of Object.entries(t.packSizes ?? {}).sort((a, b) => b[1] - a[1])) qRows.push([`    ${qn} ${k} inbox(es)`, fmt(n), fmt(n * per)]);
  }
  out.push(table(qRows));
  out.push("");

  const cpuRows = [
    [`CPU per invocation (ms, workerd runtime, schedstat${apartLabel()})`, "n", "p50", "p99", "max", "D1 RT p50 / max", "≈ w/o local D1 p50", "p99", "max"],
  ];
  // x: the CPU summary; ms / rt (optional): the invocations' CPU and round trips, for the estimate without local D1.
  const cpuRow = (label, x, ms, rt) => {
    const r = rt ? summary(rt.filter(Number.isFinite)) : null;
    const e = ms && rt ? summary(est(ms, rt)) : null;
    cpuRows.push([
      label,
      x.n,
      fmt(x.p50, 2),
      fmt(x.p99, 2),
      fmt(x.max, 2),
      r ? `${fmt(r.p50)} / ${fmt(r.max)}` : "",
      e ? fmt(e.p50, 2) : "",
      e ? fmt(e.p99, 2) : "",
      e ? fmt(e.max, 2) : "",
    ]);
  };
  for (const [k, v] of Object.entries(cpu.fetch)) cpuRow(isInbox(k) ? `${k} (request + after-response work)` : k, summary(v), v, rts.fetch[k] ?? []);
  cpuRow(
    "API requests, all",
    apiCpu,
    fetchMs((k) => !isInbox(k)),
    fetchRt((k) => !isInbox(k)),
  );
  cpuRow("inbox POSTs, all (request + after-response work)", inboxCpu, fetchMs(isInbox), fetchRt(isInbox));
  cpuRow("  inbox POSTs, until the 202 only", inboxResp);
  cpuRow("JOBS batch (stepped one at a time)", jobsCpu, cpu.jobs, rts.jobs);
  cpuRow(`DELIVERY invocation, all (${delCpu.n} stepped, ${fmt(stepInboxes)} inboxes)`, delCpu, cpu.delivery, rts.delivery);
  const dRow = (label, pred) => cpuRow(label, summary(pick(cpu.delivery, pred)), pick(cpu.delivery, pred), pick(rts.delivery, pred));
  dRow(`  DELIVERY pack (a new activity, ≤ ${fullPack} inboxes)`, isPack);
  dRow(`  DELIVERY full pack (${fullPack} inboxes)`, (b) => isPack(b) && b.inboxes >= fullPack);
  dRow("  DELIVERY single inbox", (b) => !isPack(b));
  cpuRow("  per inbox delivered (invocation ÷ its inboxes)", perInbox);
  cpuRows.push(["  per inbox delivered, total ÷ inboxes", stepInboxes, fmt(stepInboxes ? total(cpu.delivery) / stepInboxes : null, 2), "", "", "", "", "", ""]);
  cpuRows.push([`batches drained freely (total ÷ ${freeBatches})`, freeBatches, fmt(freeBatches ? freeCpu / freeBatches : null, 2), "", "", "", "", "", ""]);
  for (const k of ["light", "heavy"])
    cpuRow(`cron, ${k === "heavy" ? "5th minute (housekeeping)" : "other minutes"}`, summary(cpu.cron[k]), cpu.cron[k], rts.cron[k]);
  out.push(table(cpuRows));
  if (servicesDay !== null) {
    // --dos-apart / --queues-apart: what each measured invocation caused in the services process (the object calls it
    // made and what those set off; the messages it sent and the batch it was given).
    const what = [DOS_APART && "Durable Objects and R2", QUEUES_APART && "queue simulator"].filter(Boolean).join(" and ");
    const sRows = [[`CPU caused per invocation in the services process (ms; ${what})`, "n", "p50", "p99", "max"]];
    const sRow = (label, arr) => {
      const x = summary(arr);
      sRows.push([label, x.n, fmt(x.p50, 2), fmt(x.p99, 2), fmt(x.max, 2)]);
    };
    const sFetch = (pred) => fetchKinds.filter(pred).flatMap((k) => servicesCpu.fetch[k] ?? []);
    sRow(
      "API requests",
      sFetch((k) => !isInbox(k)),
    );
    sRow("inbox POSTs (request + after-response work)", sFetch(isInbox));
    sRow("JOBS batches", servicesCpu.jobs);
    sRow("DELIVERY invocations", servicesCpu.delivery);
    sRow("cron", [...servicesCpu.cron.light, ...servicesCpu.cron.heavy]);
    out.push(table(sRows));
    out.push(
      `The services process used ${fmt(servicesDay, 0)} ms of CPU over the replayed day (its share of the control requests ` +
        `taken out)${DOS_APART ? ` for ${fmt(doReq)} counted object calls (${fmt(doReq ? servicesDay / doReq : null, 2)} ms per call on average${QUEUES_APART ? ", the queue simulator's work included" : ""})` : ""}. ` +
        (DOS_APART ? "On Cloudflare each object call is an invocation of the object, with its own CPU limit, not part of the caller's. " : "") +
        (QUEUES_APART ? "Queues is a service of its own there: a send costs the Worker its request, and a batch arrives as an invocation." : ""),
    );
  }
  out.push(
    `Baselines: a request Tern answers without work (/bench-noop) costs ${fmt(noopCpu, 2)} ms of workerd CPU here (miniflare's routing included); ` +
      `the control request ${fmt(ctlCpu, 2)} ms, subtracted from batch and cron figures and from requests whose after-response work was waited for. ` +
      (D1_APART
        ? `D1 ran in its own workerd process (--d1-apart), so these figures leave SQLite out, as production does; they include the D1 ` +
          `binding's work in the Worker (the shim sends each call as one HTTP request with JSON, as the binding does) and ` +
          (DOS_APART
            ? `the Worker's side of each Durable Object call (sent as one HTTP request with JSON, bench/do-remote.js); the objects ran in ` +
              `another process (--dos-apart), their CPU is in the table above. `
            : `the Durable Objects a request calls (RateLimiter, streaming), which production bills apart. `) +
          (QUEUES_APART
            ? `The queue simulator ran in that other process too (--queues-apart): each message sent costs the Worker one HTTP ` +
              `request with JSON (bench/queue-remote.js), and each batch arrives as one. `
            : "") +
          `The "≈ w/o local D1" columns subtract a calibrated round trip again: ignore them here. `
        : `Locally the figures include D1 (SQLite in the same process) and the Durable Objects a request calls (RateLimiter, streaming), which ` +
          `production runs and bills elsewhere. `) +
      `All fetches: ${pmm(fetchCpu, 2)}.`,
  );
  if (cal)
    out.push(
      `≈ without local D1 (a rough estimate): each invocation's CPU minus its D1 round trips (counted in the entry, an inbox POST's ` +
        `after-response work included) × ${fmt(perRt, 2)} ms, the CPU of one local round trip calibrated as in bench/run.mjs: ` +
        `${cal.n} requests with an unknown token (verify_credentials → 401: ${fmt(cal.bad.rt, 2)} round trip, ${fmt(cal.bad.ms / cal.n, 2)} ms each` +
        `, ${fmt(cal.bad.dos, 2)} RateLimiter call(s) each) minus ` +
        (cal.anonFits
          ? `${cal.n} requests without a token (→ 401, no round trip, the same RateLimiter calls: ${fmt(cal.anon.ms / cal.n, 2)} ms each; ` +
            `against ${cal.n} no-op requests, /bench-noop → 404 at ${fmt(cal.noop.ms / cal.n, 2)} ms, it would be ${fmt(cal.perRtNoop, 2)} ms, the RateLimiter call counted in)`
          : `${cal.n} no-op requests (/bench-noop → 404, ${fmt(cal.noop.ms / cal.n, 2)} ms each)`) +
        `, one at a time; floored at 0 per invocation. Rough: the subtraction also ` +
        `removes a little real Worker work (binding the statement, reading the result), and in production each D1 call still costs ` +
        `some Worker CPU to send and parse; locally SQLite runs inside the measured workerd, in production D1 is billed apart.`,
    );
  out.push(
    `Response statuses: ${Object.entries(statuses)
      .map(([k, v]) => `${k} ×${v}`)
      .join(", ")}`,
  );
  for (const n of notes) out.push(`note: ${n}`);

  // Paid plan, 20 users.
  const users = 20;
  const month = 30;
  // Per user (×20) vs once per instance (×1: the cron) vs shared (×8: incoming activities' own requests).
  const cronRead = d1("cron").r * cronScale;
  const cronWritten = d1("cron").w * cronScale;
  const inboxReq = (s.fetch.inbox ?? 0) * scale;
  const reqDay = (workerRequests - DAY_PLAN.cronPerDay - inboxReq) * users + inboxReq * 8 + DAY_PLAN.cronPerDay;
  const cronCpu = total([...cpu.cron.light, ...cpu.cron.heavy]) * cronScale;
  const restCpu = (total(Object.values(cpu.fetch).flat()) + total(cpu.jobs) + total(cpu.delivery) + freeCpu) * scale;
  const cpuDay = restCpu * users + cronCpu;
  const monthly = {
    requests: reqDay * month,
    cpuMs: cpuDay * month,
    queueOps: queueOps * users * month,
    rowsRead: ((rowsRead - cronRead) * users + cronRead) * month,
    rowsWritten: ((rowsWritten - cronWritten) * users + cronWritten) * month,
    doRequests: doRequests * users * month,
    doGbS: doGbS * users * month,
    r2A: r2A * users * month,
    r2B: r2B * users * month,
  };
  const paidRows = [["20 users, per month (Workers Paid)", "used", "included", "price beyond", "cost"]];
  let bill = PAID.base;
  for (const [k, v] of Object.entries(monthly)) {
    const p = PAID[k];
    const over = Math.max(0, v - p.included);
    const cost = (over / 1e6) * p.per;
    bill += cost;
    paidRows.push([k, fmt(v), fmt(p.included), `$${p.per} / M`, `$${cost.toFixed(2)}`]);
  }
  paidRows.push(["base (Workers Paid)", "", "", "", `$${PAID.base.toFixed(2)}`]);
  paidRows.push(["total", "", "", "", `$${bill.toFixed(2)} / month`]);
  out.push("");
  out.push(table(paidRows));
  out.push(
    "20-user scaling: every counted figure ×20 (own posts, favourites, boosts, clients, deliveries, notifications, and the processing " +
      "of incoming activities, each fanning out to its own followers), except the inbox POSTs themselves ×8 (followed accounts overlap: " +
      "an activity reaches a shared inbox once) and the cron ×1 (its requests, rows and CPU); 30 days a month; " +
      `CPU ms for the paid plan's 30 M included from the per-invocation figures above (${D1_APART ? "D1 in its own process, left out" : "local, D1 included: an upper bound"}; an inbox ` +
      "POST's after-response processing ×20 with the rest).",
  );
  console.log(out.join("\n"));
  // A day's counts (each as the report's first table gives it, a whole day), for day-compare.mjs.
  const d1RoundTrips = dayKinds.reduce((a, k) => a + d1(k).n, 0) * scale + d1("cron").n * cronScale;
  return {
    "D1 round trips": d1RoundTrips,
    "D1 rows read": rowsRead,
    "D1 rows written": rowsWritten,
    "queue operations": queueOps,
    "Durable Object requests": doRequests,
    "Worker requests": workerRequests,
  };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
