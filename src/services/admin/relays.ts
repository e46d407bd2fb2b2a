// Relays, the admin side (Mastodon's Admin::RelaysController and Relay#enable!/#disable!): adding a relay stores it
// pending and sends the instance actor's Follow of as:Public to its inbox; enabling again sends a new Follow;
// disabling or removing an enabled relay sends Undo{Follow}. Each change and its admin_action_logs row are one batch;
// the activities leave as `federate` effects (src/federation/outbound/relays.ts builds and delivers them).
import { asc, eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type RelayState, relays } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { Config } from "../../env";
import { notFound, validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import { baseFetchOptions } from "../../federation/remote/fetch-options";
import { relayFollowUri } from "../../federation/outbound/relays";
import { checkUrl, FetchRefused } from "../../net/safe-fetch";
import { adminLogStatement, type Staff } from "./log";
import type { RelayRow } from "../../db/schema";

export const MAX_RELAYS = 100;

const logStatement = (db: DB, staff: Staff, action: "create" | "enable" | "disable" | "destroy", relayId: string, now: number) =>
  adminLogStatement(db, staff, action, "Relay", relayId, now);

/** Pending or accepted: a Follow is out (Mastodon's enabled relays are the accepted ones; a pending one awaits). */
const followed = (state: RelayState) => state === "pending" || state === "accepted";

export async function listRelays(db: DB): Promise<RelayRow[]> {
  return db.select().from(relays).orderBy(asc(relays.id)).limit(MAX_RELAYS);
}

export async function getRelay(db: DB, id: string): Promise<RelayRow> {
  const [row] = await db.select().from(relays).where(eq(relays.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

/** The inbox URL as the fetch guard would take it (http(s), no private address, not this server). */
function inboxUrlOf(cfg: Config, raw: string | undefined): string {
  const value = raw?.trim();
  if (!value) throw validationFailed("Inbox url can't be blank");
  try {
    const u = checkUrl(value, baseFetchOptions(cfg));
    if (u.protocol !== "https:" && !(cfg.allowLoopbackFetch && u.protocol === "http:")) throw new FetchRefused("scheme");
    return u.toString();
  } catch (e) {
    if (e instanceof FetchRefused) throw validationFailed("Inbox url is invalid");
    throw e;
  }
}

export async function addRelay(db: DB, fx: Effects, cfg: Config, staff: Staff, rawInboxUrl: string | undefined): Promise<RelayRow> {
  const inboxUrl = inboxUrlOf(cfg, rawInboxUrl);
  const [taken] = await db.select({ id: relays.id }).from(relays).where(eq(relays.inboxUrl, inboxUrl)).limit(1);
  if (taken) throw validationFailed("Inbox url has already been taken");
  const now = Date.now();
  const row: RelayRow = {
    id: snowflake(now),
    inboxUrl,
    state: "pending",
    followActivityId: relayFollowUri(cfg.origin),
    actorUri: null,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await commit(db, fx, [db.insert(relays).values(row), logStatement(db, staff, "create", row.id, now)], (fx) =>
      fx.federate({ kind: "relay_follow", relayId: row.id, followUri: row.followActivityId as string }),
    );
  } catch (e) {
    if (String(e).includes("UNIQUE")) throw validationFailed("Inbox url has already been taken");
    throw e;
  }
  return row;
}

/** A new Follow (a relay that rejected us, or was disabled, is asked again). */
export async function enableRelay(db: DB, fx: Effects, cfg: Config, staff: Staff, id: string): Promise<RelayRow> {
  const relay = await getRelay(db, id);
  const now = Date.now();
  const next: RelayRow = { ...relay, state: "pending", followActivityId: relayFollowUri(cfg.origin), updatedAt: now };
  await commit(
    db,
    fx,
    [
      db.update(relays).set({ state: next.state, followActivityId: next.followActivityId, updatedAt: now }).where(eq(relays.id, id)),
      logStatement(db, staff, "enable", id, now),
    ],
    (fx) => {
      if (relay.followActivityId && followed(relay.state)) fx.federate({ kind: "relay_undo", inboxUrl: relay.inboxUrl, followUri: relay.followActivityId });
      fx.federate({ kind: "relay_follow", relayId: id, followUri: next.followActivityId as string });
    },
  );
  return next;
}

export async function disableRelay(db: DB, fx: Effects, staff: Staff, id: string): Promise<RelayRow> {
  const relay = await getRelay(db, id);
  const now = Date.now();
  await commit(
    db,
    fx,
    [db.update(relays).set({ state: "idle", followActivityId: null, updatedAt: now }).where(eq(relays.id, id)), logStatement(db, staff, "disable", id, now)],
    (fx) => {
      if (relay.followActivityId && followed(relay.state)) fx.federate({ kind: "relay_undo", inboxUrl: relay.inboxUrl, followUri: relay.followActivityId });
    },
  );
  return { ...relay, state: "idle", followActivityId: null, updatedAt: now };
}

export async function removeRelay(db: DB, fx: Effects, staff: Staff, id: string): Promise<void> {
  const relay = await getRelay(db, id);
  const now = Date.now();
  await commit(db, fx, [logStatement(db, staff, "destroy", id, now), db.delete(relays).where(eq(relays.id, id))], (fx) => {
    if (relay.followActivityId && followed(relay.state)) fx.federate({ kind: "relay_undo", inboxUrl: relay.inboxUrl, followUri: relay.followActivityId });
  });
}
