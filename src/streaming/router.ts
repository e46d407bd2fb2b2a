// The router: one object (name "router") that knows which hubs have connections and which stream keys each hub
// listens to. Publishers plan their events from who is listening (listening, versioned) before rendering anything,
// then hand it the events (publishIfCurrent: refused with the current listeners when the version moved on); it
// forwards each event to the hubs that listen, one RPC per hub per publish call, in order per hub.
// Its table is persisted in the object's storage (one key per hub), so an evicted router comes back with it; a hub
// that lost its connections without saying so (a deploy drops every socket) answers the next delivery with what it
// really has and the entry is corrected.
//
// No event published after a hub received a subscription is lost while the hub's report travels here:
// - account streams (user, list, direct) are delivered to the account's hub whenever it has connections, whatever it
//   subscribes to, and the hub matches its sockets (their subscriptions change in the hub, in the order things
//   arrive there), so those subscriptions need no report at all;
// - a report adding shared keys carries when the hub received the first subscription in it (`since`); the router keeps
//   what it published in the last seconds (`recent`), and answers with what it published for those keys from then
//   on (less CLOCK_MARGIN_MS) and did not send the hub; the hub hands those out before anything later (its chain
//   is waiting for this answer, later deliveries queue behind it). Status events are kept without
//   their rendering (publish.ts marks those that may belong on a shared stream, `recheck`): a plan only renders for
//   keys someone listened to, so the hub renders the missed ones itself for the keys they belong on.
// Stored keys are bounded: a hub's report that would pass MAX_HUB_KEYS or MAX_HUB_KEY_BYTES, or take the router past
// MAX_ROUTER_KEYS or MAX_ROUTER_KEY_BYTES distinct shared keys, is refused and the hub refuses the subscription; a
// key no connection of a hub holds any more leaves with the hub's next report.
import type { Config, Env } from "../env";
import { accountOfHub, entry, type Envelope, type HubItem, type Listening, ROUTER, type Routed, userHub, type ViewerFacts } from "./protocol";
import { isAccountKey, runtimeSize } from "./streams";

/** How long the router keeps what it published, for hubs whose report of a new subscription is on its way. */
export const REPLAY_MS = 10_000;
/** At most this many of those events are kept. */
const MAX_RECENT = 2000;
/**
 * How much earlier than the hub's clock said it received the subscription the router looks back: two objects'
 * clocks may differ by this much. An event published that long before the subscription may reach it too.
 */
export const CLOCK_MARGIN_MS = 100;

/** Distinct shared keys one hub may listen to, and their size (the hub's storage entry, under the runtime's limits). */
export const MAX_HUB_KEYS = 1000;
export const MAX_HUB_KEY_BYTES = 64 * 1024;
/** Distinct shared keys listened to on the whole instance, and their size (every `listening` answer carries them). */
export const MAX_ROUTER_KEYS = 10_000;
export const MAX_ROUTER_KEY_BYTES = 1024 * 1024;
/** Past this many report versions kept, those of hubs without connections are forgotten (router.ts `versions`). */
const MAX_VERSIONS = 5000;

/** A hub's shared keys as of `version` (null keys: no connections). Versions order a hub's reports; the router keeps the newest. */
export interface HubState {
  keys: string[] | null;
  version: number;
}

/**
 * A report applied (also when older than one applied before), with the events the hub missed for the keys it adds;
 * or refused (`full`) because the keys would pass a bound.
 */
export type SetHubAnswer = { full: false; missed: HubItem[] } | { full: true };
const APPLIED: SetHubAnswer = { full: false, missed: [] };

/** What the router published lately, for hubs whose new subscription it had not heard of yet. */
type Recent = { seq: number; at: number } & (
  | { status: { event: "update" | "status.update"; statusId: string; cfg: Config } }
  | { raw: Envelope; shared: string[] }
);

export interface HubDeliver {
  deliver(items: HubItem[]): Promise<HubState>;
}

type HubStubFor = (hub: string) => HubDeliver;

