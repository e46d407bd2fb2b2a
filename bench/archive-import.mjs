#!/usr/bin/env node
// `node bench/archive-import.mjs [N]` (npm run bench:archive-import): imports an archive of N posts (default 5,000), built
// as Mastodon's BackupService writes one (zip, DEFLATE; outbox.json of Create activities, media under
// media_attachments/files/, likes.json, bookmarks.json, actor.json), through the real JOBS queue of a bench server,
// and prints statuses imported per minute, the D1 rows written per status (D1's own count, summed by the import from
// each batch's meta), and what that makes of 20,000 posts against the free plan's 100,000 rows written a day.
// Every 10th post replies to the one before (a thread), every 50th has an image, every 100th is a poll, one in 4 has a
// hashtag; one in 20 is followers-only. The archive's actor is the importing account itself (a Tern archive read
// back), so no alias needs resolving. ~1 minute for N=5,000 on 2 shared cores. `--d1-apart`: the Worker's CPU without
// local D1's SQLite (served by another process), as the Workers CPU limit counts it.
// `--file=PATH`: a real export instead (a Mastodon archive's zip, or its unpacked folder, zipped here as rubyzip would):
// the archive's actor is made an alias of the importing account (a trigger in the seed: the account does not exist
// before sign-up), and the import is then described as a user would check it: the profile's posts by visibility, with
// media, threaded, polls, boosts, their dates against the archive's, and that nothing was delivered or notified.
import { crc32, deflateSync } from "node:zlib";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { loadSeed } from "./seed.mjs";
import { root, startBenchServer } from "./server.mjs";
import { signUp } from "../test/federation/tern-api.mjs";
import { zipOf } from "../test/support/zip.mjs";
import { cpuMs, threadCpuMs, workerdPids } from "./cpu.mjs";

const args = process.argv.slice(2);
const N = Number(args.find((a) => !a.startsWith("--")) ?? 5000);
/** --file=PATH: a real archive (zip or unpacked folder) instead of a made-up one. */
const FILE = args.find((a) => a.startsWith("--file="))?.slice(7) ?? null;
/**
 * --per-round (with --d1-apart): the JOBS queue held and each round let through alone, its CPU read around it (minus a
 * control request's), so the slowest round shows: what bounds one invocation, not the average.
 */
const PER_ROUND = args.includes("--per-round");
const SPLIT_BYTES = args.find((a) => a.startsWith("--split-bytes="))?.slice(14) ?? null;
/** --d1-apart: local D1 served by another process (bench/d1-host.mjs), so the CPU measured is the Worker's alone. */
const D1_APART = args.includes("--d1-apart");
if (PER_ROUND && !D1_APART) throw new Error("--per-round needs --d1-apart (the bench entry that holds and steps the queue)");
const FREE_PLAN_ROWS = 100_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.error("[archive-import]", ...a);

/** An 8×8 PNG (one colour per post, so no two files are alike). */
function png(seed) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(8, 0);
  ihdr.writeUInt32BE(8, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const raw = Buffer.alloc(8 * (1 + 24));
  for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) raw.set([seed & 255, (seed >> 8) & 255, 99], y * 25 + 1 + x * 3);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

