// The layering of src/, as `npm run check` enforces it (scripts/check-layers.mjs runs dependency-cruiser with this
// file; docs/architecture.md "Layers"). A module may import only its own layer or lower ones; no import cycles; the
// files that send on a queue are imported only by the ones allowed to send.
//
// Upward imports that existed when the rules were written are listed in .dependency-cruiser-known-violations.json and
// do not fail the check; any new one does. When a move fixes some, regenerate that file (the command is in
// docs/architecture.md "Layers") so it only shrinks.
//
// Touching a queue binding (`env.JOBS`, `env.DELIVERY`, the `Queue<…>` type) is a property access, which
// dependency-cruiser does not see: scripts/check-layers.mjs checks that part itself (QUEUE_BINDING_FILES there).

/**
 * Top to bottom. A path ending in "/" is a folder (everything under it), any other path one file. A more specific path
 * wins over a folder that holds it (src/timelines/feed-filter.ts is policy although src/timelines/ is services).
 */
const LAYERS = [
  // The composition root: the Worker's handlers, the app and the route table. Nothing imports it.
  { name: "entry", paths: ["src/index.ts", "src/app.ts", "src/routes.ts"] },
  // HTTP: routes and pages, with what every route is built on (the context type, route groups) and OAuth.
  {
    name: "pages-and-api",
    paths: ["src/context.ts", "src/route-group.ts", "src/http/", "src/web/", "src/api/", "src/oauth/", "src/federation/http/"],
  },
  // Work after the response: the queue consumers, the cron, the effects runner, the inbox and its handlers.
  {
    name: "background",
    paths: ["src/background/", "src/effects/notify-reads.ts", "src/federation/inbox/"],
  },
  // Actions, and the federation library (resolve, fetch, normalise, sign, outbound builders, deliveries).
  {
    name: "services",
    paths: ["src/services/", "src/timelines/", "src/streaming/", "src/push/", "src/mail/", "src/media/", "src/trends/", "src/federation/"],
  },
  { name: "queries-and-entities", paths: ["src/queries/", "src/entities/"] },
  // Below queries and entities: every read path (a query's SQL, an entity's rendering) applies these rules. The two
  // src/services/ paths are where visibility and filter matching lived before src/policy/.
  {
    name: "policy",
    paths: ["src/policy/", "src/services/visibility.ts", "src/services/filter-match.ts", "src/timelines/feed-filter.ts"],
  },
  { name: "effects-interface", paths: ["src/effects/"] },
  {
    name: "db-and-lib",
    paths: ["src/db/", "src/lib/", "src/env.ts", "src/net/"],
  },
];

/** Where the shared code goes when a layer's import points up: named in each rule's message. */
const MOVE_INTO = {
  "pages-and-api": "a service (src/services/), a query or an entity",
  background: "a service (src/services/, or the federation library), a query or an entity",
  services: "a service, src/queries/, src/entities/, policy (visibility and filter rules) or src/lib/",
  "queries-and-entities": "src/queries/, src/entities/, policy (visibility and filter rules), src/db/ or src/lib/",
  policy: "policy (visibility and filter rules), src/db/ or src/lib/",
  "effects-interface": "src/effects/types.ts, src/db/ or src/lib/",
  "db-and-lib": "src/db/ or src/lib/",
};

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** One regular expression for a layer: its paths, less the more specific paths that belong to other layers. */
function layerRegex(layer) {
  const others = LAYERS.filter((l) => l !== layer).flatMap((l) => l.paths);
  const parts = layer.paths.map((p) => {
    const exact = !p.endsWith("/");
    const carved = others.filter((q) => q !== p && q.startsWith(p)).map((q) => escape(q.slice(p.length)) + (q.endsWith("/") ? "" : "$"));
    return `^${escape(p)}${exact ? "$" : ""}${carved.length ? `(?!${carved.join("|")})` : ""}`;
  });
  return parts.join("|");
}

