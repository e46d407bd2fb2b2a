// `npm run dev`'s server (scripts/dev.mjs; `--wrangler` runs `wrangler dev` instead): Tern's bundle served by Miniflare
// alone, on the local state wrangler keeps, rebuilt and reloaded when a file under src/ or wrangler.toml is saved, with
// the cron triggers of wrangler.toml fired at the start of each minute they name (UTC), as Cloudflare fires them.
//
// Why not `wrangler dev` (4.66): it puts a second workerd, its proxy Worker, in front of the runtime, and that hop
// loses a request now and then under load. Both ends are kj HTTP with a 5 s keep-alive (the client pool's idle timeout
// and the server's pipeline timeout), so a pooled connection reused just as the runtime closes it fails with "Network
// connection lost"; the proxy answers that 503 "Your worker restarted mid-request" for anything but a GET, although
// nothing restarted (workers-sdk issue 14641, still open in wrangler 4.130). Its inspector proxy also keeps every event
// of the runtime until DevTools attaches, so it only grows. wrangler dev also never fires crons. Served this way there
// is one workerd and clients talk to it directly; bench/README.md "Restarts and memory under load" has the figures.
import { mkdtempSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import { unstable_readConfig } from "wrangler";
import { bundleTernAsync, ternMiniflareOptions } from "./local-worker.mjs";
import { Miniflare } from "miniflare";

/** The cron triggers of the wrangler config at `config`. */
export const readCrons = (config) => unstable_readConfig({ config }).triggers?.crons ?? [];

/** Whether the five-field cron `expr` (numbers, `*`, ranges, lists, steps) names the UTC minute of `at`. */
export function cronMatches(expr, at) {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) return false;
  const values = [at.getUTCMinutes(), at.getUTCHours(), at.getUTCDate(), at.getUTCMonth() + 1, at.getUTCDay()];
  const bounds = [
    [0, 59],
    [0, 23],
    [1, 31],
    [1, 12],
    [0, 6],
  ];
  return fields.every((field, i) =>
    field.split(",").some((part) => {
      const [range, stepText] = part.split("/");
      const step = stepText === undefined ? 1 : Number(stepText);
      const [lo, hi] =
        range === "*" ? bounds[i] : range.includes("-") ? range.split("-").map(Number) : [Number(range), stepText ? bounds[i][1] : Number(range)];
      const v = i === 4 && values[i] === 0 && hi === 7 ? 7 : values[i];
      return Number.isInteger(step) && step > 0 && v >= lo && v <= hi && (v - lo) % step === 0;
    }),
  );
}

/**
 * Fires `crons` through `trigger(cron, scheduledTime)` at the start of every minute one of them names (every
 * `everyMs` instead, for tests: each run then counts as a match). Returns a stop function.
 */
export function startCron(crons, trigger, { everyMs = 0, log = console.log } = {}) {
  let timer;
  let stopped = false;
  const fire = async (at) => {
    for (const cron of crons) {
      if (!everyMs && !cronMatches(cron, at)) continue;
      try {
        const outcome = await trigger(cron, at);
        if (outcome !== "ok") log(`✖ cron "${cron}" at ${at.toISOString()}: ${outcome}`);
        else log(`› cron "${cron}" at ${at.toISOString()}: ok`, { quiet: true });
      } catch (e) {
        log(`✖ cron "${cron}" at ${at.toISOString()}: ${e instanceof Error ? e.message : e}`);
      }
    }
  };
  const next = () => {
    if (stopped) return;
    const now = Date.now();
    const at = everyMs ? now + everyMs : Math.floor(now / 60_000) * 60_000 + 60_000;
    timer = setTimeout(() => {
      next();
      void fire(new Date(at));
    }, at - now);
  };
  next();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * Serves Tern from a fresh bundle of src/ on `host`:`port` with the local state under `persistTo` and `vars` on top.
 * `watching`: rebuild and reload on edits (a build that fails is reported and the previous one keeps serving).
 * `logCron`: also print the crons that went well. Resolves once the Worker answers; `close()` stops everything.
 */
export async function serveDev({ root, host, port, persistTo, vars, logLevel, watching = true, logCron = false, cronEveryMs = 0, print = console.log }) {
  const outdir = mkdtempSync(join(tmpdir(), "tern-dev-"));
  const config = join(root, "wrangler.toml");
  // With a `print` of the caller's, the Worker's own output goes there too, line by line (a test keeps this process's
  // stdout for its runner's messages).
  const handleRuntimeStdio =
    print === console.log
      ? undefined
      : (stdout, stderr) => {
          for (const stream of [stdout, stderr]) createInterface(stream).on("line", (line) => print(line));
        };
  const optionsFor = (script) => ternMiniflareOptions({ script, host, port: Number(port), persistTo, vars, logLevel, config, handleRuntimeStdio });
  print("› Bundling src/ (wrangler deploy --dry-run)…");
  const mf = new Miniflare(optionsFor(await bundleTernAsync(outdir, { minify: false })));
  try {
    await mf.ready;
  } catch (e) {
    // A runtime that failed to start is still a child process: without this the caller (a test) never exits.
    await mf.dispose().catch(() => {});
    rmSync(outdir, { recursive: true, force: true });
    throw e;
  }

  const crons = readCrons(config);
  const log = (line, { quiet = false } = {}) => (!quiet || logCron) && print(line);
  const stopCron = startCron(
    crons,
    async (cron, at) => {
      const worker = await mf.getWorker();
      const result = await worker.scheduled({ cron, scheduledTime: at });
      return result.outcome;
    },
    { everyMs: cronEveryMs, log },
  );
  if (crons.length) print(`› Crons ${crons.map((c) => `"${c}"`).join(", ")} fire as on Cloudflare (UTC)`);

  let watcher = null;
  if (watching) {
    let building = false;
    let again = false;
    let debounce;
    const rebuild = async (what) => {
      if (building) {
        again = true;
        return;
      }
      building = true;
      const t0 = Date.now();
      print(`› ${what} changed: rebuilding…`);
      try {
        const script = await bundleTernAsync(outdir, { minify: false });
        await mf.setOptions(optionsFor(script));
        print(`› Reloaded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      } catch (e) {
        (print === console.log ? console.error : print)(`✖ The build failed; the previous one keeps serving.\n${e instanceof Error ? e.message : e}`);
      } finally {
        building = false;
        if (again) {
          again = false;
          void rebuild("more");
        }
      }
    };
    const onChange = (path) => {
      clearTimeout(debounce);
      debounce = setTimeout(() => void rebuild(path), 200);
    };
    const src = watch(join(root, "src"), { recursive: true }, (_event, file) => onChange(relative(root, join(root, "src", String(file ?? "")))));
    const toml = watch(config, () => onChange("wrangler.toml"));
    watcher = {
      close() {
        src.close();
        toml.close();
      },
    };
  }

  return {
    mf,
    async close() {
      stopCron();
      watcher?.close();
      await mf.dispose();
      rmSync(outdir, { recursive: true, force: true });
    },
  };
}
