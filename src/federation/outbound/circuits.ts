// Per-host circuits (delivery_circuits), shared by ActivityPub deliveries (src/federation/outbound/delivery.ts, keyed by the
// inbox's host) and Web Push (src/push/deliver.ts, keyed `push:host`, which no inbox host can be): after
// CIRCUIT_THRESHOLD failures in a row, the host gets no request for CIRCUIT_COOL_OFF_MS.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { deliveryCircuits } from "../../db/schema/index";

export const CIRCUIT_THRESHOLD = 10;
export const CIRCUIT_COOL_OFF_MS = 60_000;

/** One statement, so concurrent failures of the same host in a batch all count. */
export function countCircuitFailure(db: DB, host: string) {
  const c = deliveryCircuits.consecutiveFailures;
  return db
    .insert(deliveryCircuits)
    .values({ host, consecutiveFailures: 1 })
    .onConflictDoUpdate({
      target: deliveryCircuits.host,
      set: {
        consecutiveFailures: sql`${c} + 1`,
        openUntil: sql`CASE WHEN ${c} + 1 >= ${CIRCUIT_THRESHOLD} THEN ${Date.now() + CIRCUIT_COOL_OFF_MS} ELSE ${deliveryCircuits.openUntil} END`,
      },
    });
}
