// Issue 12 point 5: posting measured on its own. Three posters (seeded below, appended to the main seed):
//   postzero   — no followers: the request and the queued work every post has (its effects, the federate job);
//   postlocal  — LOCAL_FOLLOWERS local followers (seeded accounts): home-feed fan-out, streaming, push per follower;
//   postremote — REMOTE_FOLLOWERS remote followers on REMOTE_HOSTS of the stub hosts of bench/fed-peers.mjs, with a
//                shared inbox per host: one signed delivery per host.
// For each poster (one warm-up post, then POSTS posts): both consumers are HELD (bench/worker-entry.js) while the
// posts are made, so the request's CPU is the request alone; then the JOBS consumer is released and timed until the
// queue is quiet (fan-out, notifications, streaming, push, the federate job that enqueues deliveries); then the
// DELIVERY consumer is released and timed until every stub has its request. Each span: workerd runtime CPU minus idle
// CPU and the status polls (one no-op-sized request each), ÷ posts. Per follower = (postlocal's queued − postzero's)
// ÷ followers; per remote host = (postremote's queued − postzero's + its deliveries) ÷ hosts.
import { stubAccount } from "./fed-seed.mjs";
import { idGen, insertRemoteAccounts, insertTokenUsers, pad, SqlWriter, unpad } from "./seed.mjs";

const DAY = 86_400_000;
export const POSTING_SHAPE = { localFollowers: 300, remoteHosts: 50, followersPerHost: 4 };

