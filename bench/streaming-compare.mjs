// The before/after comparison of `npm run bench:streaming` (issue 34, point 1: render once per event): the same
// streaming bench entry bundled from another commit's src/ ("before", by default the commit before the change) and
// from the working tree ("after"), served side by side in one run, each with its own seed (a poster, the same number
// of followers with tokens), and the same workload on each, one after the other per size: N followers online on their
// `user` stream (N = 1, 100, 1,000), 2 warm-up and POSTS measured statuses. Ratios are taken within the run, so a busy
// shared machine moves both sides alike. Used by bench/streaming.mjs (startHarness, Fleet); figures: bench/README.md.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

/** The commit before "render once per event" (the toolchain-upgrade head this work started from). */
export const BEFORE_COMMIT = "dc3a179";
/** Goals (issue 34): CPU per post at 1,000 online followers at least this many times less; all 1,000 within this. */
export const GOAL_RATIO = 5;
export const GOAL_ALL_REACHED_MS = 1000;

/**
 * A bench entry on `rev`'s src/: `git archive` of src/ into node_modules/.cache (inside the repository, so the
 * bundler resolves the packages as for the working tree), with the working tree's bench files (`files`: the entry
 * first, then the modules it imports) next to it. Returns the entry's path and the commit, or { error } when the
 * commit is not there. bench/day-compare.mjs uses it too.
 */
