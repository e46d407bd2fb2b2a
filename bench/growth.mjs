// Issue 12 point 2: does a hot endpoint grow with the database? bench/run.mjs runs the same scenarios on two seeds
// (bench/seed.mjs SHAPES: `small`, the seed of every other figure, and `large`: 100,000 statuses, 5,000 local and
// 1,000 remote accounts on 500 hosts, the viewer's home feed and notifications 5× longer), each on a fresh server,
// and this prints, per scenario, round trips, rows read and CPU on both, with ✓/✗ for "does not grow":
//   - round trips: the medians equal;
//   - rows read (mean per request): large ≤ small × 1.1 + 5 (a page bounded by what it returns reads the same rows;
//     SQLite's index walks differ by a row or two with the data);
//   - CPU ms (above the no-op baseline, c=1): large ≤ small + max(0.5 ms, 25 % of small): the noise between two
//     servers started one after the other on a shared machine (the clock tick alone is 0.03–0.17 ms per request).
// POST's queued work (fan-out) is compared per post with a wider margin for rows read (× 1.3 + 20): fan-out trims the
// receiving feeds in one chunk of 16 at random, so the count moves between runs.

export const GROWTH_KEYS = [
  "instance",
  "instance1",
  "nodeinfo",
  "verify",
  "notifications",
  "notifications2",
  "account",
  "context",
  "search",
  "public",
  "publiclocal",
  "home20",
  "home40",
  "post",
];

const rowsOk = (a, b) => b <= a * 1.1 + 5;
const cpuOk = (a, b) => b <= a + Math.max(0.5, Math.abs(a) * 0.25);

function figures(r) {
  if (!r || r.broken) return null;
  const rt = (r.r1.rt ?? r.r10.rt)?.median ?? null;
  const rows = [r.r1.rows, r.r10.rows].filter(Boolean);
  const n = rows.reduce((m, x) => m + x.n, 0);
  const mean = (k) => (n ? rows.reduce((m, x) => m + x[k].mean * x.n, 0) / n : null);
  return { rt, read: mean("r"), written: mean("w"), cpu: r.cpu ?? null, queued: r.queued ?? null };
}

/** Lines for the report: the first size against the last. */
export function growthReport({ reports, table, fmt, wrap }) {
  const a = reports[0];
  const b = reports[reports.length - 1];
  const byKey = (rep, k) => rep.results.find((r) => r.s.key === k);
  const sizeLine = (rep) => {
    const c = rep.seedInfo.counts;
    return `${rep.size}: ${c.statuses.toLocaleString("en")} statuses, ${c.accounts.toLocaleString("en")} local + ${c.remoteAccounts} remote accounts (${c.remoteHosts} hosts), home feed ${c.homeFeed}, ${c.notifications} notifications, context thread ${rep.seedInfo.samples.threadAncestors} ancestors + ${rep.seedInfo.samples.threadDescendants} descendants`;
  };
  const rows = [["Scenario", "D1 RT", "", "rows read", "", "CPU ms", "", "grows?"]];
  const marks = [];
  for (const k of GROWTH_KEYS) {
    const x = figures(byKey(a, k));
    const y = figures(byKey(b, k));
    if (!x || !y) continue;
    const label = byKey(a, k).s.label;
    const rtOk = x.rt === y.rt;
    const rdOk = x.read === null || y.read === null ? null : rowsOk(x.read, y.read);
    const cOk = x.cpu === null || y.cpu === null ? null : cpuOk(x.cpu, y.cpu);
    const ok = rtOk && rdOk !== false && cOk !== false;
    marks.push(ok);
    const mk = (v) => (v === null ? "?" : v ? "✓" : "✗");
    rows.push([
      label,
      `${x.rt ?? "–"} → ${y.rt ?? "–"}`,
      mk(rtOk),
      `${fmt(x.read, 1)} → ${fmt(y.read, 1)}`,
      mk(rdOk),
      `${fmt(x.cpu, 2)} → ${fmt(y.cpu, 2)}`,
      mk(cOk),
      ok ? "no ✓" : "yes ✗",
    ]);
    if (x.queued && y.queued) {
      // Fan-out trims the receiving feeds in 1 of 16 chunks, at random (src/timelines/fanout.ts TRIM_EVERY): wider margin.
      const qr = y.queued.rowsRead <= x.queued.rowsRead * 1.3 + 20;
      const qt = Math.abs(x.queued.rt - y.queued.rt) <= Math.max(0.5, x.queued.rt * 0.1);
      marks.push(qr && qt);
      rows.push([
        "  + its queued work, per post",
        `${fmt(x.queued.rt, 1)} → ${fmt(y.queued.rt, 1)}`,
        mk(qt),
        `${fmt(x.queued.rowsRead, 1)} → ${fmt(y.queued.rowsRead, 1)}`,
        mk(qr),
        "",
        "",
        qr && qt ? "no ✓" : "yes ✗",
      ]);
    }
  }
  if (rows.length === 1) return ["Growth: no scenario ran on both sizes."];
  const failed = marks.filter((m) => !m).length;
  return [
    `Growth (issue 12 point 2): ${a.size} → ${b.size}, each on a fresh server, back to back`,
    `  ${sizeLine(a)}`,
    `  ${sizeLine(b)}`,
    table(rows),
    wrap(
      `Goal: no hot endpoint grows with the database (${failed ? `${failed} ✗` : "all ✓"}). Marks: D1 RT medians equal; rows read ` +
        "(mean per request, Server-Timing d1r) large ≤ small × 1.1 + 5; CPU ms (c=1, above each run's no-op baseline) " +
        "large ≤ small + max(0.5 ms, 25 %), the noise between two servers on a shared machine; queued rows read × 1.3 + 20 " +
        "(random feed trims). The larger size runs these scenarios only (no federation). Status search reads the viewer's " +
        "library and at most 20 × (limit + offset) public matches (src/queries/statuses/search.ts), so its rows follow the viewer, not the database.",
    ),
  ];
}
