// What one activity's resolution of remote statuses shares (resolve-status.ts does the fetching): its fetch budget,
// the URIs already in progress, its effects collector; and the lookups of statuses already known. Below the modules
// that ingest (remote-statuses.ts, quotes-inbound.ts): they reach resolveStatus through the Resolution they are given,
// so resolving (which ingests) and ingesting (which resolves parents and quotes) do not import each other.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { tombstones } from "../../db/schema/index";
import type { StatusRow } from "../../entities/statuses/status";
import type { Config } from "../../env";
import type { Effects } from "../../effects/collector";
import { statusRowByUri } from "../../db/table-rows";

/** How far up a reply chain unknown parents are fetched. */
export const MAX_REPLY_DEPTH = 5;
/** Remote documents fetched while processing one activity (parents, announced objects, their authors). */
export const FETCH_BUDGET = 8;

/** Shared by everything one activity resolves: the fetch budget, URIs already in progress, the effects collector. */
export interface Resolution {
  db: DB;
  cfg: Config;
  budget: number;
  seen: Set<string>;
  fx: Effects;
  /** resolve-status.ts resolveStatus (set by newResolution): the status at a URI, known or fetched and ingested. */
  resolveStatus: (r: Resolution, uri: string, depth?: number) => Promise<StatusRow | null>;
  /**
   * Statuses found through this resolution arrive late (a fetched thread, a relay's Announce): stored, never fanned
   * out to home feeds (src/federation/remote/backfill.ts).
   */
  late?: boolean;
  /** When set, every object document fetched is kept here by its id (backfill reads `replies` from them). */
  docs?: Map<string, Record<string, unknown>>;
}

export const isLocalUri = (cfg: Config, uri: string) => uri.startsWith(`${cfg.origin}/`);

export async function statusByUri(db: DB, uri: string): Promise<StatusRow | null> {
  const [row] = await statusRowByUri(db, uri);
  return row ?? null;
}

export async function isTombstoned(db: DB, uri: string): Promise<boolean> {
  const [row] = await db.select({ uri: tombstones.uri }).from(tombstones).where(eq(tombstones.uri, uri)).limit(1);
  return !!row;
}
