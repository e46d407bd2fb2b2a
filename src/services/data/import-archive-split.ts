// The split, the first phase of an archive import (import-archive-rounds.ts runs the phases): outbox.json, likes.json
// and bookmarks.json are read as text and cut into parts in R2 of PART_ITEMS activities / PART_URIS URIs
// (src/lib/text/json-items.ts), so that no later round parses more than one part. A round reads at most
// SPLIT_BYTES_PER_ROUND bytes and carries where it stopped (file, bytes read, the splitter's state) in the cursor, so
// its CPU does not grow with the archive: an outbox.json uploaded alone is read by R2 ranges, a file of the zip by
// readEntryRound (inflated a round's bytes at a time, the checkpoint's window kept in R2).
import type { ArchiveImportRow, ArchiveParts } from "../../db/schema";
import type { Env } from "../../env";
import { concatBytes } from "../../lib/http/capped-body";
import { CollectionItemSplitter, type SplitterState } from "../../lib/text/json-items";
import {
  type EntryPosition,
  entryDataAt,
  entryStart,
  r2Access,
  type RandomAccess,
  readCentralDirectory,
  readEntryRound,
  type ZipEntryInfo,
} from "../../lib/text/zip-read";
import { ARCHIVE_ENTRY_MAX_BYTES, ARCHIVE_FILES, ARCHIVE_JSON_MAX_BYTES, ARCHIVE_TOTAL_MAX_BYTES } from "./import-archive";

/** Activities per part at least (a round parses its part and imports ITEMS_PER_ROUND of it). */
export const PART_ITEMS = 50;
/**
 * Parts of full size per file at most (each round also ends its last part where it stops): each is an R2 object the
 * statuses rounds read and the end of the import deletes. A larger file gets larger parts, from its size at ~500 bytes
 * an item (an estimate on the high side of the count: a Mastodon Create is 1–2 KB).
 */
export const MAX_PARTS_PER_FILE = 800;
export const PART_URIS = 1000;

export type Source = "outbox" | "likes" | "bookmarks";
export const partKey = (id: string, source: Source, n: number) => `archive_imports/${id}/parts/${source}-${String(n).padStart(6, "0")}.json`;

/** Where the split goes on (or the next phase once it is done), and the parts and items it made. */
export interface SplitProgress {
  phase: "split" | "statuses";
  cursor: string;
  parts: ArchiveParts;
  total: number;
}

export const archiveOf = (env: Pick<Env, "MEDIA">, imp: ArchiveImportRow) => r2Access(env.MEDIA, imp.fileKey, imp.fileSize);

export async function directory(src: RandomAccess) {
  return readCentralDirectory(src, { maxEntrySize: ARCHIVE_ENTRY_MAX_BYTES, maxTotalSize: ARCHIVE_TOTAL_MAX_BYTES });
}

/**
 * Bytes of the collection files the split reads per round at most: its CPU grows with them (inflating, the CRC,
 * decoding, splitting and the parts' text: ~15–25 ms a MB warm, several times that in a cold isolate), so a round's
 * CPU does not grow with the archive. 256 KiB: a round of ~30 ms measured (`bench/archive-import.mjs --per-round`,
 * against ~100 at 1 MB), for a few more rounds (20,000 posts: ~70 against ~2,000 of statuses). `ARCHIVE_SPLIT_BYTES`
 * overrides it.
 */
export const SPLIT_BYTES_PER_ROUND = 262_144;
/** A splitter state larger than this (a long item under way) is not carried: the round reads on to the next slice. */
const MAX_CARRIED_STATE = 64 * 1024;
/** Bytes handed to the decoder and the splitter at once: a round can stop between two slices. */
const MIN_SLICE = 1024;
const MAX_SLICE = 65_536;
export const SOURCES = ["outbox", "likes", "bookmarks"] as const;

