// Load generator: node fetch (keep-alive) with a fixed number of requests spread over N concurrent workers.
// Records latency, status codes and the D1 round trips each response reports in Server-Timing (and, with
// DEV_SERVER_TIMING on, the statements, rows read and rows written).

const now = () => performance.now();

/** `Server-Timing: d1;desc="round trips";dur=N` → N (null when the header is missing). */
export function roundTrips(res) {
  const h = res.headers.get("server-timing");
  const m = h && /(?:^|,)\s*d1\b[^,]*?;\s*dur=(\d+(?:\.\d+)?)/.exec(h);
  return m ? Number(m[1]) : null;
}

/**
 * D1's billing units from `Server-Timing` (DEV_SERVER_TIMING=true, src/lib/limits/d1-counter.ts): `d1q` statements, `d1r` rows
 * read, `d1w` rows written; null when the header does not carry them.
 */
export function rowMetrics(res) {
  const h = res.headers.get("server-timing");
  if (!h) return null;
  const get = (name) => {
    const m = new RegExp(`(?:^|,)\\s*${name}\\b[^,]*?;\\s*dur=(\\d+(?:\\.\\d+)?)`).exec(h);
    return m ? Number(m[1]) : null;
  };
  const r = get("d1r");
  return r === null ? null : { q: get("d1q") ?? 0, r, w: get("d1w") ?? 0 };
}

/** Mean, median and max of each of q, r, w over the responses that carried them. */
function summarizeRows(list) {
  if (!list.length) return null;
  const out = { n: list.length };
  for (const k of ["q", "r", "w"]) {
    const v = list.map((x) => x[k]).sort((a, b) => a - b);
    out[k] = { mean: v.reduce((a, b) => a + b, 0) / v.length, median: percentile(v, 0.5), max: v[v.length - 1] };
  }
  return out;
}

export function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/**
 * @param {{ request: (i: number) => { url: string, init?: RequestInit }, ok: number[], count: number, concurrency: number }} s
 */
export async function runLoad({ request, ok, count, concurrency, timeoutMs = 30_000, maxTimeouts = 3 }) {
  const latencies = [];
  const rts = [];
  const rows = [];
  const errors = new Map(); // status → { n, sample }
  let next = 0;
  let first = null; // first successful body (parsed when JSON), to show what a page held
  let timeouts = 0; // a dead runtime behind wrangler's proxy never answers: give up after a few
  const worker = async () => {
    while (true) {
      const i = next++;
      if (i >= count || timeouts >= maxTimeouts) return;
      const { url, init } = request(i);
      const t0 = now();
      let status;
      let body = "";
      let rt = null;
      let rm = null;
      try {
        const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
        body = await res.text();
        status = res.status;
        rt = roundTrips(res);
        rm = rowMetrics(res);
      } catch (e) {
        if (e.name === "TimeoutError") {
          timeouts++;
          status = `timeout (${timeoutMs / 1000} s)`;
        } else status = `network: ${e.cause?.code ?? e.message}`;
      }
      const ms = now() - t0;
      if (ok.includes(status)) {
        latencies.push(ms);
        if (rt !== null) rts.push(rt);
        if (rm !== null) rows.push(rm);
        if (first === null) first = { status, body };
      } else {
        const e = errors.get(status) ?? { n: 0, sample: body.slice(0, 200) };
        e.n++;
        errors.set(status, e);
      }
    }
  };
  const t0 = now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = (now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  rts.sort((a, b) => a - b);
  return {
    count,
    concurrency,
    okCount: latencies.length,
    timedOut: timeouts >= maxTimeouts,
    rps: latencies.length / wall,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    rows: summarizeRows(rows),
    rt: rts.length ? { median: percentile(rts, 0.5), max: rts[rts.length - 1], missing: latencies.length - rts.length } : null,
    errors,
    first,
  };
}
