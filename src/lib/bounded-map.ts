/**
 * Sets `key` in an isolate-wide map kept to at most `max` entries: the oldest entry (first inserted) leaves to make
 * room. For memos whose entries only save a lookup (a token's subject, an inbox item handed over, a host's local
 * count): losing one costs that lookup again, nothing more.
 */
export function setAtMost<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
