// Bounded maps for what an isolate keeps across requests. An isolate serves requests (and, for a Durable Object class,
// every object of it in that isolate) for as long as the runtime keeps it, so anything a module keeps keyed by what
// requests bring (hosts, keys, tokens, origins) must have a bound. The inventory of every such map and its bound is in
// docs/architecture.md, "What an isolate keeps"; test/unit/isolate-caches.test.ts fills each past its bound.

/**
 * Sets `key` in an isolate-wide map kept to at most `max` entries: the oldest entry (first inserted) leaves to make
 * room. For memos whose entries only save a lookup (a token's subject, a host's local count): losing one costs that
 * lookup again, nothing more.
 */
export function setAtMost<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

/**
 * A Map that never holds more than `max` entries: setting a new key when it is full first drops the oldest entry (the
 * first inserted; setting a key already there keeps its place). The bound is the map's own, so no caller can forget
 * it. For memos, where a dropped entry costs its lookup again and nothing else.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super();
    if (!(max >= 1)) throw new Error(`BoundedMap: max must be at least 1, not ${max}`);
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}

/** The module-level bounded maps, by name: a fixed set (one per module-level call of isolateMap). */
const registry = new Map<string, BoundedMap<unknown, unknown>>();

/**
 * A module-level BoundedMap, listed under `name` for the tests (isolateMaps). Call it once per module, at load: maps
 * made per request or per object are plain BoundedMaps.
 */
export function isolateMap<K, V>(name: string, max: number): BoundedMap<K, V> {
  const map = new BoundedMap<K, V>(max);
  registry.set(name, map as BoundedMap<unknown, unknown>);
  return map;
}

/** Every map made by isolateMap so far (the modules that make them must have been loaded). */
export function isolateMaps(): ReadonlyMap<string, BoundedMap<unknown, unknown>> {
  return registry;
}
