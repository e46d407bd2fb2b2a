// A GET through the Worker's own fetch with Server-Timing on (DEV_SERVER_TIMING, src/lib/limits/d1-counter.ts): the body and
// the figures the header carries (d1: round trips, d1r: rows read, ...).
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import worker from "../../src/index";
import { ORIGIN } from "./helpers";

export async function timedGet(path: string, token: string) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${ORIGIN}${path}`, { headers: { authorization: `Bearer ${token}` } }),
    { ...env, DEV_SERVER_TIMING: "true" } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const body = (await res.json()) as any;
  const metrics: Record<string, number> = {};
  for (const part of (res.headers.get("server-timing") ?? "").split(",")) {
    const x = /^\s*([\w-]+)\b.*;\s*dur=(\d+)/.exec(part);
    if (x?.[1] && x[2]) metrics[x[1]] = Number(x[2]);
  }
  // Every page makes at least one round trip (the token): with no figure, comparing two of them would prove nothing.
  expect(metrics.d1, `${path}: server-timing d1`).toBeGreaterThan(0);
  return { status: res.status, body, metrics, rt: metrics.d1! };
}

/** Any API request through the Worker's own fetch with Server-Timing on: the status and rows read (d1r). */
export async function timedCall(method: string, path: string, token: string, json?: unknown) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (json !== undefined) headers["content-type"] = "application/json";
  const res = await worker.fetch(
    new Request(`${ORIGIN}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) }),
    { ...env, DEV_SERVER_TIMING: "true" } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const rows = Number(/d1r;[^,]*dur=(\d+)/.exec(res.headers.get("server-timing") ?? "")?.[1]);
  expect(rows, `${method} ${path}: server-timing d1r`).toBeGreaterThan(0);
  return { status: res.status, body: (await res.json()) as any, rows };
}
