// The relay protocol as Mastodon speaks it (app/models/relay.rb, ActivityPub::Activity::Accept/Reject/Announce): the
// instance actor sends a Follow of as:Public to the relay's inbox; the relay's Accept (or Reject) answers that
// Follow's id; while accepted, local public statuses are delivered to the relay too (Create, Update, Delete) and
// the relay's Announces of other servers' public posts are taken as the original status: resolved and stored (late:
// not fanned out to home feeds), never as a boost by the relay (the inbox side: src/federation/inbox/handlers/relay.ts).
// Admin actions are src/services/admin/relays.ts.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { relays } from "../../db/schema/index";
import type { FederateAction } from "../../effects/types";
import type { Config } from "../../env";
import { followActivity, undoActivity } from "./activities";
import { instanceActorAccount } from "./instance-actor";
import { type Run, send } from "./outbound-send";
import { isLocalUri } from "../remote/resolution";

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