function archive(actor, n) {
  const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
  const followers = `${actor}/followers`;
  const items = [];
  const media = [];
  const base = Date.UTC(2018, 0, 1);
  for (let i = 0; i < n; i++) {
    const id = `${actor}/statuses/old-${i}`;
    const published = new Date(base + i * 3_600_000).toISOString();
    const priv = i % 20 === 19;
    const tagged = i % 4 === 0;
    const note = {
      id,
      type: i % 100 === 99 ? "Question" : "Note",
      summary: null,
      inReplyTo: i % 10 === 9 ? `${actor}/statuses/old-${i - 1}` : null,
      published,
      url: id,
      attributedTo: actor,
      to: priv ? [followers] : [PUBLIC],
      cc: priv ? [] : [followers],
      sensitive: false,
      content: `<p>Post number ${i} of the archive, with a few words to make it look like a real toot${tagged ? ` <a href="${actor}/tags/t${i % 40}" class="mention hashtag" rel="tag">#<span>t${i % 40}</span></a>` : ""}</p>`,
      contentMap: { en: "" },
      attachment: [],
      tag: tagged ? [{ type: "Hashtag", href: `${actor}/tags/t${i % 40}`, name: `#t${i % 40}` }] : [],
    };
    if (i % 50 === 49) {
      const path = `media_attachments/files/000/000/${String(i).padStart(3, "0")}/original/${i}.png`;
      media.push({ name: path, data: png(i), store: true });
      note.attachment = [
        {
          type: "Document",
          mediaType: "image/png",
          url: path,
          name: `picture ${i}`,
          blurhash: "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH",
          focalPoint: [0, 0],
          width: 8,
          height: 8,
        },
      ];
    }
    if (note.type === "Question") {
      note.endTime = new Date(base + i * 3_600_000 + 86_400_000).toISOString();
      note.oneOf = [
        { type: "Note", name: "yes", replies: { type: "Collection", totalItems: 3 } },
        { type: "Note", name: "no", replies: { type: "Collection", totalItems: 4 } },
      ];
    }
    items.push({ id: `${id}/activity`, type: "Create", actor, published, to: note.to, cc: note.cc, object: note });
  }
  const outbox = JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: "outbox.json",
    type: "OrderedCollection",
    totalItems: n,
    orderedItems: items,
  });
  const empty = (id) => JSON.stringify({ id, type: "OrderedCollection", orderedItems: [] });
  return zipOf([
    { name: "outbox.json", data: Buffer.from(outbox) },
    ...media,
    { name: "likes.json", data: Buffer.from(empty("likes.json")) },
    { name: "bookmarks.json", data: Buffer.from(empty("bookmarks.json")) },
    { name: "actor.json", data: Buffer.from(JSON.stringify({ id: actor, type: "Person", preferredUsername: "alice", outbox: "outbox.json" })) },
  ]);
}

/** The files of an unpacked archive folder, zipped as Mastodon's BackupService does (JSON deflated, media stored). */
function zipFolder(dir) {
  const entries = [];
  const walk = (d) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const name = relative(dir, p);
        if (/^(outbox|actor|likes|bookmarks)\.json$/.test(name) || name.startsWith("media_attachments/") || /^(avatar|header)\./.test(name))
          entries.push({ name, data: readFileSync(p), store: !name.endsWith(".json") });
      }
    }
  };
  walk(dir);
  return zipOf(entries);
}

/** The real archive (zip bytes) and its actor's URI (actor.json's id, else the first activity's actor). */
function realArchive(path) {
  const zip = statSync(path).isDirectory() ? zipFolder(path) : readFileSync(path);
  let actor = null;
  if (statSync(path).isDirectory()) {
    const a = join(path, "actor.json");
    actor = existsSync(a) ? JSON.parse(readFileSync(a, "utf8")).id : JSON.parse(readFileSync(join(path, "outbox.json"), "utf8")).orderedItems?.[0]?.actor;
  }
  if (!actor) throw new Error("--file: give the unpacked folder (the actor is read from actor.json)");
  return { zip, actor };
}

