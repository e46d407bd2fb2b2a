// IDs are 64-bit integers carried as decimal strings everywhere (JSON, SQL params, code).
// D1 returns INTEGER columns as JS doubles (exact only to 2^53) and a snowflake is ~2^57, so ids are stored as
// TEXT zero-padded to 20 digits: lexical order == numeric order, and nothing ever passes through a double.
// The Drizzle column type in db/schema/types.ts pads on the way in and strips on the way out.

const ID_WIDTH = 20;
const MAX_ID = 9223372036854775807n; // int64 max, like Mastodon's bigint columns

/** A decimal id string (no sign, no leading junk) within int64, or null. */
export function parseId(value: unknown): string | null {
  if (typeof value !== "string" && typeof value !== "number") return null;
  const s = String(value);
  if (!/^\d{1,19}$/.test(s)) return null;
  const n = BigInt(s);
  if (n > MAX_ID) return null;
  return n.toString();
}

export function padId(id: string): string {
  return id.padStart(ID_WIDTH, "0");
}

export function unpadId(stored: string): string {
  const s = stored.replace(/^0+/, "");
  return s === "" ? "0" : s;
}

/** Each recent millisecond's last sequence (insertion order = recency), at most SEQ_MS of them. */
const seqByMs = new Map<number, number>();
const SEQ_MS = 256;

/**
 * Mastodon snowflake: milliseconds since the Unix epoch in the top 48 bits, a per-millisecond sequence in the low 16.
 * Workers freeze Date.now() within a request, so the sequence also separates ids made in one request; it starts at
 * a random point per millisecond so that two isolates rarely pick the same value. Each millisecond keeps its own
 * sequence (the last SEQ_MS of them): a caller alternating ids of now with ids of other times (an archive import's
 * statuses at their dates beside rows of now) goes on with each time's sequence, where one sequence for the last
 * millisecond only started now's again at a random point each time, and two of those could meet.
 */
export function snowflake(at: number | Date = Date.now()): string {
  const ms = Math.max(0, Math.floor(typeof at === "number" ? at : at.getTime()));
  const last = seqByMs.get(ms);
  const seq = last === undefined ? (crypto.getRandomValues(new Uint16Array(1))[0] ?? 0) & 0xfff0 : (last + 1) & 0xffff;
  seqByMs.delete(ms);
  seqByMs.set(ms, seq);
  if (seqByMs.size > SEQ_MS) seqByMs.delete(seqByMs.keys().next().value as number);
  return ((BigInt(ms) << 16n) | BigInt(seq)).toString();
}

/** The smallest id at a point in time: for time-based cursors. */
export function snowflakeFloor(ms: number): string {
  return (BigInt(Math.max(0, Math.floor(ms))) << 16n).toString();
}

export function snowflakeTime(id: string): Date {
  return new Date(Number(BigInt(id) >> 16n));
}