/** Seed: the three posters (accounts, users, tokens) and their followers. `localIds`: padded local account ids. */
export function buildPostingSeed({ origin, peerPort, localIds, now = Date.now() }) {
  const w = new SqlWriter();
  const base = now - 45 * DAY;
  const accId = idGen();
  const names = ["postzero", "postlocal", "postremote"];
  const { users: local, tokens } = insertTokenUsers(w, origin, { names, accId, base, now, app: "Tern bench (posting)", prefix: "post" });
  const followId = idGen();
  const follows = [];
  // Local followers: seeded accounts from index 400 on (clear of the viewer's follows and followers).
  const from = localIds.slice(400, 400 + POSTING_SHAPE.localFollowers);
  from.forEach((id, i) => {
    follows.push([pad(followId(base + DAY + i)), id, pad(local[1].id), 1, 0, base + DAY + i]);
  });
  const remote = [];
  for (let h = 1; h <= POSTING_SHAPE.remoteHosts; h++) {
    for (let k = 0; k < POSTING_SHAPE.followersPerHost; k++) {
      const at = base + 2 * DAY + remote.length * 10;
      const a = stubAccount({ h, peerPort, username: `q${h}_${k}`, id: accId(at), at });
      remote.push(a);
      follows.push([pad(followId(at)), pad(a.id), pad(local[2].id), 1, 0, at]);
    }
  }
  insertRemoteAccounts(w, remote, { now });
  w.insert("follows", ["id", "account_id", "target_account_id", "show_reblogs", "notify", "created_at"], follows);
  const poster = (i, extra) => ({ username: local[i].username, id: unpad(local[i].id), token: tokens[i], ...extra });
  return {
    sql: w.toString(),
    posters: [
      poster(0, { key: "zero", localFollowers: 0, remoteHosts: 0 }),
      poster(1, { key: "local", localFollowers: from.length, remoteHosts: 0 }),
      poster(2, { key: "remote", localFollowers: 0, remoteHosts: POSTING_SHAPE.remoteHosts, remoteFollowers: remote.length }),
    ],
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function createPostingBench({ server, peers, seed, pids, cpuMs, canCpu, log, quick, baselineCpu, idleMsPerSec }) {
  const POSTS = quick ? 10 : 30; // the request's CPU resolution is one 10 ms tick ÷ posts
  const runId = Date.now().toString(36);
  const results = [];
  const notes = [];
  let seq = 0;

  async function queues(q = "") {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${server.url}/__bench/queues${q ? `?${q}` : ""}`, { signal: AbortSignal.timeout(30_000) });
        return await res.json();
      } catch (e) {
        if (attempt === 3) throw e;
        await sleep(500);
      }
    }
  }
  const get = (st, name) => st.queues?.[name] ?? { batches: 0, arrived: 0, acked: 0, retried: 0, d1: 0, rowsRead: 0, rowsWritten: 0, inflight: 0, byType: {} };

  /** Polls until `name`'s consumer has nothing in flight and nothing new arrived over two polls; returns polls made. */
  async function waitQueue(name, maxMs = 90_000) {
    const deadline = Date.now() + maxMs;
    let prev = null;
    let stable = 0;
    let polls = 0;
    while (Date.now() < deadline) {
      const q = get(await queues(), name);
      polls++;
      const same = prev && q.inflight === 0 && q.arrived === prev.arrived && q.batches === prev.batches && q.acked + q.retried >= q.arrived;
      stable = same ? stable + 1 : 0;
      if (stable >= 2) return { polls, done: true };
      prev = q;
      await sleep(400);
    }
    return { polls, done: false };
  }

  async function post(p) {
    const t = performance.now();
    const res = await fetch(`${server.url}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json" },
      body: JSON.stringify({ status: `Posting bench ${runId}-${seq++} by ${p.username}: the quick brown fox.`, visibility: "public" }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = await res.text();
    const st = res.headers.get("server-timing") ?? "";
    const rt = Number(/d1;[^,]*dur=(\d+)/.exec(st)?.[1] ?? Number.NaN);
    if (!res.ok) throw new Error(`POST as ${p.username} answered ${res.status}: ${body.slice(0, 200)}`);
    return { rt, ms: performance.now() - t };
  }

  async function measure(p) {
    // Warm-up post (makes the poster's key pair and fills caches), then wait for everything to drain.
    await post(p);
    await waitQueue("jobs");
    await waitQueue("delivery");
    await queues("hold=jobs");
    await queues("hold=delivery&reset=1");
    peers.reset();
    const base = baselineCpu() ?? 0;
    const ps = pids();
    // Idle CPU (timers, the held consumers' 100 ms waits), measured here: it is taken out of the timed spans.
    let idle = idleMsPerSec();
    if (canCpu) {
      const i0 = cpuMs(ps);
      await sleep(2000);
      idle = (cpuMs(ps) - i0) / 2;
    }
    const c0 = canCpu ? cpuMs(ps) : null;
    const rts = [];
    for (let i = 0; i < POSTS; i++) rts.push((await post(p)).rt);
    const c1 = canCpu ? cpuMs(ps) : null;
    const t1 = Date.now();
    await queues("release=jobs");
    const j = await waitQueue("jobs");
    const c2 = canCpu ? cpuMs(ps) : null;
    const t2 = Date.now();
    const afterJobs = await queues();
    await queues("release=delivery");
    const expect = p.remoteHosts * POSTS;
    const deadline = Date.now() + 90_000;
    while (peers.received.count < expect && Date.now() < deadline) await sleep(20);
    const d = await waitQueue("delivery");
    const c3 = canCpu ? cpuMs(ps) : null;
    const t3 = Date.now();
    const end = await queues();
    const jobs = get(afterJobs, "jobs");
    const del = get(end, "delivery");
    const span = (a, b, ta, tb, polls) => (a === null ? null : (b - a - idle * ((tb - ta) / 1000) - polls * base) / POSTS);
    if (!j.done) notes.push(`${p.username}: the JOBS queue was still busy after 90 s`);
    if (peers.received.count < expect) notes.push(`${p.username}: ${peers.received.count} of ${expect} deliveries arrived`);
    const r = {
      p,
      request: { cpu: c0 === null ? null : (c1 - c0) / POSTS - base, rt: rts.sort((a, b) => a - b)[rts.length >> 1] },
      jobs: {
        cpu: span(c1, c2, t1, t2, j.polls + 1),
        rt: jobs.d1 / POSTS,
        rowsRead: jobs.rowsRead / POSTS,
        rowsWritten: jobs.rowsWritten / POSTS,
        messages: jobs.acked / POSTS,
        byType: Object.fromEntries(Object.entries(jobs.byType).map(([k, v]) => [k, v / POSTS])),
      },
      delivery: { cpu: span(c2, c3, t2, t3, d.polls + 2), rt: del.d1 / POSTS, requests: peers.received.count / POSTS, wallS: (t3 - t2) / 1000 },
    };
    results.push(r);
    log(
      `  ${p.username}: request ${r.request.cpu?.toFixed(2)} ms / ${r.request.rt} RT; queued ${r.jobs.cpu?.toFixed(1)} ms; deliveries ${r.delivery.cpu?.toFixed(1)} ms`,
    );
  }

  const scenario = {
    key: "postsplit",
    label: "POST /api/v1/statuses, request and queued work apart",
    custom: async () => {
      try {
        for (const p of seed.posters) await measure(p);
      } finally {
        await queues("release=jobs").catch(() => {});
        await queues("release=delivery").catch(() => {});
      }
    },
  };

  function report({ table, fmt, wrap }) {
    if (!results.length) return notes.length ? ["Posting measured on its own: no figures.", ...notes.map((n) => `  - ${n}`)] : [];
    const by = (k) => results.find((r) => r.p.key === k);
    const zero = by("zero");
    const rows = [["Poster", "followers", "request CPU ms", "RT", "queued CPU ms", "RT", "rows r / w", "jobs", "deliveries CPU ms", "RT", "requests"]];
    for (const r of results) {
      rows.push([
        r.p.username,
        r.p.key === "local" ? `${r.p.localFollowers} local` : r.p.key === "remote" ? `${r.p.remoteFollowers} on ${r.p.remoteHosts} hosts` : "0",
        fmt(r.request.cpu, 2),
        String(r.request.rt),
        fmt(r.jobs.cpu, 1),
        fmt(r.jobs.rt, 1),
        `${fmt(r.jobs.rowsRead, 0)} / ${fmt(r.jobs.rowsWritten, 0)}`,
        fmt(r.jobs.messages, 1),
        fmt(r.delivery.cpu, 1),
        fmt(r.delivery.rt, 1),
        fmt(r.delivery.requests, 0),
      ]);
    }
    const out = [`Posting measured on its own (issue 12 point 5), ${POSTS} posts per poster, figures per post:`, table(rows)];
    const loc = by("local");
    const rem = by("remote");
    const per = (x, n) => (x === null || x === undefined || !n ? null : x / n);
    const zj = zero?.jobs ?? { cpu: 0, rt: 0, rowsRead: 0, rowsWritten: 0 };
    const lines = [];
    if (zero)
      lines.push(
        `request: ${fmt(zero.request.cpu, 2)} ms CPU / ${zero.request.rt} RT (no followers; ${loc ? `${fmt(loc.request.cpu, 2)} / ${loc.request.rt} with ${loc.p.localFollowers} followers` : ""})`,
      );
    if (loc)
      lines.push(
        `queued per local follower: ${fmt(per(loc.jobs.cpu - zj.cpu, loc.p.localFollowers), 3)} ms CPU, ${fmt(per(loc.jobs.rt - zj.rt, loc.p.localFollowers), 3)} RT, ` +
          `${fmt(per(loc.jobs.rowsRead - zj.rowsRead, loc.p.localFollowers), 1)} rows read, ${fmt(per(loc.jobs.rowsWritten - zj.rowsWritten, loc.p.localFollowers), 1)} written ` +
          `(job types per post: ${Object.entries(loc.jobs.byType)
            .map(([k, v]) => `${k} ${fmt(v, 1)}`)
            .join(", ")})`,
      );
    if (rem)
      lines.push(
        `per remote host: ${fmt(per(rem.jobs.cpu - zj.cpu + rem.delivery.cpu, rem.p.remoteHosts), 2)} ms CPU ` +
          `(${fmt(per(rem.jobs.cpu - zj.cpu, rem.p.remoteHosts), 2)} in the JOBS consumer + ${fmt(per(rem.delivery.cpu, rem.p.remoteHosts), 2)} signing and sending), ` +
          `${fmt(per(rem.jobs.rt - zj.rt + rem.delivery.rt, rem.p.remoteHosts), 2)} RT; ${rem.p.remoteFollowers} followers share one inbox per host`,
      );
    if (zero) lines.push(`queued work every post has (no followers): ${fmt(zj.cpu, 1)} ms CPU, ${fmt(zj.rt, 1)} RT, ${fmt(zj.messages, 1)} jobs`);
    out.push(...lines.map((l) => `  ${l}`));
    out.push(
      wrap(
        "Both consumers held during the POSTs, so the request's CPU is the request alone (above the no-op baseline); queued = " +
          "the JOBS consumer from release until quiet, deliveries = the DELIVERY consumer from release until every stub host " +
          "had its request; workerd CPU minus idle and the status polls, ÷ posts. Local D1 runs in the measured process " +
          "(upper bounds). Per follower / host: minus the no-follower poster's queued work.",
      ),
    );
    for (const n of notes) out.push(`  - ${n}`);
    return out;
  }

  return { scenario, report, results };
}
