// Fedify 2 targets Node 22+; the federation suite runs on Node 20 (the project's minimum). On top of the shared
// polyfills (Promise.withResolvers, navigator, WebSocket): Temporal and URLPattern as globals (fedify imports its
// own copies, but vocabulary values built here must be the same Temporal), and the Iterator.from helper that
// @fedify/uri-template's router uses.
import "../support/polyfills.mjs";
import { Temporal } from "@js-temporal/polyfill";
import { URLPattern } from "urlpattern-polyfill";

if (typeof globalThis.Temporal === "undefined") {
  Object.defineProperty(globalThis, "Temporal", { value: Temporal, configurable: true, writable: true });
}
if (typeof globalThis.URLPattern === "undefined") {
  globalThis.URLPattern = URLPattern;
}

if (typeof globalThis.Iterator?.from !== "function") {
  // Only what fedify calls: Iterator.from(iterable) with chained map/filter, consumed by for-of, spread or Map.
  const wrap = (iterator) => {
    const rest = { [Symbol.iterator]: () => iterator };
    return {
      next: (...args) => iterator.next(...args),
      [Symbol.iterator]() {
        return this;
      },
      map: (fn) =>
        wrap(
          (function* () {
            let i = 0;
            for (const x of rest) yield fn(x, i++);
          })(),
        ),
      filter: (fn) =>
        wrap(
          (function* () {
            let i = 0;
            for (const x of rest) if (fn(x, i++)) yield x;
          })(),
        ),
      toArray: () => [...rest],
    };
  };
  const Iter = globalThis.Iterator ?? function Iterator() {};
  Iter.from = (iterable) => wrap(iterable[Symbol.iterator]());
  if (!globalThis.Iterator) globalThis.Iterator = Iter;
}

export { Temporal };