export function prepareBefore(root, rev, files = ["streaming-entry.js"], { migrations = false } = {}) {
  let sha;
  try {
    sha = execFileSync("git", ["rev-parse", "--verify", `${rev}^{commit}`], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return { error: `commit ${rev} not found (a shallow clone?): no before/after comparison` };
  }
  const dir = join(root, "node_modules", ".cache", "tern-bench-before", sha.slice(0, 12));
  // `migrations`: the commit's schema too (migrations/), for a before side that must run on the tables it was written for.
  if (!existsSync(join(dir, "src", "index.ts")) || (migrations && !existsSync(join(dir, "migrations")))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tar = execFileSync("git", ["archive", "--format=tar", sha, "src", ...(migrations ? ["migrations"] : [])], {
      cwd: root,
      maxBuffer: 256 * 1024 * 1024,
    });
    execFileSync("tar", ["-x", "-C", dir], { input: tar });
  }
  mkdirSync(join(dir, "bench"), { recursive: true });
  for (const f of files) copyFileSync(join(root, "bench", f), join(dir, "bench", f));
  return { entry: join(dir, "bench", files[0]), sha, migrationsDir: migrations ? join(dir, "migrations") : null };
}

/**
 * Runs the comparison. `startHarness` and `Fleet` come from bench/streaming.mjs. Returns the figures for the report
 * (formatComparison), or { error }.
 */
export async function runComparison({ root, rev, sizes, startHarness, Fleet, notes, log, fanoutChunk }) {
  const before = prepareBefore(root, rev);
  if (before.error) return { error: before.error };
  log(`compare: before = ${before.sha.slice(0, 12)} (src/ of that commit), after = the working tree; sizes ${sizes.join(", ")}`);
  const harnesses = [];
  try {
    harnesses.push(await startHarness({ label: "before", entry: before.entry, notes }));
    harnesses.push(await startHarness({ label: "after", entry: join(root, "bench", "streaming-entry.js"), notes }));
    const out = { sha: before.sha, sizes, rows: [], baseline: {} };
    const cpuPer = (h, run) => (run.cpu.runtime - h.idleRate * (run.cpu.wall / 1000)) / run.posts.length;
    for (const h of harnesses) {
      const run = await h.measurePosts(null, `${h.label}: no listeners`);
      out.baseline[h.label] = cpuPer(h, run);
    }
    for (const n of sizes) {
      const row = { n };
      for (const h of harnesses) {
        const fleet = new Fleet(n);
        try {
          await h.control("?reset=1");
          await fleet.open(
            () => `${h.wsBase}/api/v1/streaming?stream=user`,
            (i) => ({ authorization: `Bearer ${h.seed.listeners[i].token}` }),
          );
          if (fleet.failed.length) notes.push(`compare ${h.label} ×${n}: ${fleet.failed.length} sockets failed to open, e.g. ${fleet.failed[0]}`);
          let run;
          try {
            run = await h.measurePosts(fleet, `${h.label}: ${n} user sockets`);
          } catch (e) {
            // One size on one side failing (the local runtime stopped answering) leaves the others' figures.
            notes.push(`compare ${h.label} ×${n}: ${e.message}`);
            row[h.label] = null;
            continue;
          }
          const a = h.analyse(run, fleet, (i) => Math.floor(i / fanoutChunk));
          row[h.label] = {
            cpu: cpuPer(h, run),
            streaming: cpuPer(h, run) - out.baseline[h.label],
            allReached: a.lastPerEvent,
            p50: a.fromPost.p50,
            missing: a.missing,
            kicked: a.kicked,
            delivers: run.counters.delivers / run.posts.length,
            // D1 per post: the Streaming objects (hubs) and the JOBS consumer (fan-out and publish).
            hubRt: run.d1 ? run.d1.objects.n / run.posts.length : Number.NaN,
            hubRows: run.d1 ? run.d1.objects.r / run.posts.length : Number.NaN,
            jobsRt: run.d1 ? run.d1.jobs.n / run.posts.length : Number.NaN,
            jobsRows: run.d1 ? run.d1.jobs.r / run.posts.length : Number.NaN,
          };
        } finally {
          await fleet.close();
          await h.waitRouterEmpty(`compare ${h.label} ×${n}`).catch((e) => notes.push(`compare: ${e.message}`));
        }
      }
      out.rows.push(row);
    }
    return out;
  } finally {
    for (const h of harnesses) await h.server.stop();
  }
}

const fmt = (n, d = 0) => (n === null || n === undefined || Number.isNaN(n) ? "–" : n.toFixed(d));
const ratio = (b, a) => (a > 0 && b > 0 ? b / a : Number.NaN);

/**
 * The goal lines of issue 34 point 1 (also what bench/all.mjs prints in its summary): CPU per post at 1,000 online
 * followers before ÷ after, and every event's last socket after.
 */
export function comparisonGoals(c) {
  if (c.error) return [`Streaming before/after: ${c.error}.`];
  const top = c.rows.find((r) => r.n === 1000);
  if (!top?.before || !top.after) return ["Streaming goal lines need the size 1,000 (--compare-sizes) on both sides."];
  const k = ratio(top.before.cpu, top.after.cpu);
  const worst = top.after.allReached.max;
  return [
    `Streaming (user streams, before = ${c.sha.slice(0, 12)}'s src/ beside this tree): CPU per post (the POST, the fan-out into ` +
      `1,000 feeds, the publish and every hub, local D1 included) at 1,000 online followers ${fmt(top.before.cpu, 1)} → ` +
      `${fmt(top.after.cpu, 1)} ms = ${fmt(k, 1)}× less (goal ≥ ${GOAL_RATIO}×) ${k >= GOAL_RATIO ? "✓" : "✗"}`,
    `Streaming: every event's last of 1,000 user sockets after (POST answered → update): worst ${fmt(worst)} ms, p50 of the events ` +
      `${fmt(top.after.allReached.p50)} ms (goal ≤ ${GOAL_ALL_REACHED_MS} ms) ${worst <= GOAL_ALL_REACHED_MS ? "✓" : "✗"}`,
  ];
}

/** The comparison as table rows and goal lines. */
export function formatComparison(c, table, wrap, followers) {
  if (c.error) return [`Before/after: ${c.error}.`];
  const out = [];
  out.push(
    `Before/after, render once per event (user streams; before = ${c.sha.slice(0, 12)}'s src/, after = this tree; the same entry, ` +
      `seed and workload, servers side by side in this run):`,
  );
  const rows = [
    [
      "online followers",
      "CPU ms/post before",
      "after",
      "before ÷ after",
      "streaming only before",
      "after",
      "÷",
      "all reached max before",
      "after",
      "hub RPCs/post before / after",
      "D1 RT/post hubs + consumer before",
      "after",
      "rows read/post before",
      "after",
    ],
  ];
  for (const r of c.rows) {
    const b = r.before;
    const a = r.after;
    if (!b || !a) continue;
    rows.push([
      String(r.n),
      fmt(b.cpu, 1),
      fmt(a.cpu, 1),
      `${fmt(ratio(b.cpu, a.cpu), 1)}×`,
      fmt(b.streaming, 1),
      fmt(a.streaming, 1),
      `${fmt(ratio(b.streaming, a.streaming), 1)}×`,
      `${fmt(b.allReached.max)} ms`,
      `${fmt(a.allReached.max)} ms`,
      `${fmt(b.delivers, 0)} / ${fmt(a.delivers, 0)}`,
      `${fmt(b.hubRt, 0)} + ${fmt(b.jobsRt, 0)}`,
      `${fmt(a.hubRt, 0)} + ${fmt(a.jobsRt, 0)}`,
      fmt(b.hubRows + b.jobsRows, 0),
      fmt(a.hubRows + a.jobsRows, 0),
    ]);
  }
  out.push(table(rows));
  out.push(...comparisonGoals(c));
  out.push(
    wrap(
      `CPU ms/post: workerd runtime utime+stime from the first measured POST until its fan-out finished and every socket ` +
        `had it, minus idle, ÷ posts: the POST, the home-feed fan-out into the ${followers} followers' feeds ` +
        `(the same on both sides), the publish (renderings, who listens, the router) and every hub, local D1 included. ` +
        `"streaming only" subtracts each side's no-listener POSTs (before ${fmt(c.baseline.before, 1)} ms, after ${fmt(c.baseline.after, 1)} ms). ` +
        `"all reached max": POST's response → the last socket's update, the worst of the measured posts (followers past 500 ` +
        `wait for the fan-out's second JOBS batch). D1 round trips and rows read per post (the counter behind ` +
        `Server-Timing): the Streaming objects' (hubs) + the JOBS consumer's (fan-out into the feeds and the publish); ` +
        `the POST's own are not in them.`,
    ),
  );
  return out;
}