export class Router {
  /** hub name → the keys its connections subscribe to (a hub with connections but no subscriptions has an empty set). */
  private hubs = new Map<string, Set<string>>();
  /** shared key (public..., hashtag:...) → hubs subscribing to it. */
  private shared = new Map<string, Set<string>>();
  private ready: Promise<void> | null = null;
  /**
   * The version of each hub's last applied report (kept after a hub's entry is removed, in memory only, until
   * MAX_VERSIONS: then those of hubs without connections go; an older report of such a hub applied after that adds a
   * stale entry, which costs one delivery that the hub answers with what it has).
   */
  private versions = new Map<string, number>();
  /** Per-hub delivery chains: events reach a hub in the order they were published here. */
  private chains = new Map<string, Promise<unknown>>();
  /** Per hub, the items published while a delivery to it was in flight: the next delivery takes them all. */
  private pending = new Map<string, { items: HubItem[]; done: Promise<void> }>();
  /**
   * Who listens, versioned: this object's own random epoch and a count of the changes to its table since it loaded.
   * A publisher that planned its events from a version the router no longer has is told the current listeners
   * (publishIfCurrent); an evicted router comes back with another epoch, so no older version can match.
   */
  private readonly epoch = crypto.randomUUID().slice(0, 8);
  private changes = 0;
  /** What was published in the last REPLAY_MS, oldest first, numbered by `seq`. */
  private recent: Recent[] = [];
  private seq = 0;
  /** `hub\nkey` → `seq` when the router stopped sending that key to that hub (events after it did not reach the hub). */
  private dropped = new Map<string, number>();
  /** Sum of runtimeSize over the keys of `shared`. */
  private sharedBytes = 0;
  /** The bounds (fields, so a test can lower them). */
  readonly limits = { hubKeys: MAX_HUB_KEYS, hubBytes: MAX_HUB_KEY_BYTES, routerKeys: MAX_ROUTER_KEYS, routerBytes: MAX_ROUTER_KEY_BYTES };

