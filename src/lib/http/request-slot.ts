// A value kept on a per-request object of our own (Hono's Context) under a symbol, where a module-level WeakMap keyed
// by that object would otherwise hold it. Each WeakMap entry is an ephemeron: V8 has to trace it in every collection
// while the table lives (the table lives as long as the isolate), and its value survived young-generation collections
// with it. Measured on the replayed day (bench/README.md, "The bench's own waiting, and what each scavenge copies"):
// the D1 counter's per-statement WeakMap alone was a third of what each scavenge copied.
// Never on a runtime object (the Request, a Response, Headers): a property added to one changes its map, and V8 then
// keeps the "modified" wrapper, and all it references, through every young-generation collection until a full one.

/** get/set of one named slot on a plain object; the symbol is private to the slot, so slots never collide. */
export function requestSlot<T>(name: string) {
  const key = Symbol(name);
  return {
    get: (owner: object): T | undefined => (owner as { [key]?: T })[key],
    set: (owner: object, value: T): void => {
      (owner as { [key]?: T })[key] = value;
    },
  };
}
