// Enqueues the outbound side of a local action (JOBS "federate"), after the action's write succeeded. The job
// builds and delivers the activity later (src/federation/outbound.ts), so the request never waits on other servers.
import type { Ctx } from "../context";
import type { Env } from "../env";
import type { FederateAction, JobMessage } from "../services/jobs";

/** Handed to services that know, after their write, whether and what to federate. */
export interface Federator {
  origin: string;
  send(action: FederateAction): Promise<void>;
}

type Target = Ctx | Env | Queue<JobMessage>;

function queueOf(t: Target): Queue<JobMessage> {
  if ("send" in t && "sendBatch" in t) return t as Queue<JobMessage>;
  if ("JOBS" in t) return (t as Env).JOBS;
  return (t as Ctx).env.JOBS;
}

export const federateJob = (origin: string, action: FederateAction): JobMessage => ({ type: "federate", origin, action });

export async function federate(t: Target, origin: string, action: FederateAction): Promise<void> {
  await queueOf(t).send(federateJob(origin, action));
}

/** The request's federator: its origin and the JOBS queue. */
export function federator(c: Ctx): Federator {
  const origin = c.get("config").origin;
  return { origin, send: (action) => federate(c, origin, action) };
}

/** A new activity id on this server (Mastodon uses `${origin}/${uuid}` for Follow, Block and Flag ids). */
export const newActivityUri = (origin: string) => `${origin}/${crypto.randomUUID()}`;
