// A value built on its first use instead of when the module loads. Everything a module builds at load is paid by
// every isolate's script startup (bench/startup.mjs), whether or not the isolate ever serves a request that needs it:
// route and federation schemas (zod 3 binds ~30 methods per schema object; ~650 of them were ~3 ms) and regular
// expressions with Unicode property classes (V8 builds their character sets when the expression is created, up to
// ~0.6 ms each).
export function lazy<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}
