// Media figures (issue 32, point 5): `node bench/media.mjs [--runs=3] [--sizes=1,12,24,48]`. Not part of `npm run bench`.
//
// Tern is bundled as for deployment and served by Miniflare in this process, on a fresh local D1/R2, with the Images
// binding as Miniflare runs it locally: sharp, inside this node process (Miniflare's loopback service). So the two CPU
// figures of an upload come apart by process:
// - Worker: workerd's threads (/proc, bench/cpu.mjs): Tern's own work (reading headers, stripping metadata, the PNG
//   inflate and blurhash, the R2 puts and the row) plus local R2/D1 and the binding's transport on that side.
// - Images binding: this node process's CPU (process.cpuUsage) during the request: sharp's decode, resize and encode
//   (all its threads) and Miniflare's loopback handling of the image bytes. On Cloudflare this work is the Images
//   service's, billed per transformation, not Worker CPU. The client's own part (sending a prepared buffer) is small.
// --perf[=FILE]: Linux perf on workerd over the measured uploads (bench/perf-tails.mjs): where the Worker's CPU of an upload
// goes (Tern's JavaScript, the runtime's body and form parsing, local R2's SQLite and files, memory copies).
// Uploads go through POST /api/v1/media, which processes before answering (v2 answers 202 above 3840×2160 and does the
// same work after the answer). Pictures are photo-like JPEGs made with sharp (gradients and noise, quality 85).
//
// Then the download figure: 20 statuses with one 12-megapixel photo each in the viewer's home timeline, the bytes a
// client loads for them as Mastodon clients do (preview_url in the timeline) against the originals (the old Tern, whose
// preview_url was the original).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogLevel } from "miniflare";
import sharp from "sharp";
import { applyMigrations, freePort } from "../test/support/server.mjs";
import { cpuSupported, threadCpuMs, workerdPids } from "./cpu.mjs";
import { apiCall, bundleTern, signUp, ternMiniflare } from "./miniflare.mjs";
import { reportPerf, startPerf } from "./perf-tails.mjs";

const argv = process.argv.slice(2);
const arg = (name, dflt) => argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const RUNS = Number(arg("runs", 3));
const SIZES = arg("sizes", "1,12,24,48").split(",").map(Number);
const PERF = argv.includes("--perf") || arg("perf") !== undefined;
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const nodeCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** A photo-like JPEG of about `mp` megapixels, 4:3. */
async function photo(mp, seed) {
  const w = Math.round(Math.sqrt((mp * 1e6 * 4) / 3));
  const h = Math.round((w * 3) / 4);
  const raw = Buffer.alloc(w * h * 3);
  let s = seed * 2654435761;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      const n = (s >>> 24) % 24;
      const o = (y * w + x) * 3;
      raw[o] = (x * 200) / w + n;
      raw[o + 1] = (y * 180) / h + 40 + n;
      raw[o + 2] = ((x + y + seed * 97) % 256) / 2 + 60 + n;
    }
  }
  const bytes = await sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
  return { w, h, bytes };
}

async function upload(url, token, bytes, path = "/api/v1/media") {
  const f = new FormData();
  f.append("file", new Blob([bytes], { type: "image/jpeg" }), "photo.jpg");
  const res = await fetch(url + path, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: f });
  return { status: res.status, body: await res.json() };
}