const real = FILE ? realArchive(FILE) : null;
const tern = await startBenchServer({
  // A real archive's actor becomes an alias of the first local account as it is created (sign-up happens later).
  seed: real
    ? (persistTo) => {
        const uri = real.actor.replaceAll("'", "''");
        loadSeed({
          persistDir: persistTo,
          cwd: root,
          log,
          sql: `CREATE TRIGGER bench_alias AFTER INSERT ON accounts WHEN NEW.domain IS NULL BEGIN INSERT INTO account_aliases (id, account_id, acct, uri, created_at) VALUES (NEW.id, NEW.id, 'old@archive', '${uri}', 0); END;\n`,
        });
      }
    : () => {},
  entry: join(root, "bench", D1_APART ? "day-entry.js" : "worker-entry.js"),
  d1Apart: D1_APART,
  vars: {
    RATE_LIMIT_API_PER_ACCOUNT: "off",
    RATE_LIMIT_API_PER_TOKEN: "off",
    RATE_LIMIT_API_PER_IP: "off",
    ARCHIVE_IMPORT_DAILY_ROWS: "100000000",
    // --split-bytes=N: the split's bytes a round (ARCHIVE_SPLIT_BYTES; default 1 MB)
    ...(SPLIT_BYTES ? { ARCHIVE_SPLIT_BYTES: SPLIT_BYTES } : {}),
  },
});
try {
  const { alice } = await signUp(tern.url, ["alice"]);
  const me = await alice.api.get("/api/v1/accounts/verify_credentials");
  const actor = `${tern.url}/users/${me.username}`;
  const zip = real ? real.zip : archive(actor, N);
  log(`archive: ${real ? FILE : `${N} posts`}, ${(zip.length / 1024 / 1024).toFixed(1)} MB zipped`);
  const port = Number(new URL(tern.url).port);
  const pids = workerdPids(tern.pid, port, { strict: true });
  const control = `${tern.url}/__bench/${D1_APART ? "day" : "queues"}`;
  const queueStats = async () => {
    const byName = (await (await fetch(control)).json()).queues ?? {};
    const queues = Object.values(byName);
    return { acked: queues.reduce((n, q) => n + (q.acked ?? 0), 0), delivery: byName.delivery?.arrived ?? 0, byType: byName.jobs?.byType ?? {} };
  };
  await sleep(2000);
  const idleFrom = Date.now();
  const idle0 = cpuMs(pids);
  await sleep(3000);
  const idlePerMs = (cpuMs(pids) - idle0) / (Date.now() - idleFrom);
  await fetch(`${control}?reset=1`);
  // A control request's own CPU, taken out of each stepped round.
  let controlMs = 0;
  if (PER_ROUND) {
    await fetch(`${control}?hold=jobs`);
    const c0 = threadCpuMs(pids) ?? 0;
    for (let i = 0; i < 50; i++) await fetch(control);
    controlMs = ((threadCpuMs(pids) ?? 0) - c0) / 50;
  }
  const cpu0 = cpuMs(pids);
  const t0 = Date.now();
  const created = await upload(tern.url, alice.token, zip);
  const uploadMs = Date.now() - t0;
  let row = created;
  const rounds = [];
  while (PER_ROUND && row.state === "in_progress") {
    const phase = row.phase;
    // the scheduler's exact run time (clock ticks are 10 ms)
    const c0 = threadCpuMs(pids) ?? 0;
    const stepped = (await (await fetch(`${control}?step=jobs`)).json()).stepped;
    const ms = (threadCpuMs(pids) ?? 0) - c0 - controlMs;
    if (!stepped?.ok) throw new Error("a round did not come (held JOBS queue empty?)");
    rounds.push({ phase, ms });
    row = await alice.api.get(`/api/tern/archive_imports/${created.id}`);
  }
  if (PER_ROUND) printRounds(rounds, controlMs);
  while (row.state === "in_progress") {
    await sleep(1000);
    row = await alice.api.get(`/api/tern/archive_imports/${created.id}`);
    if (Date.now() - t0 > 30 * 60_000) throw new Error("import did not finish in 30 minutes");
  }
  const end = Date.now();
  // what the polling itself cost is left in (one small GET a second)
  const cpu = cpuMs(pids) - cpu0 - idlePerMs * (end - t0);
  const jobs = await queueStats();
  if (row.state !== "finished") throw new Error(`import ${row.state}: ${row.error}`);
  if (real) await describeReal(alice, tern.url, row, FILE, await queueStats(), (end - t0) / 1000);
  else report(row, zip, jobs, uploadMs, end - t0, cpu);
} finally {
  await tern.stop();
}

/** Each phase's rounds: how many, and their CPU's median, p90 and maximum. */
function printRounds(rounds, controlMs) {
  const q = (xs, f) => xs[Math.min(xs.length - 1, Math.floor(f * xs.length))] ?? 0;
  console.log(`\nCPU per round (ms of the measured workerd, D1 apart, a control request's ${controlMs.toFixed(2)} ms taken out)`);
  console.log("| phase | rounds | p50 | p90 | max |\n| --- | --- | --- | --- | --- |");
  for (const phase of [...new Set(rounds.map((r) => r.phase))]) {
    const xs = rounds
      .filter((r) => r.phase === phase)
      .map((r) => r.ms)
      .sort((a, b) => a - b);
    console.log(`| ${phase} | ${xs.length} | ${q(xs, 0.5).toFixed(1)} | ${q(xs, 0.9).toFixed(1)} | ${xs.at(-1).toFixed(1)} |`);
  }
}

