// The inbox side of the relay protocol (src/federation/outbound/relays.ts has the Follow we send): the relay's Accept or
// Reject of that Follow, and its Announces of other servers' public posts, taken as the original status.
import { and, eq, sql } from "drizzle-orm";
import { relays } from "../../../db/schema/index";
import { sameHost } from "../../remote/normalize";
import { resolveStatus } from "../../remote/resolve-status";
import { drop, type InboxContext } from "./context";

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