const tmp = mkdtempSync(join(tmpdir(), "tern-media-"));
let mf;
try {
  const script = bundleTern(join(tmp, "bundle"));
  applyMigrations(tmp);
  mf = ternMiniflare({
    script,
    persistTo: tmp,
    port: await freePort(),
    vars: {
      REGISTRATIONS_MODE: "open",
      RATE_LIMIT_MEDIA: "off",
      RATE_LIMIT_API_PER_ACCOUNT: "off",
      RATE_LIMIT_API_PER_TOKEN: "off",
      IMAGES_TIMEOUT_MS: "60000",
    },
    logLevel: LogLevel.ERROR,
  });
  const url = (await mf.ready).href.replace(/\/$/, "");
  const pids = workerdPids(process.pid);
  const canCpu = cpuSupported() && pids.length > 0;
  const token = await signUp(url, "photographer");

  const perfFile = arg("perf") ?? join(tmp, "media.perf");
  const stopPerf = PERF && canCpu ? await startPerf(pids[0], perfFile) : null;
  if (PERF && !stopPerf) console.log("--perf: perf cannot record here (not installed, or not permitted)");
  const windows = [];
  console.log(`CPU per upload (POST /api/v1/media, median of ${RUNS}; Worker = workerd's threads, binding = sharp in the Miniflare process)`);
  console.log("| photo | file | answer | Worker CPU ms | Images binding CPU ms | wall ms | stored original | preview |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const mp of [0.0012, ...SIZES]) {
    const p = await photo(mp, Math.ceil(mp));
    const worker = [];
    const binding = [];
    const wall = [];
    let last;
    for (let r = 0; r < RUNS; r++) {
      const w0 = canCpu ? threadCpuMs(pids) : 0;
      const n0 = nodeCpuMs();
      const t0 = performance.now();
      const from = monotonicUs();
      last = await upload(url, token, p.bytes);
      const to = monotonicUs();
      wall.push(performance.now() - t0);
      binding.push(nodeCpuMs() - n0);
      worker.push(canCpu ? threadCpuMs(pids) - w0 : Number.NaN);
      windows.push({ kind: `upload ${mp < 0.01 ? "baseline" : `${mp} MP`}`, ms: worker.at(-1), from, to });
    }
    const m = last.body?.meta;
    const answer = last.status === 200 ? "200" : `${last.status} ${last.body?.error ?? ""}`;
    const orig = m?.original ? `${m.original.size}` : "-";
    const small = m?.small && last.body.preview_url !== last.body.url ? `${m.small.size}` : "-";
    console.log(
      `| ${mp < 0.01 ? "baseline" : `${mp} MP`} (${p.w}×${p.h}) | ${(p.bytes.length / 1e6).toFixed(1)} MB | ${answer} | ${median(worker).toFixed(0)} | ${median(binding).toFixed(0)} | ${median(wall).toFixed(0)} | ${orig} | ${small} |`,
    );
  }

  if (stopPerf) {
    await stopPerf();
    await reportPerf(perfFile, windows, { top: 8 });
  }

  // 20 statuses with one photo each, in the viewer's home timeline.
  const viewer = await signUp(url, "viewer");
  const author = (await apiCall(url, "/api/v1/accounts/verify_credentials", { token })).body;
  await apiCall(url, `/api/v1/accounts/${author.id}/follow`, { form: {}, token: viewer });
  let uploaded = 0;
  for (let i = 0; i < 20; i++) {
    const p = await photo(12, 100 + i);
    uploaded += p.bytes.length;
    const m = await upload(url, token, p.bytes);
    if (m.status !== 200) throw new Error(`upload ${i}: ${m.status} ${JSON.stringify(m.body)}`);
    const st = await apiCall(url, "/api/v1/statuses", { form: { status: `Photo ${i}`, "media_ids[]": m.body.id }, token });
    if (st.status !== 200) throw new Error(`post ${i}: ${st.status}`);
  }
  let home = [];
  for (let i = 0; i < 50 && home.length < 20; i++) {
    home = (await apiCall(url, "/api/v1/timelines/home?limit=20", { token: viewer })).body;
    if (!Array.isArray(home)) home = [];
    if (home.length < 20) await new Promise((r) => setTimeout(r, 200));
  }
  const size = async (u) => (await (await fetch(u)).arrayBuffer()).byteLength;
  let previews = 0;
  let originals = 0;
  let hashes = 0;
  for (const s of home) {
    const a = s.media_attachments[0];
    previews += await size(a.preview_url);
    originals += await size(a.url);
    if (a.blurhash) hashes++;
  }
  console.log("");
  console.log(`Home page of ${home.length} statuses with one 12 MP photo each (bytes of the pictures a client loads):`);
  console.log(`| what | bytes | per status |`);
  console.log(`|---|---|---|`);
  console.log(`| the photos as uploaded (Tern's preview_url before issue 32) | ${(uploaded / 1e6).toFixed(1)} MB | ${(uploaded / 20 / 1e3).toFixed(0)} KB |`);
  console.log(
    `| stored originals now (url: within 3840×2160, re-encoded) | ${(originals / 1e6).toFixed(1)} MB | ${(originals / home.length / 1e3).toFixed(0)} KB |`,
  );
  console.log(`| previews (preview_url now) | ${(previews / 1e6).toFixed(2)} MB | ${(previews / home.length / 1e3).toFixed(0)} KB |`);
  console.log(`previews are ${((100 * previews) / uploaded).toFixed(1)}% of the photos as uploaded; ${hashes} of ${home.length} have a blurhash`);
} finally {
  await mf?.dispose();
  rmSync(tmp, { recursive: true, force: true });
}
