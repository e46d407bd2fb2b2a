// The root app's router: Hono's trie router, built per path prefix on first use instead of whole.
//
// Building a trie of all ~400 routes was ~2.5 ms of CPU on each isolate's first request (bench/startup.mjs, "first
// request of the cold isolate"), inside the 10 ms a request may use on the free plan. Here a request's first three
// path segments pick a trie made of only the routes that could match paths beginning that way (those whose leading
// static segments agree with the request's; a parameter or wildcard agrees with anything), added in their original
// order, so the trie answers exactly as a trie of every route would: the same handlers in the same order, the same
// parameters (test/unit/prefix-router.test.ts checks that over every route). The key follows the request's segments
// only as far as some route's fixed names do (after that, "any": an id, a username, or names strung together by a
// client or a prober), so the number of tries is bounded by the routes, not by the paths that arrive.
import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { splitPath } from "hono/utils/url";

const DEPTH = 3;
/** The key segment for a request segment that no route names at that place. */
const ANY = "\u0000";

/** A fixed name: no parameter (`:id`, `:id{…}`, `:id?`) and no wildcard. */
const isFixed = (segment: string): boolean => !/[:*{}?]/.test(segment);

interface Route<T> {
  method: string;
  path: string;
  handler: T;
  segments?: string[];
}

/**
 * Whether a route might match a path whose leading segments are `key`: false only when a fixed name disagrees. At an
 * ANY in the key, no route with the key's prefix has a fixed name equal to the path's segment (the key would have
 * followed it), so a fixed name there disagrees.
 */
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

/** The routes' leading fixed names as a tree: each node's children are the names that follow its prefix. */
type Prefixes = Map<string, Prefixes>;

export class PrefixRouter<T> implements Router<T> {
  name = "PrefixRouter";
  readonly #routes: Route<T>[] = [];
  /** Made on the first match. */
  #prefixes: Prefixes | null = null;
  readonly #tries = new Map<string, TrieRouter<T>>();

  /** Only kept: the app adds every route at load, and what is done with them waits for the first request. */
  add(method: string, path: string, handler: T): void {
    this.#prefixes = null; // a route added after matching began: the index and the tries are made again as needed
    this.#tries.clear();
    this.#routes.push({ method, path, handler });
  }

  #index(): Prefixes {
    const root: Prefixes = new Map();
    for (const r of this.#routes) {
      r.segments ??= splitPath(r.path);
      let node = root;
      for (let i = 0; i < Math.min(DEPTH, r.segments.length); i++) {
        const s = r.segments[i]!;
        if (!isFixed(s)) break;
        let next = node.get(s);
        if (!next) {
          next = new Map();
          node.set(s, next);
        }
        node = next;
      }
    }
    this.#prefixes = root;
    return root;
  }

  /**
   * The request's leading segments as far as they are a prefix some route has, then ANY if the path goes on: a node of
   * the prefix tree, so there are at most twice as many keys (and tries) as nodes, whatever paths arrive.
   */
  #key(path: string): string[] {
    const segments = splitPath(path);
    const key: string[] = [];
    let node = this.#prefixes ?? this.#index();
    for (let i = 0; i < Math.min(DEPTH, segments.length); i++) {
      const next = node.get(segments[i]!);
      if (!next) {
        key.push(ANY);
        break;
      }
      key.push(segments[i]!);
      node = next;
    }
    return key;
  }

  /** How many tries have been built (for tests). */
  get trieCount(): number {
    return this.#tries.size;
  }

  match(method: string, path: string): Result<T> {
    const key = this.#key(path);
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