  private version(): string {
    return `${this.epoch}:${this.changes}`;
  }

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly hubStub: HubStubFor,
  ) {}

  private load(): Promise<void> {
    this.ready ??= (async () => {
      const rows = await this.storage.list<{ k: string[]; v: number }>({ prefix: "hub:" });
      for (const [key, row] of rows) {
        // Entries written before hubs stopped reporting their account keys may still list some.
        this.index(key.slice(4), new Set(row.k.filter((k) => !isAccountKey(k))));
        this.versions.set(key.slice(4), row.v);
      }
    })();
    return this.ready;
  }

  /** Sets a hub's shared keys (null: no connections left). */
  private index(hub: string, keys: Set<string> | null) {
    const old = this.hubs.get(hub);
    const wasConnected = this.hubs.size > 0;
    // What a publisher plans from (listening): which accounts are online, which shared keys have listeners, whether
    // anyone is connected. Only a change to one of them is a new version.
    const touched = [...(old ?? []), ...(keys ?? [])];
    const listenedBefore = new Set(touched.filter((k) => this.shared.has(k)));
    if (this.dropped.size > 1000) this.pruneDropped();
    for (const k of old ?? []) {
      if (keys?.has(k)) continue;
      this.dropped.set(`${hub}\n${k}`, this.seq);
      const set = this.shared.get(k);
      set?.delete(hub);
      if (set && !set.size) {
        this.shared.delete(k);
        this.sharedBytes -= runtimeSize(k);
      }
    }
    if (!keys) this.hubs.delete(hub);
    else {
      this.hubs.set(hub, keys);
      for (const k of keys) {
        if (!this.shared.has(k)) this.sharedBytes += runtimeSize(k);
        entry(this.shared, k, () => new Set<string>()).add(hub);
      }
    }
    const onlineChanged = accountOfHub(hub) !== null && !old !== !keys;
    const connectedChanged = wasConnected !== this.hubs.size > 0;
    if (onlineChanged || connectedChanged || touched.some((k) => listenedBefore.has(k) !== this.shared.has(k))) this.changes++;
  }

  /** Whether `next` may replace `old` as a hub's keys: what it adds stays within the hub's and the router's bounds. */
  private fits(old: Set<string> | null, next: Set<string>): boolean {
    const added = [...next].filter((k) => !old?.has(k));
    if (!added.length) return true;
    const l = this.limits;
    if (next.size > l.hubKeys || runtimeSize(JSON.stringify([...next])) > l.hubBytes) return false;
    const fresh = added.filter((k) => !this.shared.has(k));
    return this.shared.size + fresh.length <= l.routerKeys && this.sharedBytes + fresh.reduce((n, k) => n + runtimeSize(k), 0) <= l.routerBytes;
  }

  /** Keeps what a publish sent for a few seconds (a hub may have subscribed just before the router heard of it). */
  private remember(events: Routed[]) {
    const at = Date.now();
    for (const ev of events) {
      const e = ev.envelope;
      if (e.kind === "status" && ev.recheck) this.recent.push({ seq: ++this.seq, at, status: { event: e.event, statusId: e.statusId, cfg: e.cfg } });
      else if (e.kind === "raw" && ev.shared?.length) this.recent.push({ seq: ++this.seq, at, raw: e, shared: ev.shared });
    }
    let drop = 0;
    while (drop < this.recent.length && (this.recent.length - drop > MAX_RECENT || this.recent[drop]!.at < at - REPLAY_MS)) drop++;
    if (!drop) return;
    this.recent.splice(0, drop);
    this.pruneDropped();
  }

  /** Forgets the drops that no kept event is older than (they exclude nothing any more). */
  private pruneDropped() {
    const oldest = this.recent[0]?.seq ?? this.seq + 1;
    for (const [k, seq] of this.dropped) if (seq < oldest) this.dropped.delete(k);
  }

  /**
   * What a hub adding `next − old` (having received the first of those subscriptions at `since`, its clock) missed:
   * the events kept since then for those keys that were not sent to it, as items for it, in their order.
   */
  private missed(hub: string, old: Set<string> | null, next: Set<string>, since: number): HubItem[] {
    const added = [...next].filter((k) => !old?.has(k));
    if (!added.length) return [];
    const from = since - CLOCK_MARGIN_MS;
    const items: HubItem[] = [];
    for (const r of this.recent) {
      if (r.at < from) continue;
      const keys = ("raw" in r ? added.filter((k) => r.shared.includes(k)) : added).filter((k) => r.seq > (this.dropped.get(`${hub}\n${k}`) ?? -1));
      if (!keys.length) continue;
      items.push({ envelope: "raw" in r ? r.raw : { kind: "status", ...r.status }, keys });
    }
    return items;
  }

  /**
   * A hub's keys (null: no connections left), unless a newer report was already applied: a hub's own update and the
   * answer to a delivery can cross, and the older must not undo the newer. A stale entry that comes back this way only
   * costs one delivery, which the hub answers with what it has.
   */
  async setHub(hub: string, keys: string[] | null, version: number, since?: number): Promise<SetHubAnswer> {
    await this.load();
    if (version < (this.versions.get(hub) ?? Number.NEGATIVE_INFINITY)) return APPLIED;
    const next = keys ? new Set(keys.filter((k) => !isAccountKey(k))) : null;
    const old = this.hubs.get(hub) ?? null;
    // Unchanged keys: nothing to store (the version is kept in memory only).
    if (sameKeys(old, next)) {
      this.versions.set(hub, version);
      return APPLIED;
    }
    // Refused: nothing changes, and the hub's next report (without what was refused) applies.
    if (next && !this.fits(old, next)) return { full: true };
    this.versions.set(hub, version);
    // Found and applied in one step: what is published after it is sent to the hub, what was before is in `missed`.
    const missed = since !== undefined && next ? this.missed(hub, old, next, since) : [];
    this.index(hub, next);
    if (this.versions.size > MAX_VERSIONS) for (const h of [...this.versions.keys()]) if (!this.hubs.has(h)) this.versions.delete(h);
    if (next) await this.storage.put(`hub:${hub}`, { k: [...next], v: version });
    else await this.storage.delete(`hub:${hub}`);
    return { full: false, missed };
  }

  /** Every connected account and every shared key listened to, as of the returned version. */
  async listening(): Promise<Listening> {
    await this.load();
    const online: string[] = [];
    for (const h of this.hubs.keys()) {
      const a = accountOfHub(h);
      if (a) online.push(a);
    }
    return { version: this.version(), online, shared: [...this.shared.keys()], connected: this.hubs.size > 0 };
  }

  /**
   * Publishes events planned from the listeners of `version` if they are still the listeners (null); otherwise
   * publishes nothing and answers with the current ones, for the publisher to plan again.
   */
  async publishIfCurrent(version: string, events: Routed[]): Promise<Listening | null> {
    await this.load();
    if (version !== this.version()) return this.listening();
    if (events.length) await this.publish(events);
    return null;
  }

  /** Forwards each event to the hubs listening; resolves once every hub has taken its events. */
  async publish(events: Routed[]): Promise<void> {
    await this.load();
    this.remember(events);
    const perHub = new Map<string, HubItem[]>();
    const add = (hub: string, item: HubItem) => entry(perHub, hub, () => [] as HubItem[]).push(item);
    for (const ev of events) {
      const keysByHub = new Map<string, Set<string>>();
      const factsByHub = new Map<string, ViewerFacts>();
      const want = (hub: string, key: string) => entry(keysByHub, hub, () => new Set<string>()).add(key);
      // Account keys go to the account's hub while it has connections; the hub matches its sockets' subscriptions.
      const wantAccount = (hub: string, key: string) => {
        if (this.hubs.has(hub)) want(hub, key);
      };
      for (const a of ev.accounts ?? []) {
        for (const k of a.keys) wantAccount(userHub(a.id), k);
        if (a.facts) factsByHub.set(userHub(a.id), a.facts);
      }
      for (const k of ev.shared ?? []) for (const hub of this.shared.get(k) ?? []) want(hub, k);
      if (ev.allUsers?.length) for (const hub of this.hubs.keys()) if (accountOfHub(hub)) for (const k of ev.allUsers) want(hub, k);
      // Cache invalidation reaches a hub whatever it subscribes to: blocks and mutes, and filters_changed (which also
      // drops the hub's compiled filters, used on public and hashtag streams with no `user` stream to carry the event).
      const invalidates = ev.envelope.kind === "relations" || (ev.envelope.kind === "raw" && ev.envelope.event === "filters_changed");
      if (invalidates) {
        for (const a of ev.accounts ?? []) {
          const hub = userHub(a.id);
          if (this.hubs.has(hub) && !keysByHub.has(hub)) keysByHub.set(hub, new Set());
        }
      }
      for (const [hub, keys] of keysByHub) {
        const facts = factsByHub.get(hub);
        add(hub, facts ? { envelope: ev.envelope, keys: [...keys], facts } : { envelope: ev.envelope, keys: [...keys] });
      }
    }
    await Promise.all([...perHub].map(([hub, items]) => this.sendInOrder(hub, items)));
  }

  /**
   * Hands a hub its items after everything published to it before. While a delivery to the hub is in flight, what is
   * published for it meanwhile waits and goes in ONE delivery when that one is done (coalesced, in order): a hub
   * busy with a slow delivery takes the events of several publishes in one call, not one call per publish.
   * Resolves once the hub has taken them.
   */
  private sendInOrder(hub: string, items: HubItem[]): Promise<void> {
    const waiting = this.pending.get(hub);
    if (waiting) {
      waiting.items.push(...items);
      return waiting.done;
    }
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    this.pending.set(hub, { items: [...items], done });
    const prev = this.chains.get(hub) ?? Promise.resolve();
    const next = prev.then(async () => {
      // From here on, what is published for the hub waits for the next delivery.
      const batch = this.pending.get(hub);
      this.pending.delete(hub);
      try {
        const actual = await this.hubStub(hub).deliver(batch?.items ?? items);
        await this.setHub(hub, actual.keys, actual.version);
      } catch (e) {
        // A hub that cannot be reached keeps its entry; it corrects it when it next changes.
        console.error("streaming: delivery to hub failed", hub, e instanceof Error ? e.message : e);
      } finally {
        resolve();
      }
    });
    const settled = next.catch(() => {});
    this.chains.set(hub, settled);
    void settled.then(() => {
      if (this.chains.get(hub) === settled) this.chains.delete(hub);
    });
    return done;
  }
}

function sameKeys(a: Set<string> | null, b: Set<string> | null): boolean {
  if (!a || !b) return a === b;
  if (a.size !== b.size) return false;
  for (const k of a) if (!b.has(k)) return false;
  return true;
}

/** The router's stub (RPC methods of the Streaming class). */
export function routerStub(env: Env) {
  return env.STREAMING.get(env.STREAMING.idFromName(ROUTER)) as unknown as {
    routerSetHub(hub: string, keys: string[] | null, version: number, since?: number): Promise<SetHubAnswer>;
    routerPublish(events: Routed[]): Promise<void>;
    routerListening(): Promise<Listening>;
    routerPublishIfCurrent(version: string, events: Routed[]): Promise<Listening | null>;
  };
}
