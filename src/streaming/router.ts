// The router: one object (name "router") that knows which hubs have connections and which stream keys each hub
// listens to. Publishers plan their events from who is listening (listening, versioned) before rendering anything,
// then hand it the events (publishIfCurrent: refused with the current listeners when the version moved on); it
// forwards each event to the hubs that listen, one RPC per hub per publish call, in order per hub.
// Its table is persisted in the object's storage (one key per hub), so an evicted router comes back with it; a hub
// that lost its connections without saying so (a deploy drops every socket) answers the next delivery with what it
// really has and the entry is corrected.
import type { Env } from "../env";
import { accountOfHub, entry, type HubItem, type Listening, ROUTER, type Routed, userHub } from "./protocol";
import { isAccountKey } from "./streams";

/** A hub's keys as of `version` (null keys: no connections). Versions order a hub's reports; the router keeps the newest. */
export interface HubState {
  keys: string[] | null;
  version: number;
}

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
  /** The version of each hub's last applied report (kept after a hub's entry is removed, in memory only). */
  private versions = new Map<string, number>();
  /** Per-hub delivery chains: events reach a hub in the order they were published here. */
  private chains = new Map<string, Promise<unknown>>();
  /**
   * Who listens, versioned: this object's own random epoch and a count of the changes to its table since it loaded.
   * A publisher that planned its events from a version the router no longer has is told the current listeners
   * (publishIfCurrent); an evicted router comes back with another epoch, so no older version can match.
   */
  private readonly epoch = crypto.randomUUID().slice(0, 8);
  private changes = 0;

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
        this.index(key.slice(4), new Set(row.k));
        this.versions.set(key.slice(4), row.v);
      }
    })();
    return this.ready;
  }

  private index(hub: string, keys: Set<string> | null) {
    const old = this.hubs.get(hub);
    // What a publisher plans from (listening): which accounts are online and which shared keys have listeners. Only a
    // change to either is a new version; a hub's own account keys (user, list:…) are matched when publishing.
    const touched = [...(old ?? []), ...(keys ?? [])].filter((k) => !isAccountKey(k));
    const listenedBefore = new Set(touched.filter((k) => this.shared.has(k)));
    if (old) for (const k of old) if (!isAccountKey(k)) this.shared.get(k)?.delete(hub);
    for (const [k, set] of this.shared) if (!set.size) this.shared.delete(k);
    if (!keys) this.hubs.delete(hub);
    else {
      this.hubs.set(hub, keys);
      for (const k of keys) {
        if (isAccountKey(k)) continue;
        entry(this.shared, k, () => new Set<string>()).add(hub);
      }
    }
    const onlineChanged = accountOfHub(hub) !== null && !old !== !keys;
    if (onlineChanged || touched.some((k) => listenedBefore.has(k) !== this.shared.has(k))) this.changes++;
  }

  /**
   * A hub's keys (null: no connections left), unless a newer report was already applied: a hub's own update and the
   * answer to a delivery can cross, and the older must not undo the newer. A stale entry that comes back this way only
   * costs one delivery, which the hub answers with what it has.
   */
  async setHub(hub: string, keys: string[] | null, version: number): Promise<void> {
    await this.load();
    if (version < (this.versions.get(hub) ?? Number.NEGATIVE_INFINITY)) return;
    this.versions.set(hub, version);
    const next = keys ? new Set(keys) : null;
    const old = this.hubs.get(hub) ?? null;
    // Unchanged keys: nothing to store (the version is kept in memory only).
    if (sameKeys(old, next)) return;
    this.index(hub, next);
    if (next) await this.storage.put(`hub:${hub}`, { k: [...next], v: version });
    else await this.storage.delete(`hub:${hub}`);
  }

  /** Every connected account and every shared key listened to, as of the returned version. */
  async listening(): Promise<Listening> {
    await this.load();
    const online: string[] = [];
    for (const h of this.hubs.keys()) {
      const a = accountOfHub(h);
      if (a) online.push(a);
    }
    return { version: this.version(), online, shared: [...this.shared.keys()] };
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
    const perHub = new Map<string, HubItem[]>();
    const add = (hub: string, item: HubItem) => entry(perHub, hub, () => [] as HubItem[]).push(item);
    for (const ev of events) {
      const keysByHub = new Map<string, Set<string>>();
      const want = (hub: string, key: string) => {
        const has = this.hubs.get(hub);
        if (!has?.has(key)) return;
        entry(keysByHub, hub, () => new Set<string>()).add(key);
      };
      for (const a of ev.accounts ?? []) for (const k of a.keys) want(userHub(a.id), k);
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
      for (const [hub, keys] of keysByHub) add(hub, { envelope: ev.envelope, keys: [...keys] });
    }
    await Promise.all([...perHub].map(([hub, items]) => this.sendInOrder(hub, items)));
  }

  private sendInOrder(hub: string, items: HubItem[]): Promise<unknown> {
    const prev = this.chains.get(hub) ?? Promise.resolve();
    const next = prev.then(async () => {
      let actual: HubState;
      try {
        actual = await this.hubStub(hub).deliver(items);
      } catch (e) {
        // A hub that cannot be reached keeps its entry; it corrects it when it next changes.
        console.error("streaming: delivery to hub failed", hub, e instanceof Error ? e.message : e);
        return;
      }
      await this.setHub(hub, actual.keys, actual.version);
    });
    const settled = next.catch(() => {});
    this.chains.set(hub, settled);
    void settled.then(() => {
      if (this.chains.get(hub) === settled) this.chains.delete(hub);
    });
    return next;
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
    routerSetHub(hub: string, keys: string[] | null, version: number): Promise<void>;
    routerPublish(events: Routed[]): Promise<void>;
    routerListening(): Promise<Listening>;
    routerPublishIfCurrent(version: string, events: Routed[]): Promise<Listening | null>;
  };
}
