// Load generator: node fetch (keep-alive) with a fixed number of requests spread over N concurrent workers.
// Records latency, status codes and the D1 round trips each response reports in Server-Timing.

const now = () => performance.now();

/** `Server-Timing: d1;desc="round trips";dur=N` → N (null when the header is missing). */
export function roundTrips(res) {
  const h = res.headers.get("server-timing");
  const m = h && /(?:^|,)\s*d1\b[^,]*?;\s*dur=(\d+(?:\.\d+)?)/.exec(h);
  return m ? Number(m[1]) : null;
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
      try {
        const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
        body = await res.text();
        status = res.status;
        rt = roundTrips(res);
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
    rt: rts.length ? { median: percentile(rts, 0.5), max: rts[rts.length - 1], missing: latencies.length - rts.length } : null,
    errors,
    first,
  };
}
