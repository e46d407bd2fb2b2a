// Who listens to the streams, as this isolate last heard it from the router (a hint the router checks on every
// publish), and the one way events are published from it (publishPlanned): plan from the listeners heard of, and plan
// again when the router says they changed. The reads made ahead for a publish (./read-ahead.ts) are made for these
// same listeners.
import type { Env } from "../env";
import type { Listening, Routed } from "./protocol";
import { routerStub } from "./router";

/** Who listens, as a plan reads it: connected accounts, shared keys with subscribers, whether anyone is connected. */
export interface Listeners {
  online: ReadonlySet<string>;
  shared: readonly string[];
  connected: boolean;
}

/** What this isolate last heard from the router of who listens: a hint, checked by the router on every publish. */
let heard: Heard | null = null;
interface Heard {
  version: string;
  listeners: Listeners;
}
const toHeard = (l: Listening): Heard => ({ version: l.version, listeners: { online: new Set(l.online), shared: l.shared, connected: l.connected } });
// A connection without a subscription yet counts: a status for a shared stream it may be subscribing to right now
// goes to the router (`recheck`), which hands it over if the subscription arrives late (router.ts).
const listens = (h: Heard) => h.listeners.online.size > 0 || h.listeners.shared.length > 0 || h.listeners.connected;

/**
 * Plans events from who listens and has the router publish them, in ONE call when this isolate last heard that
 * someone listens: the router publishes only if its listeners are still the ones planned for, else answers with the
 * current ones and the plan runs again (reading and rendering again: it only happens when someone connected,
 * disconnected or changed subscriptions since). Having heard of nobody, or of nothing yet: one call to ask, then
 * none when nobody listens or the plan has no events, one more otherwise.
 */
export async function publishPlanned(env: Env, plan: (l: Listeners) => Promise<Routed[]> | Routed[]): Promise<void> {
  const router = routerStub(env);
  let h = heard;
  let asked = false;
  if (!h || !listens(h)) {
    h = heard = toHeard(await router.routerListening());
    asked = true;
  }
  for (let round = 0; ; round++) {
    if (asked && !listens(h)) return;
    const events = await plan(h.listeners);
    if (asked && !events.length) return;
    // Listeners changing under three plans in a row: the last plan's events go out as they are.
    if (round === 3) return router.routerPublish(events);
    const now = await router.routerPublishIfCurrent(h.version, events);
    if (!now) return;
    h = heard = toHeard(now);
    asked = true;
  }
}

/** Online accounts up to which a status's facts are read ahead for all of them (its recipients are not known yet). */
const AHEAD_ONLINE = 10;

/**
 * The listeners reads made ahead are for: those this isolate last heard of, or null when it heard of nobody listening
 * (a publish asks the router first, and may do nothing) or of more than AHEAD_ONLINE accounts online.
 */
export function aheadListeners(): Listeners | null {
  const h = heard;
  return h && listens(h) && h.listeners.online.size <= AHEAD_ONLINE ? h.listeners : null;
}