/** A collection file an older split inflated out of the zip whole (an import under way from before the rounds below). */
const plainKey = (id: string, source: Source) => `archive_imports/${id}/plain/${source}.json`;
/** The 32 KiB a deflated file's next round may copy from, stored by the round before (deleted when the import ends). */
const windowKey = (id: string, source: Source, bit: number) => `archive_imports/${id}/inflate/${source}-${bit}`;

/**
 * Where a split stopped: the file (index in SOURCES), its bytes read, its parts and items so far, the splitter. For a
 * file of the zip, `z`: the CRC so far, the deflate checkpoint's bit (its window is at windowKey), the bytes of a
 * character cut at the round's end, and the entry with where its data starts (so the next round reads no directory:
 * an archive with thousands of media files has a directory of hundreds of KB).
 */
interface SplitCursor {
  s: number;
  bytes: number;
  n: number;
  items: number;
  state: SplitterState;
  z?: { bit: number; crc: number; tail: number[]; block?: EntryPosition["block"]; entry?: ZipEntryInfo; dataAt?: number };
}

function splitCursor(c: string | null): SplitCursor | null {
  if (!c) return null;
  const v = JSON.parse(c) as SplitCursor;
  return Number.isInteger(v.s) && Number.isInteger(v.bytes) && Number.isInteger(v.n) && v.state ? v : null;
}

/** Where the last whole UTF-8 character of `bytes` ends (a character cut at the end waits for the next round). */
function wholeCharsEnd(bytes: Uint8Array): number {
  for (let i = bytes.length - 1, back = 1; i >= 0 && back <= 4; i--, back++) {
    const b = bytes[i] as number;
    if ((b & 0xc0) === 0x80) continue;
    const len = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return back >= len ? bytes.length : i;
  }
  return bytes.length;
}

/** Whether a character ends just before `at` (the decoder then holds nothing a cursor at `at` would skip). */
const charEndsAt = (bytes: Uint8Array, at: number) => (at < bytes.length ? ((bytes[at] as number) & 0xc0) !== 0x80 : wholeCharsEnd(bytes) === bytes.length);

/** The end of a slice of `bytes` from `from`, moved back to the start of a UTF-8 character (never past `from`). */
function sliceEnd(bytes: Uint8Array, from: number, want: number): number {
  let to = Math.min(bytes.length, from + want);
  if (to >= bytes.length) return bytes.length;
  let back = to;
  while (back > from && ((bytes[back] as number) & 0xc0) === 0x80) back--;
  if (back > from) to = back;
  return to;
}

/** The splitter of one file, its parts written to R2 as they fill. */
function partWriter(env: Pick<Env, "MEDIA">, imp: ArchiveImportRow, source: Source, size: number, resume: SplitCursor | null) {
  const perPart = Math.max(source === "outbox" ? PART_ITEMS : PART_URIS, Math.ceil(size / 500 / MAX_PARTS_PER_FILE));
  const splitter = new CollectionItemSplitter({ maxItemChars: 1024 * 1024, maxItems: 1_000_000 });
  if (resume) splitter.restore(resume.state);
  let buffer: string[] = [];
  const w = {
    n: resume?.n ?? 0,
    items: resume?.items ?? 0,
    added: 0,
    splitter,
    async push(text: string) {
      for (const item of splitter.push(text)) {
        buffer.push(item);
        if (buffer.length >= perPart) await w.flush();
      }
    },
    async flush() {
      if (!buffer.length) return;
      // The items' texts, as a JSON array of strings: a round parses the strings (cheap, no objects built) and then only
      // the items it imports.
      await env.MEDIA.put(partKey(imp.id, source, w.n++), JSON.stringify(buffer));
      w.items += buffer.length;
      w.added += buffer.length;
      buffer = [];
    },
    /** Whether the splitter's state is small enough to carry in the cursor. */
    carriable: () => JSON.stringify(splitter.snapshot()).length <= MAX_CARRIED_STATE,
  };
  return w;
}

type PartWriter = ReturnType<typeof partWriter>;
/** `lost`: the checkpoint's window is not in R2 any more; the file cannot go on from where it stopped. */
type SplitStep = { stopped: SplitCursor } | { done: true } | { lost: true };
/** The bytes a round may still read, shared by the files it gets through. */
type Budget = { left: number };

