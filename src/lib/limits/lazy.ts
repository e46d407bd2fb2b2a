// A value built on its first use instead of when the module loads. Everything a module builds at load is paid by
// every isolate's script startup (bench/startup.mjs), whether or not the isolate ever serves a request that needs it:
// route and federation schemas (zod 3 binds ~30 methods per schema object; ~650 of them were ~3 ms) and regular
// expressions with Unicode property classes (V8 builds their character sets when the expression is created, up to
// ~0.6 ms each), the grapheme segmenter (ICU's break rules, ~7 ms), zip's CRC table. A value built as null or
// undefined stays built.
export function lazy<T>(build: () => T): () => T {
  let done = false;
  let built: T;
  return () => {
    if (!done) {
      built = build();
      done = true;
    }
    return built;
  };
}
