// The root app's router: Hono's trie router, built per path prefix on first use instead of whole.
//
// Building a trie of all ~400 routes was ~2.5 ms of CPU on each isolate's first request (bench/startup.mjs, "first
// request of the cold isolate"), inside the 10 ms a request may use on the free plan. Here a request's first three
// path segments pick a trie made of only the routes that could match paths beginning that way (those whose leading
// static segments agree with the request's; a parameter or wildcard agrees with anything), added in their original
// order, so the trie answers exactly as a trie of every route would: the same handlers in the same order, the same
// parameters (test/unit/prefix-router.test.ts checks that over every route). A segment no route has as a fixed name
// at that place (an id, a username) counts as "any", so the number of tries is bounded by the routes, not the paths.
import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";

const DEPTH = 3;
/** The key segment for a request segment that no route names at that place. */
const ANY = "\u0000";

const segmentsOf = (path: string): string[] => {
  const parts = path.split("/");
  if (parts[0] === "") parts.shift();
  return parts;
};
/** A fixed name: no parameter (`:id`, `:id{…}`, `:id?`) and no wildcard. */
const isFixed = (segment: string): boolean => !/[:*{}?]/.test(segment);

interface Route<T> {
  method: string;
  path: string;
  handler: T;
  segments?: string[];
}

/** Whether a route might match a path whose leading segments are `key`: false only when a fixed name disagrees. */
function mayMatch(route: string[], key: string[]): boolean {
  for (let i = 0; i < key.length; i++) {
    const s = route[i];
    // Shorter than the path without a wildcard: no match (a wildcard or parameter was found earlier and returned).
    if (s === undefined) return false;
    if (!isFixed(s)) return true;
    if (s !== key[i]) return false;
  }
  return true;
}

export class PrefixRouter<T> implements Router<T> {
  name = "PrefixRouter";
  readonly #routes: Route<T>[] = [];
  /** Per position, the fixed names routes have there after only fixed names (made on the first match). */
  #fixed: Set<string>[] | null = null;
  readonly #tries = new Map<string, TrieRouter<T>>();

  /** Only kept: the app adds every route at load, and what is done with them waits for the first request. */
  add(method: string, path: string, handler: T): void {
    this.#fixed = null; // a route added after matching began: the index and the tries are made again as needed
    this.#tries.clear();
    this.#routes.push({ method, path, handler });
  }

  #index(): Set<string>[] {
    const fixed = Array.from({ length: DEPTH }, () => new Set<string>());
    for (const r of this.#routes) {
      r.segments ??= segmentsOf(r.path);
      for (let i = 0; i < Math.min(DEPTH, r.segments.length); i++) {
        const s = r.segments[i]!;
        if (!isFixed(s)) break;
        fixed[i]!.add(s);
      }
    }
    this.#fixed = fixed;
    return fixed;
  }

  /** How many tries have been built (for tests). */
  get trieCount(): number {
    return this.#tries.size;
  }

  match(method: string, path: string): Result<T> {
    const fixed = this.#fixed ?? this.#index();
    const key = segmentsOf(path)
      .slice(0, DEPTH)
      .map((s, i) => (fixed[i]!.has(s) ? s : ANY));
    const id = key.join("/");
    let trie = this.#tries.get(id);
    if (!trie) {
      trie = new TrieRouter<T>();
      for (const r of this.#routes) if (mayMatch(r.segments!, key)) trie.add(r.method, r.path, r.handler);
      this.#tries.set(id, trie);
    }
    return trie.match(method, path);
  }
}