function report(row, zip, jobs, uploadMs, tookMs, cpu) {
  const minutes = tookMs / 60_000;
  const statuses = row.imported_items;
  const perStatus = row.rows_written / statuses;
  const for20k = Math.round(20_000 * perStatus);
  const budget = 50_000; // ARCHIVE_DAILY_ROWS
  console.log(`\nArchive import, ${N} posts (${(zip.length / 1024 / 1024).toFixed(1)} MB zip, ${N / 50} images, ${N / 100} polls, ${N / 10} self-replies)`);
  console.log(`| figure | value |\n| --- | --- |`);
  console.log(`| upload and checks (request) | ${uploadMs} ms |`);
  console.log(`| whole import, upload to finished | ${(minutes * 60).toFixed(1)} s |`);
  console.log(`| statuses imported per minute | ${Math.round(statuses / minutes)} |`);
  console.log(`| D1 rows written | ${row.rows_written} (${perStatus.toFixed(1)} per status) |`);
  console.log(
    `| 20,000 posts | ~${for20k.toLocaleString("en")} rows: ${for20k <= FREE_PLAN_ROWS ? "fits one day's" : `over one day's`} 100,000; at the import's ${budget.toLocaleString("en")} a day: ${Math.ceil(for20k / budget)} day(s) |`,
  );
  console.log(`| JOBS messages (rounds) | ${jobs.acked} (${(N / Math.max(1, jobs.acked)).toFixed(1)} posts each) |`);
  console.log(
    `| workerd CPU${D1_APART ? " (the Worker's; D1 apart)" : " (SQLite of local D1 included)"}, upload and all rounds | ${Math.round(cpu)} ms: ${(cpu / Math.max(1, jobs.acked)).toFixed(1)} ms a round, ${(cpu / statuses).toFixed(2)} ms a status |`,
  );
  console.log(`| imported / skipped / failed | ${row.imported_items} / ${row.skipped_items} / ${row.failed_items} |`);
}

/** One request up to ONE_REQUEST bytes; a larger zip in 50 MiB parts, as the settings page sends it (R2 multipart). */
async function upload(base, token, zip) {
  const ONE_REQUEST = 95 * 1024 * 1024;
  const PART = 50 * 1024 * 1024;
  const auth = { authorization: `Bearer ${token}` };
  const call = async (method, path, body, type, want) => {
    const res = await fetch(`${base}/api/tern/archive_imports${path}`, { method, headers: { ...auth, ...(type ? { "content-type": type } : {}) }, body });
    const json = await res.json();
    if (res.status !== want) throw new Error(`upload ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  if (zip.length <= ONE_REQUEST) return call("POST", "", zip, "application/zip", 202);
  const row = await call("POST", "/uploads", JSON.stringify({ filename: "archive.zip" }), "application/json", 201);
  const parts = [];
  for (let at = 0, n = 1; at < zip.length; at += PART, n++)
    parts.push(await call("PUT", `/uploads/${row.id}/parts/${n}`, zip.subarray(at, at + PART), "application/octet-stream", 200));
  return call("POST", `/uploads/${row.id}/complete`, JSON.stringify({ parts }), "application/json", 202);
}

/** Mastodon's status parser's visibility: Public in `to` is public, in `cc` unlisted; the followers collection private. */
function visibilityOf(a, actor) {
  const to = [a.to ?? []].flat();
  const cc = [a.cc ?? []].flat();
  const pub = (l) => l.some((x) => x === "https://www.w3.org/ns/activitystreams#Public" || x === "as:Public" || x === "Public");
  if (pub(to)) return "public";
  if (pub(cc)) return "unlisted";
  if ([...to, ...cc].includes(`${actor}/followers`) || [...to, ...cc].some((x) => /\/followers$/.test(x))) return "private";
  return "direct";
}

/** The real archive against what the owner's profile, home and notifications show after the import. */
async function describeReal(alice, base, row, file, q, seconds) {
  const outbox = JSON.parse(readFileSync(join(file, "outbox.json"), "utf8"));
  const actor = JSON.parse(readFileSync(join(file, "actor.json"), "utf8")).id;
  const items = outbox.orderedItems ?? [];
  const creates = items.filter((i) => i.type === "Create" && i.object && typeof i.object === "object");
  const want = { public: 0, unlisted: 0, private: 0, direct: 0 };
  for (const c of creates) want[visibilityOf(c.object.to ? c.object : c, actor)]++;
  const wantMedia = creates.reduce((n, c) => n + [c.object.attachment ?? []].flat().length, 0);
  const ownIds = new Set(creates.map((c) => c.object.id));
  const wantSelfReplies = creates.filter((c) => c.object.inReplyTo && ownIds.has(c.object.inReplyTo)).length;
  const wantOtherReplies = creates.filter((c) => c.object.inReplyTo && !ownIds.has(c.object.inReplyTo)).length;
  const wantPolls = creates.filter((c) => c.object.type === "Question").length;
  const announces = items.filter((i) => i.type === "Announce").length;
  const published = new Set(creates.map((c) => new Date(c.object.published ?? c.published).toISOString().slice(0, 19)));

  const me = await alice.api.get("/api/v1/accounts/verify_credentials");
  const got = [];
  for (let max = ""; ; ) {
    const page = await alice.api.get(`/api/v1/accounts/${me.id}/statuses?limit=40${max ? `&max_id=${max}` : ""}`);
    if (!page.length) break;
    got.push(...page);
    max = page.at(-1).id;
  }
  const own = got.filter((s) => !s.reblog);
  const seen = { public: 0, unlisted: 0, private: 0, direct: 0 };
  for (const s of own) seen[s.visibility]++;
  const media = own.flatMap((s) => s.media_attachments);
  const stored = media.filter((m) => m.url?.startsWith(base));
  const atDate = own.filter((s) => published.has(new Date(s.created_at).toISOString().slice(0, 19))).length;
  const self = own.filter((s) => s.in_reply_to_id).length;
  const polls = own.filter((s) => s.poll).length;
  const home = await alice.api.get("/api/v1/timelines/home?limit=40");
  const notifications = await alice.api.get("/api/v1/notifications?limit=40");
  let fileOk = "–";
  if (stored[0]) fileOk = String((await fetch(stored[0].url)).status);
  console.log(`\nA real archive imported (${file}; ${items.length} items: ${creates.length} Create, ${announces} Announce), ${seconds.toFixed(1)} s`);
  console.log("| what | in the archive | after the import |\n| --- | --- | --- |");
  console.log(`| import state; imported / skipped / failed | | ${row.state}; ${row.imported_items} / ${row.skipped_items} / ${row.failed_items} |`);
  for (const v of Object.keys(want)) console.log(`| ${v} posts (profile, as the owner sees it) | ${want[v]} | ${seen[v]} |`);
  console.log(`| posts at their original date (to the second) | ${creates.length} | ${atDate} |`);
  console.log(
    `| media attachments (files in the zip: the rest stay links) | ${wantMedia} | ${media.length}, of them served here ${stored.length} (first file: ${fileOk}) |`,
  );
  console.log(`| replies to one's own posts, threaded | ${wantSelfReplies} | ${self} have a parent here |`);
  console.log(`| replies to others (kept as links, resolved lazily) | ${wantOtherReplies} | |`);
  console.log(`| polls | ${wantPolls} | ${polls} |`);
  console.log(`| boosts (Announce; only of posts on this server) | ${announces} | ${got.length - own.length} |`);
  console.log(`| home timeline entries / notifications after the import | 0 / 0 | ${home.length} / ${notifications.length} |`);
  console.log(`| DELIVERY messages (federation) during the import | 0 | ${q.delivery} |`);
  console.log(`| JOBS messages by effect | | ${JSON.stringify(q.byType)} |`);
}
