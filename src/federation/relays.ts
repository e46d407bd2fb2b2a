// The relay protocol as Mastodon speaks it (app/models/relay.rb, ActivityPub::Activity::Accept/Reject/Announce): the
// instance actor sends a Follow of as:Public to the relay's inbox; the relay's Accept (or Reject) answers that
// Follow's id; while accepted, local public statuses are delivered to the relay too (Create, Update, Delete) and
// the relay's Announces of other servers' public posts are taken as the original status: resolved and stored (late:
// not fanned out to home feeds), never as a boost by the relay. Admin actions are src/services/admin/relays.ts.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { relays } from "../db/schema";
import type { FederateAction } from "../effects/types";
import type { Config } from "../env";
import { followActivity, undoActivity } from "./activities";
import { drop, type InboxContext } from "./handlers/context";
import { instanceActorAccount } from "./instance-actor";
import { sameHost } from "./normalize";
import { type Run, send } from "./outbound-send";
import { isLocalUri } from "./resolution";
import { resolveStatus } from "./resolve-status";

export const AS_PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const FOLLOW_PATH = "/relay-follows/";

/** A new id for the instance actor's Follow of a relay (recognisable, so only Accepts of these look at relays). */
export const relayFollowUri = (origin: string) => `${origin}${FOLLOW_PATH}${crypto.randomUUID()}`;

export const isRelayFollowUri = (cfg: Config, uri: string | null): uri is string =>
  !!uri && isLocalUri(cfg, uri) && uri.startsWith(`${cfg.origin}${FOLLOW_PATH}`);

/** Inboxes of the relays that accepted us: every local public status goes there too. */
export async function relayInboxes(db: DB): Promise<string[]> {
  const rows = await relayInboxesStatement(db);
  return rows.map((r) => r.inbox);
}

/** relayInboxes as a statement to put in a batch. */
export const relayInboxesStatement = (db: DB) => db.select({ inbox: relays.inboxUrl }).from(relays).where(eq(relays.state, "accepted"));

const relayFollow = (id: string, actorUri: string) => followActivity(id, actorUri, AS_PUBLIC);

/** JOBS `federate` relay_follow / relay_undo: signed by the instance actor, to the relay's inbox. */
export async function runRelayFederate(r: Run, a: Extract<FederateAction, { kind: "relay_follow" | "relay_undo" }>): Promise<void> {
  const actor = await instanceActorAccount(r.db, r.cfg);
  if (a.kind === "relay_undo") {
    await send(r, actor.id, undoActivity(actor.uri, relayFollow(a.followUri, actor.uri)), [a.inboxUrl]);
    return;
  }
  const [relay] = await r.db.select().from(relays).where(eq(relays.id, a.relayId)).limit(1);
  // Disabled, removed or re-enabled (a newer Follow) since: this one is not sent.
  if (relay?.state !== "pending" || relay.followActivityId !== a.followUri) return;
  await send(r, actor.id, relayFollow(a.followUri, actor.uri), [relay.inboxUrl]);
}

/** Accept or Reject of our Follow of a relay: the pending relay with that Follow id, answered from the relay's host. */
export async function handleRelayAnswer(ctx: InboxContext, accepted: boolean): Promise<void> {
  const { db, signer, activity } = ctx;
  const followId = activity.objectId;
  if (!followId) return drop("relay answer without object");
  const [relay] = await db
    .select()
    .from(relays)
    .where(and(eq(relays.followActivityId, followId), eq(relays.state, "pending")))
    .limit(1);
  if (!relay) return drop("answer to an unknown relay follow");
  if (!sameHost(signer.uri, relay.inboxUrl)) return drop("relay answer from another host");
  await db
    .update(relays)
    .set({ state: accepted ? "accepted" : "rejected", actorUri: signer.uri, updatedAt: Date.now() })
    .where(and(eq(relays.id, relay.id), eq(relays.followActivityId, followId)));
}

/**
 * Whether the signer of an Announce is a relay we follow (accepted): its actor, or an account whose inbox is the
 * relay's (Mastodon finds the relay by the account's inbox). People are never relays, so their Announces cost no
 * lookup here.
 */
export async function isRelaySigner(ctx: InboxContext): Promise<boolean> {
  const { db, signer } = ctx;
  if (!signer.domain || signer.actorType === "Person") return false;
  const inboxes = JSON.stringify([signer.inboxUrl, signer.sharedInboxUrl].filter(Boolean));
  const [row] = await db
    .select({ id: relays.id })
    .from(relays)
    .where(and(eq(relays.state, "accepted"), sql`(${relays.actorUri} = ${signer.uri} OR ${relays.inboxUrl} IN (SELECT value FROM json_each(${inboxes})))`))
    .limit(1);
  return !!row;
}

/**
 * A relay's Announce: the original status, resolved from its own server (an embedded copy is not the relay's to
 * vouch for) and stored as a late status; no boost row, no notification, no home feed.
 */
export async function handleRelayAnnounce(ctx: InboxContext): Promise<void> {
  const uri = ctx.activity.objectId;
  if (!uri) return drop("relay announce without object");
  ctx.r.late = true;
  const status = await resolveStatus(ctx.r, uri);
  if (!status) return drop("relayed object unavailable");
}
