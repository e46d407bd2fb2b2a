// Worker CPU as the kernel counts it: utime + stime (all threads) of the workerd process running the Worker. Linux
// only (/proc). Under `wrangler dev` (bench/server.mjs `via: "wrangler"`) there are two workerd processes: a proxy on
// the public port, and the runtime that holds the Tern Worker with its local D1/DO/Queue simulators; the proxy is left
// out. Under Miniflare alone (`via: "direct"`, bench/direct.mjs) there is one, the runtime, and it listens on the
// public port itself. Clock ticks are coarse (CLK_TCK, usually 100/s = 10 ms), so callers measure over hundreds of
// requests and divide.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let tickMs = null;
export function clockTickMs() {
  if (tickMs === null) {
    let hz = 100;
    try {
      hz = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      /* keep 100 */
    }
    tickMs = 1000 / hz;
  }
  return tickMs;
}

/** { pid, ppid, comm, utime, stime } from /proc/<pid>/stat; comm may hold spaces and parentheses. */
function readStat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = s.lastIndexOf(")");
    const comm = s.slice(s.indexOf("(") + 1, close);
    const f = s.slice(close + 2).split(" "); // f[0] is field 3 (state)
    return { pid, ppid: Number(f[1]), comm, utime: Number(f[11]), stime: Number(f[12]) };
  } catch {
    return null;
  }
}

export function cpuSupported() {
  try {
    readFileSync("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
}

/**
 * PIDs of workerd processes descending from rootPid (the wrangler or bench/direct.mjs process we spawned). With
 * `proxyPort` and rootPid a wrangler process, the one serving that port (wrangler's proxy,
 * `--socket-addr=entry=127.0.0.1:<port>`) is skipped, unless nothing else is left (with `strict`, nothing is then
 * returned: the runtime is gone). Under bench/direct.mjs the workerd on that port is the runtime, and is kept.
 */
export function workerdPids(rootPid, proxyPort, { strict = false } = {}) {
  const all = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = readStat(Number(name));
    if (st) all.push(st);
  }
  const children = new Map();
  for (const p of all) {
    if (!children.has(p.ppid)) children.set(p.ppid, []);
    children.get(p.ppid).push(p);
  }
  const found = [];
  const stack = [rootPid];
  while (stack.length) {
    const pid = stack.pop();
    for (const c of children.get(pid) ?? []) {
      if (c.comm.includes("workerd")) found.push(c.pid);
      stack.push(c.pid);
    }
  }
  if (!proxyPort || !isWrangler(rootPid)) return found;
  const runtime = found.filter((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return !args.some((a) => new RegExp(`^--socket-addr=entry=[^=]*:${proxyPort}$`).test(a));
    } catch {
      return false;
    }
  });
  return runtime.length || strict ? runtime : found;
}

/** Whether pid runs wrangler (`node …/wrangler/bin/wrangler.js dev …`), whose proxy workerd is to be left out. */
function isWrangler(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .some((a) => /[\\/]wrangler[\\/](bin|wrangler-dist)[\\/]/.test(a));
  } catch {
    return true; // gone: keep the old rule
  }
}

/** Summed utime + stime (in ms) of the given processes. */
export function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const st = readStat(pid);
    if (st) ticks += st.utime + st.stime;
  }
  return ticks * clockTickMs();
}

/**
 * CPU of the given processes in ms, from the scheduler's exact run time of each of their threads
 * (/proc/<pid>/task/<tid>/schedstat, nanoseconds) instead of clock ticks; with `thread`, only the threads of that
 * name (`"workerd"`: the runtime's main thread, where JavaScript runs). Null when no thread could be read.
 */
export function threadCpuMs(pids, { thread } = {}) {
  let ns = 0;
  let read = false;
  for (const pid of pids) {
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        if (thread && readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() !== thread) continue;
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
        read = true;
      } catch {
        /* the thread ended */
      }
    }
  }
  return read ? ns / 1e6 : null;
}