/**
 * A file of the zip, read in rounds (zip-read.ts readEntryRound): a deflated one is inflated here about `budget` bytes
 * at a time, never wholly in one invocation, its checkpoint carried to the next round (the window in R2).
 */
async function splitEntry(
  env: Pick<Env, "MEDIA">,
  imp: ArchiveImportRow,
  si: number,
  e: ZipEntryInfo,
  dataAt: number,
  w: PartWriter,
  resume: SplitCursor | null,
  budget: Budget,
): Promise<SplitStep> {
  const source = SOURCES[si] as Source;
  const src = archiveOf(env, imp);
  let at = entryStart();
  let tail = new Uint8Array(0);
  if (resume?.z) {
    const win = resume.z.bit > 0 && e.method === 8 ? await env.MEDIA.get(windowKey(imp.id, source, resume.z.bit)) : null;
    if (e.method === 8 && resume.z.bit > 0 && !win) return { lost: true };
    at = { made: resume.bytes, crc: resume.z.crc, bit: resume.z.bit, window: win ? new Uint8Array(await win.arrayBuffer()) : new Uint8Array(0) };
    if (resume.z.block) at.block = resume.z.block;
    tail = Uint8Array.from(resume.z.tail);
  }
  const decoder = new TextDecoder();
  for (;;) {
    const round = await readEntryRound(src, e, dataAt, at, Math.max(budget.left, MIN_SLICE));
    const bytes = tail.length ? concatBytes([tail, round.bytes], tail.length + round.bytes.length) : round.bytes;
    const whole = round.next ? wholeCharsEnd(bytes) : bytes.length;
    await w.push(decoder.decode(bytes.subarray(0, whole)));
    tail = bytes.slice(whole);
    budget.left -= round.bytes.length;
    if (!round.next) {
      w.splitter.end();
      return { done: true };
    }
    at = round.next;
    // A long item under way is not carried: the round reads on.
    if (budget.left > 0 || !w.carriable()) continue;
    if (e.method === 8) await env.MEDIA.put(windowKey(imp.id, source, at.bit), at.window);
    await w.flush();
    return {
      stopped: {
        s: si,
        bytes: at.made,
        n: w.n,
        items: w.items,
        state: w.splitter.snapshot(),
        z: { bit: at.bit, crc: at.crc, tail: [...tail], ...(at.block ? { block: at.block } : {}), entry: e, dataAt },
      },
    };
  }
}

/** A plain file read by ranges: an outbox.json uploaded alone, or a collection file an older split inflated whole. */
async function splitPlain(
  env: Pick<Env, "MEDIA">,
  key: string,
  size: number,
  si: number,
  w: PartWriter,
  resume: SplitCursor | null,
  budget: Budget,
): Promise<SplitStep> {
  let read = resume?.bytes ?? 0;
  const stream = await r2Access(env.MEDIA, key, size).stream(read, size - read);
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value: bytes } = await reader.read();
    if (done) break;
    let from = 0;
    while (from < bytes.length) {
      const to = sliceEnd(bytes, from, Math.min(Math.max(budget.left, MIN_SLICE), MAX_SLICE));
      await w.push(decoder.decode(bytes.subarray(from, to), { stream: true }));
      budget.left -= to - from;
      read += to - from;
      from = to;
      if (budget.left > 0 || !charEndsAt(bytes, to)) continue;
      if (!w.carriable()) continue;
      await reader.cancel().catch(() => {});
      await w.flush();
      return { stopped: { s: si, bytes: read, n: w.n, items: w.items, state: w.splitter.snapshot() } };
    }
  }
  const rest = decoder.decode();
  if (rest) await w.push(rest);
  w.splitter.end();
  return { done: true };
}

