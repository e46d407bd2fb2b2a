// Reads made ahead for a publish (./publish.ts), at the end of the write batch that stores what it publishes: a new
// status's renderings and online viewers' facts (publishReadAhead, for its first fan-out chunk), an edit's feeds with
// the same (publishUpdateReadAhead). They travel in memory on the effect that publishes (carried, never queued), and
// serve only a plan for the very listeners they were read for (./listeners.ts).
import { sql } from "drizzle-orm";
import type { AheadRead, DB } from "../db/client";
import { carriedKind, type Effects } from "../effects/collector";
import type { Effect } from "../effects/types";
import type { Config } from "../env";
import { padId } from "../lib/text/ids";
import { aheadListeners, type Listeners } from "./listeners";
import { type StatusParts, statusPartsRead } from "./status-parts";

/** A status's parts read ahead for the listeners this isolate had heard of then, and the accounts it read facts for. */
export interface AheadParts {
  statusId: string;
  listeners: Listeners;
  accounts: ReadonlySet<string>;
  /** Null when making them failed (the publish reads them again). */
  parts: Promise<StatusParts | null>;
}

const PUBLISH_AHEAD = carriedKind<AheadParts>("publish reads");

/**
 * What publishStatuses will read for `statusId`'s first fan-out chunk, to end the write batch that stores the status
 * and writes that chunk (the reads see its rows; src/federation/inbox/handlers/context.ts withFinish), saving the
 * publish its round trip: the renderings for the shared keys listened to, and the facts of every account this isolate
 * last heard was online (which of them the chunk reaches is known once it committed). `use` gets them once the batch
 * committed; the caller carries them on the fanned_out effect (carryPublishAhead). Null when this isolate heard of
 * nobody listening (a publish asks the router first, and may do nothing), or of more than AHEAD_ONLINE accounts online.
 * The publish uses them only if its plan runs with those same listeners, else it reads as usual. `related`: every
 * status it boosts or quotes, when the caller knows them (statusPartsRead).
 */
export function publishReadAhead(db: DB, cfg: Config, statusId: string, use: (a: AheadParts) => void, related?: readonly string[]): AheadRead | null {
  const listeners = aheadListeners();
  if (!listeners) return null;
  const accounts = [...listeners.online];
  const read = statusPartsRead(db, [{ statusId, cfg, shared: true, accounts }], listeners.shared, related);
  if (!read) return null;
  return {
    stmts: read.stmts,
    keep: (res) => {
      const parts = read.parts(res).catch(failedAhead);
      use({ statusId, listeners, accounts: new Set(accounts), parts });
    },
  };
}

/** Carries `ahead` on the fanned_out effect that will publish its status (in memory, never in a queue message). */
export const carryPublishAhead = (fx: Effects, effect: Effect, ahead: AheadParts): void => fx.carry(effect, PUBLISH_AHEAD, ahead);

/** What a fanned_out effect carries for its publish (taken once). */
export const takePublishAhead = (fx: Effects, effect: Effect): AheadParts | undefined => fx.take(effect, PUBLISH_AHEAD);

/**
 * The parts read ahead for `items`, when each has them, read for these listeners (`l`, the very object) and for every
 * account each now goes to; else null, and the plan reads them.
 */
export async function aheadParts(
  items: readonly { statusId: string; ahead?: AheadParts }[],
  l: Listeners,
  accountsPer: { id: string }[][],
): Promise<StatusParts | null> {
  const usable = items.every((item, i) => {
    const a = item.ahead;
    return a && a.listeners === l && a.statusId === item.statusId && (accountsPer[i] ?? []).every((x) => a.accounts.has(x.id));
  });
  if (!usable) return null;
  const out: StatusParts = { shared: new Map(), account: new Map(), facts: new Map() };
  for (const item of items) {
    const p = await item.ahead?.parts;
    if (!p) return null;
    for (const [k, v] of p.shared) out.shared.set(k, v);
    for (const [k, v] of p.account) out.account.set(k, v);
    for (const [k, v] of p.facts) out.facts.set(k, v);
  }
  return out;
}

export type FeedsOf = [{ account_id: string }[], { list_id: string; account_id: string }[]];

/** The home and list feeds holding a status (with the lists' owners): who hears of its edit. */
export const feedsOfStatements = (db: DB, statusId: string) => {
  const S = padId(statusId);
  return [
    db.all<{ account_id: string }>(sql`SELECT account_id FROM home_feed WHERE status_id = ${S}`),
    db.all<{ list_id: string; account_id: string }>(
      sql`SELECT lf.list_id AS list_id, l.account_id AS account_id FROM list_feed lf JOIN lists l ON l.id = lf.list_id WHERE lf.status_id = ${S}`,
    ),
  ];
};

/** What publishStatusUpdate reads, read at the end of the edit's write batch (publishUpdateReadAhead). */
export interface AheadUpdate {
  listeners: Listeners;
  /** The feeds holding the status (empty when nobody was online). */
  feeds: readonly unknown[];
  parts: Promise<StatusParts | null>;
}

const UPDATE_AHEAD = carriedKind<AheadUpdate>("status update reads");

/**
 * publishReadAhead for an edit (publishStatusUpdate): the feeds holding the status, its renderings and every online
 * account's facts, to end the batch that writes the edit; the caller carries them on its status_updated effect
 * (carryUpdateAhead). Used only by a plan for the very listeners they were read for.
 */
export function publishUpdateReadAhead(db: DB, cfg: Config, statusId: string, use: (a: AheadUpdate) => void): AheadRead | null {
  const listeners = aheadListeners();
  if (!listeners) return null;
  const feeds = listeners.online.size ? feedsOfStatements(db, statusId) : [];
  const read = statusPartsRead(db, [{ statusId, cfg, shared: true, accounts: [...listeners.online] }], listeners.shared);
  const own = read?.stmts ?? [];
  if (!feeds.length && !own.length) return null;
  return {
    stmts: [...feeds, ...own],
    keep: (res) => {
      const parts = read ? read.parts(res.slice(feeds.length)).catch(failedAhead) : Promise.resolve(null);
      use({ listeners, feeds: feeds.length ? res.slice(0, feeds.length) : [[], []], parts });
    },
  };
}

/** Carries `ahead` on the status_updated effect that publishes the edit (in memory only). */
export const carryUpdateAhead = (fx: Effects, effect: Effect, ahead: AheadUpdate): void => fx.carry(effect, UPDATE_AHEAD, ahead);

/** What a status_updated effect carries for its publish (taken once). */
export const takeUpdateAhead = (fx: Effects, effect: Effect): AheadUpdate | undefined => fx.take(effect, UPDATE_AHEAD);

const failedAhead = (e: unknown): null => {
  console.error("streaming: rendering read ahead failed", e instanceof Error ? e.message : e);
  return null;
};
