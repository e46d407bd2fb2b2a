#!/usr/bin/env node
// `node bench/poll-votes.mjs [N]`: Worker CPU of an incoming poll vote, end to end (signed POST to the inbox, verify,
// store, the JOBS consumer counting it, and the update_poll hop that waits for the Update{Question}), next to the
// same figure for an incoming Like. A real fedify peer (test/federation/peer.mjs) sends N votes, one on each of N
// polls (one voter may vote once per poll), then N Likes of N statuses. CPU is utime+stime of wrangler's runtime
// workerd (Linux /proc, as bench/cpu.mjs), minus idle CPU over the same span and the status checks, ÷ N; the JOBS
// consumer's D1 round trips come from the bench entry's counters (bench/worker-entry.js), the POST's 4 from
// Server-Timing (checked in test/integration/federation-polls.test.ts). Run by hand; ~3 minutes for N=200.
import "../test/federation/polyfills.mjs";
import { join } from "node:path";
import { root, startBenchServer } from "./server.mjs";
import { startPeer } from "../test/federation/peer.mjs";
import { signUp } from "../test/federation/tern-api.mjs";
import { cpuMs, workerdPids } from "./cpu.mjs";

const N = Number(process.argv[2] ?? 150);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.error("[poll-votes]", ...a);

// The bench's server: a bundled snapshot (edits to src/ during the run do not restart workerd) with queue counters.
const tern = await startBenchServer({
  seed: () => {},
  entry: join(root, "bench", "worker-entry.js"),
  vars: {
    ALLOW_LOOPBACK_FETCH: "true",
    POLL_UPDATE_DELAY_SECONDS: "3600",
    RATE_LIMIT_STATUSES: "off",
    RATE_LIMIT_API_PER_ACCOUNT: "off",
    RATE_LIMIT_API_PER_TOKEN: "off",
  },
});
const port = Number(new URL(tern.url).port);
const peer = await startPeer({ ternHosts: [`127.0.0.1:${port}`] });
const jobStats = async () => (await (await fetch(`${tern.url}/__bench/queues`)).json()).queues.jobs ?? { d1: 0, acked: 0, byType: {} };
try {
  const { alice } = await signUp(tern.url, ["alice"]);
  const target = await peer.lookup(`acct:alice@127.0.0.1:${port}`);
  const pids = workerdPids(tern.pid, port, { strict: true });
  if (!pids.length) throw new Error("no workerd runtime process found");
  log(`seeding ${N + 1} polls and ${N + 1} statuses`);
  const polls = [];
  const posts = [];
  for (let i = 0; i <= N; i++) {
    polls.push(await alice.api.post("/api/v1/statuses", { status: `poll ${i}`, poll: { options: ["a", "b"], expires_in: 86_400 } }));
    posts.push(await alice.api.post("/api/v1/statuses", { status: `post ${i}` }));
  }
  const counted = async (i) => (await alice.api.get(`/api/v1/polls/${polls[i].poll.id}`)).votes_count === 1;
  const liked = async (i) => (await alice.api.get(`/api/v1/statuses/${posts[i].id}`)).favourites_count === 1;
  // Warm-up: the peer's actor and key get fetched and stored here, once.
  await peer.vote(target, polls[0].uri, "b");
  await peer.like(target, posts[0].uri);
  while (!(await counted(0)) || !(await liked(0))) await sleep(200);
  await sleep(3000);

  // Idle CPU and the cost of one status check, to subtract.
  let c0 = cpuMs(pids);
  let t0 = Date.now();
  await sleep(5000);
  const idlePerMs = (cpuMs(pids) - c0) / (Date.now() - t0);
  c0 = cpuMs(pids);
  t0 = Date.now();
  for (let i = 0; i < 100; i++) await counted(0);
  const checkMs = (cpuMs(pids) - c0 - idlePerMs * (Date.now() - t0)) / 100;

  async function measure(label, send, done) {
    const j0 = await jobStats();
    const c = cpuMs(pids);
    const t = Date.now();
    for (let i = 1; i <= N; i++) await send(i);
    let checks = 0;
    for (let i = 1; i <= N; i++) {
      while (!(await done(i))) {
        checks++;
        await sleep(100);
      }
      checks++;
    }
    const cpu = cpuMs(pids) - c - idlePerMs * (Date.now() - t) - checks * checkMs;
    const perItem = cpu / N;
    await sleep(2500); // the last jobs' counters
    const j1 = await jobStats();
    const jobs = { d1: (j1.d1 - j0.d1) / N, messages: (j1.acked - j0.acked) / N };
    log(`${label}: ${N} in ${((Date.now() - t) / 1000).toFixed(1)} s, ${checks} checks, JOBS ${JSON.stringify(j1.byType)}`);
    return { cpu: perItem, jobs };
  }
  const vote = await measure("votes", (i) => peer.vote(target, polls[i].uri, i % 2 ? "a" : "b"), counted);
  await sleep(3000);
  const like = await measure("likes", (i) => peer.like(target, posts[i].uri), liked);
  console.log(`Worker CPU per incoming activity (POST + processing), N=${N}, idle ${idlePerMs.toFixed(3)} ms/ms, check ${checkMs.toFixed(2)} ms:`);
  // The POST's round trips: Server-Timing (4 with a known key, federation-polls.test.ts); the JOBS consumer's: counted.
  for (const [label, r] of [
    ["poll vote", vote],
    ["Like", like],
  ]) {
    console.log(
      `  ${label.padEnd(9)} ${r.cpu.toFixed(2)} ms; D1 round trips 4 (POST) + ${r.jobs.d1.toFixed(1)} (JOBS, ${r.jobs.messages.toFixed(1)} messages)`,
    );
  }
  console.log("  (local workerd: D1, the queue broker and the DO simulators run in the same process and count here)");
} finally {
  await peer.stop();
  await tern.stop();
}
