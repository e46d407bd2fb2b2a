// The collector a service records its effects on. Whoever called the service (a route's middleware, the inbox
// processor, a job, the cron) sends what was recorded once the service has returned (./send.ts), so every caller
// of a service gets the same effects.
//
// Rule: a service records an effect only after the write it follows from has committed. The one exception is
// `notify`, recorded with the notification's statement: its row may be skipped by the statement's own conditions,
// and the consumer then finds nothing and does nothing.
import type { Env } from "../env";
import type { Effect, FederateAction } from "./types";

/**
 * Whether effects recorded with afterResponse run in the invocation that recorded them (production), or go to the
 * JOBS queue (EFFECTS_AFTER_RESPONSE=queue: the integration tests, which run the consumer when they choose).
 */
export const runsAfterResponseHere = (env: Pick<Env, "EFFECTS_AFTER_RESPONSE">): boolean => env.EFFECTS_AFTER_RESPONSE !== "queue";

export class Effects {
  readonly list: Effect[] = [];
  /** Effects to run some seconds from now (a retry's wait, a poll update gathering votes): see later(). */
  readonly delayed: { seconds: number; effects: Effect[] }[] = [];
  /** Effects to run in this invocation once the response is out: see afterResponse(). */
  readonly here: Effect[] = [];

  /** `origin`: this server's scheme://host, which federate effects carry to build activity ids later. */
  constructor(readonly origin: string) {}

  add(...effects: Effect[]): void {
    this.list.push(...effects);
  }

  federate(action: FederateAction): void {
    this.list.push({ type: "federate", origin: this.origin, action });
  }

  /** Records effects that must wait `seconds` before they run (sent with that delay by ./send.ts). */
  later(seconds: number, ...effects: Effect[]): void {
    if (effects.length) this.delayed.push({ seconds, effects });
  }

  /**
   * Records effects a request runs itself once its response is out (src/background/effects-runner.ts runAfterResponse), with the
   * queue standing by for what fails or is left: an incoming activity, so that it costs no queue message.
   */
  afterResponse(...effects: Effect[]): void {
    this.here.push(...effects);
  }

  /** Takes the effects recorded to run after the response. */
  drainHere(): Effect[] {
    return this.here.splice(0, this.here.length);
  }

  /** Takes everything recorded so far to run at once (the collector's list is empty afterwards). */
  drain(): Effect[] {
    return this.list.splice(0, this.list.length);
  }

  /** Takes the delayed groups recorded so far. */
  drainLater(): { seconds: number; effects: Effect[] }[] {
    return this.delayed.splice(0, this.delayed.length);
  }
}

/** A new activity id on this server (Mastodon uses `${origin}/${uuid}` for Follow, Block and Flag ids). */
export const newActivityUri = (origin: string) => `${origin}/${crypto.randomUUID()}`;
