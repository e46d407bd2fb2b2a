// How effects travel in JOBS messages: packed, an action's effects in one message (one queue operation) when they fit.
import type { Effect, JobMessage } from "./types";

/** Queue messages are at most 128 KB; effects are ids, so this is a generous bound on one pack. */
const MAX_PACK_BYTES = 96 * 1024;

/** Splits effects into packs of at most MAX_PACK_BYTES, in order. */
export function packGroups(effects: readonly Effect[]): Effect[][] {
  const out: Effect[][] = [];
  let pack: Effect[] = [];
  let bytes = 0;
  for (const e of effects) {
    const size = JSON.stringify(e).length + 1;
    if (pack.length && bytes + size > MAX_PACK_BYTES) {
      out.push(pack);
      pack = [];
      bytes = 0;
    }
    pack.push(e);
    bytes += size;
  }
  if (pack.length) out.push(pack);
  return out;
}

/** One message for a pack: the effect alone when nothing else travels with it. */
export function packMessage(list: Effect[], origin = "", attempt = 0, journal: string[] = []): JobMessage {
  return list.length === 1 && !origin && !attempt && !journal.length
    ? (list[0] as Effect)
    : { type: "effects", ...(origin ? { origin } : {}), ...(attempt ? { attempt } : {}), ...(journal.length ? { journal } : {}), effects: list };
}
