// The collector a service records its effects on. Whoever called the service (a route's middleware, the inbox
// processor, a job, the cron) sends what was recorded once the service has returned (./send.ts), so every caller
// of a service gets the same effects.
//
// Rule: a service records an effect only after the write it follows from has committed. The one exception is
// `notify`, recorded with the notification's statement: its row may be skipped by the statement's own conditions,
// and the consumer then finds nothing and does nothing.
import type { Effect, FederateAction } from "./types";

export class Effects {
  readonly list: Effect[] = [];

  /** `origin`: this server's scheme://host, which federate effects carry to build activity ids later. */
  constructor(readonly origin: string) {}

  add(...effects: Effect[]): void {
    this.list.push(...effects);
  }

  federate(action: FederateAction): void {
    this.list.push({ type: "federate", origin: this.origin, action });
  }

  /** Takes everything recorded so far (the collector is empty afterwards). */
  drain(): Effect[] {
    return this.list.splice(0, this.list.length);
  }
}

/** A new activity id on this server (Mastodon uses `${origin}/${uuid}` for Follow, Block and Flag ids). */
export const newActivityUri = (origin: string) => `${origin}/${crypto.randomUUID()}`;
