// The instance documents (v1, v2, NodeInfo, custom emojis, rules, texts, domain blocks) served from the isolate's
// memory. Every client reads /api/v2/instance at start-up and most re-read it often; its content changes rarely.
//
// Design: one snapshot per isolate (src/services/instance/instance.ts loadInstanceSnapshot) plus the rendered bodies made from
// it. A read within INSTANCE_CACHE_SECONDS (default 15) of the last check costs no D1 at all. After that, the next
// read checks D1 in ONE round trip that reads the counter row (counts, generation), the VAPID row and the active
// users; the settings, rules, contact, emojis and domain blocks come back only when the generation moved (triggers
// give it a new value in the statement that changes any of them). Bodies are rendered again only when something
// they show changed. A staff request that may have changed something (any non-GET under an admin path) marks this
// isolate's snapshot stale, so the isolate that made a change shows it on its next read; every other isolate shows it
// within INSTANCE_CACHE_SECONDS. Counts are exact in D1 and at most that old here.
//
// Why not the Cache API: caches.default is per data centre, its purge (cache.delete) reaches only the data centre the
// write ran in, and it needs a custom domain; a match still costs a sub-request. An in-memory copy costs nothing to
// serve, and a bounded age is all the Cache API would give across data centres anyway.
import type { DB } from "../../db/client";
import type { Env } from "../../env";
import { BoundedMap } from "../../lib/limits/bounded-map";
import { loadInstanceSnapshot, type InstanceSnapshot } from "./instance";
import type { VapidEnv } from "../../push/keys";

const DEFAULT_SECONDS = 15;
const MAX_BODIES = 64;

interface Entry {
  checkedAt: number;
  snapshot: InstanceSnapshot;
  bodies: BoundedMap<string, string>;
}

let entry: Entry | null = null;

/** What the instance documents read from env: the cache's lifetime and the VAPID pair. */
export type InstanceEnv = VapidEnv & Pick<Env, "INSTANCE_CACHE_SECONDS">;

export function cacheMs(env: Pick<Env, "INSTANCE_CACHE_SECONDS">): number {
  const raw = env.INSTANCE_CACHE_SECONDS;
  const n = raw === undefined || raw === "" ? DEFAULT_SECONDS : Number(raw);
  return Number.isFinite(n) && n > 0 ? n * 1000 : 0;
}

/** The next read in this isolate checks D1 (one round trip) instead of serving from memory. */
export function expireInstanceCache(): void {
  if (entry) entry.checkedAt = Number.NEGATIVE_INFINITY;
}

/** Admin writes: the requests after which this isolate checks again (settings, rules, emojis, domain blocks). */
export function mayChangeInstance(method: string, path: string): boolean {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return false;
  return path.startsWith("/api/v1/admin/") || path.startsWith("/api/v2/admin/") || path.startsWith("/admin/");
}

export interface CachedInstance {
  snapshot: InstanceSnapshot;
  /**
   * A rendered document: from memory when it was made from this snapshot, else rendered (once) and kept. `key` names
   * everything the body depends on besides the snapshot (the document, the origin, ...).
   */
  document(key: string, render: (s: InstanceSnapshot) => unknown): Promise<string>;
}

/** The isolate's snapshot, checked against D1 first when older than INSTANCE_CACHE_SECONDS. */
export async function instanceCache(db: DB, env: InstanceEnv): Promise<CachedInstance> {
  const e = await fresh(db, env);
  return {
    snapshot: e.snapshot,
    async document(key, render) {
      const hit = e.bodies.get(key);
      if (hit !== undefined) return hit;
      const body = JSON.stringify(await render(e.snapshot));
      // Keys carry the origin, which comes from the Host header unless LOCAL_DOMAIN is set: the map is bounded.
      e.bodies.set(key, body);
      return body;
    },
  };
}

/** Shorthand for one document. */
export async function instanceDocument(db: DB, env: InstanceEnv, key: string, render: (s: InstanceSnapshot) => unknown): Promise<string> {
  return (await instanceCache(db, env)).document(key, render);
}

async function fresh(db: DB, env: InstanceEnv): Promise<Entry> {
  const ttl = cacheMs(env);
  const now = Date.now();
  if (entry && ttl > 0 && now - entry.checkedAt < ttl) return entry;
  // Concurrent reads that find it stale each check (no promise is shared: Workers do not let one request wait on
  // another's I/O); the check is small.
  return refresh(db, env, now);
}

async function refresh(db: DB, env: InstanceEnv, now: number): Promise<Entry> {
  const prev = entry;
  const snapshot = await loadInstanceSnapshot(db, env, prev?.snapshot.parts ?? null, now);
  const same = prev !== null && sameSnapshot(prev.snapshot, snapshot);
  entry = { checkedAt: now, snapshot: same ? prev.snapshot : snapshot, bodies: same ? prev.bodies : new BoundedMap(MAX_BODIES) };
  return entry;
}

function sameSnapshot(a: InstanceSnapshot, b: InstanceSnapshot): boolean {
  if (a.parts !== b.parts || a.vapidPublicKey !== b.vapidPublicKey) return false;
  const x = a.counts;
  const y = b.counts;
  return (
    x.userCount === y.userCount &&
    x.statusCount === y.statusCount &&
    x.domainCount === y.domainCount &&
    x.activeMonth === y.activeMonth &&
    x.activeHalfyear === y.activeHalfyear
  );
}
