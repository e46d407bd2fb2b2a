// The collector effects are recorded on: the one way to record an effect. Whoever calls a service (a route's
// middleware, the inbox processor, a job, the cron) hands it a collector and sends what was recorded once the service
// has returned (./send.ts), so every caller of a service gets the same effects.
//
// Rule: an effect is recorded explicitly, with this collector's methods, by the code that ran the batch holding the
// rows it follows from, once that batch has committed. Building a statement records nothing: a statement builder
// that causes an effect returns it with the statement (a notification's `notify`: notificationWrite), and its caller
// records it with the batch's other effects. A write that fails therefore records nothing. `commit` (./commit.ts) runs
// a batch with the effects that follow from it, written into the batch on a request's collector.
//
// When: `add` (and `federate`, an outbound activity) as soon as the queue takes them; `later` after a delay;
// `afterResponse` in this invocation once the response is out. What an effect run here may carry in memory (reads
// made ahead for it, a verified inbox item) travels with it on the collector (`carry`), never in the queue message.
import type { Env } from "../env";
import type { Effect, FederateAction } from "./types";

/**
 * Whether effects recorded with afterResponse run in the invocation that recorded them (production), or go to the
 * JOBS queue (EFFECTS_AFTER_RESPONSE=queue: the integration tests, which run the consumer when they choose).
 */
export const runsAfterResponseHere = (env: Pick<Env, "EFFECTS_AFTER_RESPONSE">): boolean => env.EFFECTS_AFTER_RESPONSE !== "queue";

/**
 * A kind of data an effect may carry in memory to its run in this invocation (Effects.carry), e.g. the reads a write
 * batch made ahead for its notifications. Made once per kind, by the module that reads it.
 */
export interface Carried<T> {
  readonly name: string;
  /** Only types the value; never set. */
  readonly _value?: T;
}

export const carriedKind = <T>(name: string): Carried<T> => ({ name });

export class Effects {
  private readonly now: Effect[] = [];
  private readonly delayed: { seconds: number; effects: Effect[] }[] = [];
  private readonly here: Effect[] = [];
  /**
   * In-memory companions of recorded effects, by effect object, made on first use (most collectors carry nothing). A
   * plain Map, not a WeakMap (docs/architecture.md, "No module-level WeakMap keyed by a request"): it lives as long as
   * the collector, one request or job, and entries leave when taken.
   */
  private companions: Map<Effect, Map<Carried<unknown>, unknown>> | null = null;

  /**
   * The journal row (./commit.ts) each recorded effect is kept in, by effect object: the consumer that runs the
   * message deletes those rows (src/background/effects-runner.ts runJob), and the every-minute cron sends again
   * what no consumer ran (./pending.ts).
   */
  private journalOf: Map<Effect, string> | null = null;

  /**
   * `origin`: this server's scheme://host, which federate effects carry to build activity ids later. `journals`: whether
   * a commit (./commit.ts) writes the effects it records into its own batch, so they outlive an invocation that dies
   * before sending them: a request's collector (its write is nowhere else to find again); the inbox, the jobs and the
   * cron have their own durable road (a stored item, the queue's retry, a claim that expires).
   */
  constructor(
    readonly origin: string,
    readonly journals = false,
  ) {}

  /** Notes that `effects` are kept in the journal row `id` (./commit.ts). */
  journaled(id: string, effects: readonly Effect[]): void {
    this.journalOf ??= new Map();
    for (const e of effects) this.journalOf.set(e, id);
  }

  /** The journal rows that keep `effects`, each once. */
  journalIds(effects: readonly Effect[]): string[] {
    if (!this.journalOf) return [];
    const ids = new Set<string>();
    for (const e of effects) {
      const id = this.journalOf.get(e);
      if (id) ids.add(id);
    }
    return [...ids];
  }

  /** Records effects to run as soon as the queue takes them (sent by ./send.ts once the caller is done). */
  add(...effects: Effect[]): void {
    this.now.push(...effects);
  }

  /** Records an outbound activity of a local action (add, with this server's origin). */
  federate(action: FederateAction): void {
    this.add({ type: "federate", origin: this.origin, action });
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

  /**
   * Attaches `value` to `effect` for its run in this invocation (runHere), where the runner takes it (`take`). An
   * effect that leaves by the queue leaves it behind, and whoever runs it reads again.
   */
  carry<T>(effect: Effect, kind: Carried<T>, value: T): void {
    this.companions ??= new Map();
    const m = this.companions.get(effect) ?? new Map<Carried<unknown>, unknown>();
    this.companions.set(effect, m);
    m.set(kind, value);
  }

  /** What `effect` carries of `kind`, left in place. */
  carried<T>(effect: Effect, kind: Carried<T>): T | undefined {
    return this.companions?.get(effect)?.get(kind) as T | undefined;
  }

  /** What `effect` carries of `kind`, taken once. */
  take<T>(effect: Effect, kind: Carried<T>): T | undefined {
    const m = this.companions?.get(effect);
    if (!m) return undefined;
    const v = m.get(kind) as T | undefined;
    m.delete(kind);
    if (!m.size) this.companions?.delete(effect);
    return v;
  }

  /**
   * Takes over everything `other` recorded (now, later, after the response) and what those effects carry: a pass whose
   * effects count only once it has finished (an inbox item, a backfill within its time, a scheduled post) records on a
   * collector of its own, then hands it over.
   */
  adopt(other: Effects): void {
    const now = other.drain();
    const here = other.drainHere();
    const later = other.drainLater();
    for (const e of [...now, ...here, ...later.flatMap((g) => g.effects)]) {
      const journal = other.journalOf?.get(e);
      if (journal) this.journaled(journal, [e]);
      const m = other.companions?.get(e);
      if (!m) continue;
      other.companions?.delete(e);
      this.companions ??= new Map();
      this.companions.set(e, m);
    }
    this.add(...now);
    this.afterResponse(...here);
    this.delayed.push(...later);
  }

  /** What is recorded to run now, in order (read only: the senders and the runner take it with drain). */
  get list(): readonly Effect[] {
    return this.now;
  }

  /** What is recorded to run later, by delay (read only, as `list`). */
  get laterGroups(): readonly { readonly seconds: number; readonly effects: readonly Effect[] }[] {
    return this.delayed;
  }

  /** Whether anything is recorded to run after the response. */
  get hasAfterResponse(): boolean {
    return this.here.length > 0;
  }

  /** Takes the effects recorded to run after the response. */
  drainHere(): Effect[] {
    return this.here.splice(0, this.here.length);
  }

  /** Takes everything recorded so far to run at once (the collector's list is empty afterwards). */
  drain(): Effect[] {
    return this.now.splice(0, this.now.length);
  }

  /** Takes the delayed groups recorded so far. */
  drainLater(): { seconds: number; effects: Effect[] }[] {
    return this.delayed.splice(0, this.delayed.length);
  }
}

/** A new activity id on this server (Mastodon uses `${origin}/${uuid}` for Follow, Block and Flag ids). */
export const newActivityUri = (origin: string) => `${origin}/${crypto.randomUUID()}`;
