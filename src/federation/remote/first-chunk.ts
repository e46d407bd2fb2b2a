// The first fan-out chunk of a status from another server, written in the batch that stores the status (an incoming
// Create's note, an incoming Announce's boost) rather than by a `fanout` effect after it: the local followers' feeds
// get it in the same D1 round trip, and the publish that follows reads what it renders at the end of that batch too
// when its effects run in this invocation (publishReadAhead). The rest of a large fan-out follows as effects.
import type { AheadRead, DB, Statement } from "../../db/client";
import type { Effects } from "../../effects/collector";
import type { Effect } from "../../effects/types";
import type { Config } from "../../env";
import { type AheadParts, carryPublishAhead, publishReadAhead } from "../../streaming/read-ahead";
import { fanOutChunk } from "../../timelines/fanout";

export interface FirstChunk {
  /** The chunk's statements, to follow the status's own in its batch. */
  stmts: Statement[];
  /** The publish's reads, to end the batch with (withFinish places them when the effects run here next); null: none. */
  ahead: AheadRead | null;
  /**
   * Once the batch committed, with the batch's results and where the chunk's statements start in it: records what the
   * chunk reached (`fanned_out`, its publish's reads carried along), or, when its bell notifications (batches of their
   * own) failed, the chunk again as a `fanout` effect, which the queue retries (its inserts are idempotent).
   */
  record(fx: Effects, results: readonly unknown[], from: number): Promise<void>;
}

/**
 * The first chunk for `statusId` (null for an id that is not one). `related`: the statuses it boosts or quotes, when
 * the caller knows them all (the publish's rendering then skips finding them).
 */
export function firstChunk(db: DB, cfg: Config, statusId: string, related?: readonly string[]): FirstChunk | null {
  const chunk = fanOutChunk(db, statusId, undefined);
  if (!chunk) return null;
  const got: { parts?: AheadParts } = {};
  return {
    stmts: chunk.stmts,
    ahead: publishReadAhead(db, cfg, statusId, (a) => (got.parts = a), related),
    async record(fx, results, from) {
      try {
        const fanned: Effect = { type: "fanned_out", statusId, delivered: await chunk.read(fx, results.slice(from, from + chunk.stmts.length)) };
        if (got.parts) carryPublishAhead(fx, fanned, got.parts);
        fx.add(fanned);
      } catch (e) {
        console.error("fan-out with the status: notifications failed", e instanceof Error ? e.message : e);
        fx.add({ type: "fanout", statusId });
      }
    },
  };
}