export async function splitRound(env: Pick<Env, "MEDIA" | "ARCHIVE_SPLIT_BYTES">, imp: ArchiveImportRow): Promise<SplitProgress> {
  const perRound = Number(env.ARCHIVE_SPLIT_BYTES) > 0 ? Number(env.ARCHIVE_SPLIT_BYTES) : SPLIT_BYTES_PER_ROUND;
  const at = splitCursor(imp.cursor);
  const parts: ArchiveParts = { ...imp.parts };
  let total = 0;
  const budget: Budget = { left: perRound };
  const zip = imp.kind === "zip";
  // The zip's directory, read only by a round that starts a file (a round going on in one has its entry in the cursor).
  let dir: Map<string, ZipEntryInfo> | null = null;
  for (let si = at?.s ?? 0; si < SOURCES.length; si++) {
    const source = SOURCES[si] as Source;
    const resume = at && at.s === si ? at : null;
    const carried = resume?.z?.entry && resume.z.dataAt != null ? { e: resume.z.entry, dataAt: resume.z.dataAt } : null;
    if (zip && !carried) dir ??= await directory(archiveOf(env, imp));
    const entry = carried?.e ?? dir?.get(ARCHIVE_FILES[source]) ?? null;
    // The upload itself when it is an outbox.json alone; a zip's file read from the zip, or from the whole copy an older
    // split made of it (its cursor has no `z`).
    const plain = !zip
      ? source === "outbox"
        ? { key: imp.fileKey, size: imp.fileSize }
        : null
      : entry && resume && !resume.z
        ? { key: plainKey(imp.id, source), size: entry.size }
        : null;
    const size = plain?.size ?? entry?.size ?? 0;
    if (size > ARCHIVE_JSON_MAX_BYTES) throw new Error(`${ARCHIVE_FILES[source]} is too large`);
    if (!plain && !entry) {
      parts[source] = { parts: resume?.n ?? 0, items: resume?.items ?? 0 };
      continue;
    }
    let w = partWriter(env, imp, source, size, resume);
    const dataAt = plain ? 0 : (carried?.dataAt ?? (await entryDataAt(archiveOf(env, imp), entry as ZipEntryInfo)));
    let step = plain
      ? await splitPlain(env, plain.key, plain.size, si, w, resume, budget)
      : await splitEntry(env, imp, si, entry as ZipEntryInfo, dataAt, w, resume, budget);
    if ("lost" in step) {
      // The window the file's next round needed is gone from R2: the file is split again from its start. The split
      // makes the same parts whatever its rounds, so they are written again under the same keys, and its items are
      // counted again (taken out of the total first). Retrying would find the window missing every time.
      console.warn(`archive import ${imp.id}: the checkpoint of ${ARCHIVE_FILES[source]} is gone; splitting it again from its start`);
      total -= resume?.items ?? 0;
      w = partWriter(env, imp, source, size, null);
      step = await splitEntry(env, imp, si, entry as ZipEntryInfo, dataAt, w, null, budget);
    }
    await w.flush();
    total += w.added;
    parts[source] = { parts: w.n, items: w.items };
    if ("stopped" in step) return { phase: "split", cursor: JSON.stringify(step.stopped), parts, total };
  }
  return { phase: "statuses", cursor: "0:0", parts, total };
}

/** The objects the split keeps (its parts, an older split's whole copies, the checkpoints' windows), for deletion. */
export async function splitObjectKeys(env: Pick<Env, "MEDIA">, imp: ArchiveImportRow): Promise<string[]> {
  const keys: string[] = [];
  for (const source of SOURCES) {
    for (let n = 0; n < (imp.parts[source]?.parts ?? 0); n++) keys.push(partKey(imp.id, source, n));
    if (imp.kind === "zip") keys.push(plainKey(imp.id, source));
  }
  for (let cursor: string | undefined; ; ) {
    const page = await env.MEDIA.list({ prefix: `archive_imports/${imp.id}/inflate/`, cursor });
    keys.push(...page.objects.map((o) => o.key));
    if (!page.truncated) return keys;
    cursor = page.cursor;
  }
}