const regexOf = Object.fromEntries(LAYERS.map((l) => [l.name, layerRegex(l)]));

const layerRules = LAYERS.slice(1).map((layer, i) => {
  const above = LAYERS.slice(0, i + 1);
  return {
    name: `layer-${layer.name}`,
    severity: "error",
    comment:
      `layer-${layer.name}: ${layer.name} (layer ${i + 2} of ${LAYERS.length}) imports from a layer above it ` +
      `(${above.map((l) => l.name).join(", ")}). Fix: move the shared code down into ${MOVE_INTO[layer.name]}, ` +
      "or invert the dependency (the caller above passes in what is needed). Layers: docs/architecture.md \"Layers\".",
    from: { path: regexOf[layer.name] },
    to: { path: above.map((l) => `(?:${regexOf[l.name]})`).join("|") },
  };
});

/** The modules that put messages on a queue, and the only modules that may import them. */
const SENDERS = [
  {
    name: "effects-send",
    module: "^src/effects/send\\.ts$",
    allowed: ["^src/app\\.ts$", "^src/background/cron\\.ts$", "^src/background/effects-runner\\.ts$", "^src/effects/retry\\.ts$"],
    what: "effects leave by one road: a service records them on the Effects collector it is given and returns; the request (src/app.ts), the cron and the JOBS runner send them",
  },
  {
    name: "effects-pending",
    module: "^src/effects/pending\\.ts$",
    allowed: ["^src/effects/send\\.ts$", "^src/background/cron\\.ts$"],
    what: "effects kept in D1 are sent again by the cron only",
  },
  {
    name: "delivery-queue",
    module: "^src/federation/outbound/delivery\\.ts$",
    allowed: ["^src/background/queues\\.ts$", "^src/federation/outbound/outbound-send\\.ts$"],
    what: "deliveries are queued by the outbound builders (src/federation/outbound/outbound-send.ts) and consumed by src/background/queues.ts; code that only reads delivery state belongs in a module without the DELIVERY queue",
  },
];

const senderRules = SENDERS.map((s) => ({
  name: `queue-sender-${s.name}`,
  severity: "error",
  comment: `queue-sender-${s.name}: only ${s.allowed.map((a) => a.replace(/^\^|\$$|\\/g, "")).join(", ")} may import this module: ${s.what}. Fix: record the effect on the Effects collector (or return it) instead of sending it, or move what you need out of the sending module.`,
  from: { pathNot: [s.module, ...s.allowed] },
  to: { path: s.module },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "no-circular: these modules import each other (directly or through others). Fix: move the shared code down into a module both import, or invert the dependency (pass a function or value in).",
      from: {},
      to: { circular: true },
    },
    {
      name: "not-in-a-layer",
      severity: "error",
      comment:
        "not-in-a-layer: this module of src/ belongs to no layer. Fix: put it in a folder that has one, or add its path to LAYERS in .dependency-cruiser.cjs (and to docs/architecture.md \"Layers\").",
      from: {},
      to: { path: "^src/", pathNot: LAYERS.map((l) => `(?:${regexOf[l.name]})`).join("|") },
    },
    ...layerRules,
    ...senderRules,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: a type from a layer above is a dependency on it as much as a value is.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};

// The only files that may touch a queue binding (`env.JOBS`, `env.DELIVERY`, the `Queue<…>` type): the Env type, and
// the senders: effects to JOBS (send.ts, and pending.ts for what JOBS did not take), deliveries to DELIVERY. Checked by
// scripts/check-layers.mjs, not by dependency-cruiser (a property access is no import); not enumerable, so that
// dependency-cruiser's validation of this file does not see it.
Object.defineProperty(module.exports, "queueBindingFiles", {
  enumerable: false,
  value: ["src/env.ts", "src/effects/send.ts", "src/effects/pending.ts", "src/federation/outbound/delivery.ts"],
});
