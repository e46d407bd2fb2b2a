// A stand-in for the Cloudflare API (https://api.cloudflare.com/client/v4) on loopback, for testing `npm run deploy`
// without an account: the real wrangler is pointed at it with CLOUDFLARE_API_BASE_URL=<url>/client/v4. It answers
// only the calls wrangler 4.164 and scripts/deploy.mjs make for Tern's deploy, keeps their state (databases, buckets,
// queues and their consumers, scripts with their bindings and secrets, cron schedules, custom domains) and records
// every call. A call it does not know is answered 404 and recorded, so a test sees it. Which calls, and where their
// shapes come from: docs/deploy-stand-in.md.
//   const api = await startCloudflareApi({ token, accountId, zones: ["example.org"] });   (token: the Bearer it accepts)
//   api.url            http://127.0.0.1:<port>/client/v4
//   api.calls          [{ method, path, query, body, authorization, unknown }] in order; body: parsed JSON, text, or
//                      for multipart { metadata, parts }; unknown: true for a call the stand-in has no answer for
//   api.state          { databases, buckets, queues, scripts, zones }
//   api.failNext(method, pathPattern, { status, code, message })   the next matching call fails with that API error
//   api.waitFor(predicate)   resolves with the first recorded call (past or future) that matches
//   await api.close()
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { DatabaseSync } from "node:sqlite";

const json = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};
const ok = (res, result, extra = {}) => json(res, 200, { success: true, errors: [], messages: [], result, ...extra });
const fail = (res, status, code, message) => json(res, status, { success: false, errors: [{ code, message }], messages: [], result: null });
const UNKNOWN = Symbol("unknown call");
const page = (list) => ({ page: 1, per_page: Math.max(list.length, 20), count: list.length, total_count: list.length, total_pages: 1 });

/** Splits SQL into statements at semicolons outside quotes, comments and trigger bodies (BEGIN … END). */
function statementCount(sql) {
  return sql.split(/;\s*(?:\n|$)/).filter((s) => s.replace(/--.*$/gm, "").trim()).length;
}

export async function startCloudflareApi({ token, accountId, accountName = "Operator's account", zones = [] } = {}) {
  const state = {
    databases: new Map(), // uuid → { uuid, name, created_at, sqlite }
    buckets: new Map(), // name → { name, creation_date }
    queues: new Map(), // queue_id → { queue_id, queue_name, created_on, consumers: [] }
    scripts: new Map(), // name → its live version: { metadata, bindings, secrets: Map, schedules, domains, subdomainEnabled, uploads }
    versions: new Map(), // version id → a version uploaded, live once deployed
    zones: zones.map((name) => ({ id: randomUUID().replace(/-/g, ""), name, status: "active", account: { id: accountId, name: accountName } })),
  };
  const calls = [];
  const failures = [];
  const waiters = [];

  const record = (call) => {
    calls.push(call);
    for (const w of [...waiters]) {
      if (w.predicate(call)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(call);
      }
    }
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://stand-in");
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks);
    const type = req.headers["content-type"] ?? "";
    let body = raw.length ? raw.toString("utf8") : undefined;
    if (!type.startsWith("multipart/") && body && /^\s*[[{]/.test(body)) {
      try {
        body = JSON.parse(body);
      } catch {}
    } else if (type.startsWith("multipart/form-data")) {
      body = await readMultipart(raw, type);
    }
    const path = url.pathname.replace(/^\/client\/v4/, "");
    const call = { method: req.method, path, query: Object.fromEntries(url.searchParams), body, authorization: req.headers.authorization ?? null };
    record(call);
    if (!url.pathname.startsWith("/client/v4/")) return fail(res, 404, 7000, `No route for ${req.method} ${url.pathname}`);
    if (req.headers.authorization !== `Bearer ${token}`) return fail(res, 401, 10000, "Authentication error");
    const planned = failures.find((f) => f.method === req.method && f.path.test(path));
    if (planned) {
      failures.splice(failures.indexOf(planned), 1);
      return fail(res, planned.status, planned.code, planned.message);
    }
    try {
      if (route(req.method, path, url.searchParams, body, res) === UNKNOWN) call.unknown = true;
    } catch (e) {
      fail(res, 500, 10000, `stand-in: ${e.message}`);
    }
  });

  const acct = `/accounts/${accountId}`;
  const scriptOf = (name) => state.scripts.get(name);
  const queueByName = (name) => [...state.queues.values()].find((q) => q.queue_name === name);
  const queueJson = (q) => ({
    queue_id: q.queue_id,
    queue_name: q.queue_name,
    created_on: q.created_on,
    modified_on: q.created_on,
    producers: [],
    producers_total_count: 0,
    consumers: q.consumers,
    consumers_total_count: q.consumers.length,
  });
  const dbJson = (d) => ({ uuid: d.uuid, name: d.name, created_at: d.created_at, version: "production", num_tables: 0, file_size: 0 });

  /** Answers one call; UNKNOWN when no route matches. `top` routes match the path, `on` routes the path under the account. */
  function route(method, path, q, body, res) {
    const routes = [];
    const top = (verb, re, fn) => routes.push([verb, re, fn, false]);
    const on = (verb, re, fn) => routes.push([verb, re, fn, true]);
    // ── identity
    top("GET", /^\/accounts$/, () => ok(res, [{ id: accountId, name: accountName }], { result_info: page([1]) }));
    // ── zones
    top("GET", /^\/zones$/, () => {
      const list = state.zones.filter((z) => (!q.get("name") || z.name === q.get("name")) && (!q.get("account.id") || z.account.id === q.get("account.id")));
      return ok(res, list, { result_info: page(list) });
    });

    // ── D1
    on("GET", /^\/d1\/database$/, () => {
      const list = [...state.databases.values()].map(dbJson);
      const per = Number(q.get("per_page") ?? 10);
      const start = (Number(q.get("page") ?? 1) - 1) * per;
      return ok(res, list.slice(start, start + per), { result_info: page(list) });
    });
    on("POST", /^\/d1\/database$/, () => {
      if ([...state.databases.values()].some((d) => d.name === body.name)) return fail(res, 400, 7502, "A database with that name already exists");
      const d = { uuid: randomUUID(), name: body.name, created_at: new Date().toISOString(), sqlite: new DatabaseSync(":memory:") };
      state.databases.set(d.uuid, d);
      return ok(res, dbJson(d));
    });
    on("GET", /^\/d1\/database\/([^/]+)$/, (m) => {
      const d = state.databases.get(m[1]) ?? [...state.databases.values()].find((x) => x.name === m[1]);
      return d ? ok(res, dbJson(d)) : fail(res, 404, 7404, `The database ${m[1]} could not be found`);
    });
    on("POST", /^\/d1\/database\/([^/]+)\/query$/, (m) => {
      const d = state.databases.get(m[1]);
      if (!d) return fail(res, 404, 7404, `The database ${m[1]} could not be found`);
      const sql = String(body?.sql ?? "");
      const started = performance.now();
      try {
        if (/^\s*select\b/i.test(sql) && statementCount(sql) === 1) {
          const results = d.sqlite.prepare(sql).all(...(body.params ?? []));
          return ok(res, [{ results, success: true, meta: { duration: performance.now() - started, rows_read: results.length, rows_written: 0, changes: 0 } }]);
        }
        d.sqlite.exec(sql);
        return ok(res, [{ results: [], success: true, meta: { duration: performance.now() - started, rows_read: 0, rows_written: 0, changes: 0 } }]);
      } catch (e) {
        return fail(res, 400, 7500, `${e.message}: SQLITE_ERROR`);
      }
    });

    // ── R2
    on("GET", /^\/r2\/buckets$/, () => ok(res, { buckets: [...state.buckets.values()] }));
    on("POST", /^\/r2\/buckets$/, () => {
      if (state.buckets.has(body.name)) return fail(res, 409, 10004, "The bucket you tried to create already exists, and you own it.");
      const b = { name: body.name, creation_date: new Date().toISOString(), location: "ENAM", storage_class: "Standard" };
      state.buckets.set(b.name, b);
      return ok(res, b);
    });
    on("GET", /^\/r2\/buckets\/([^/]+)$/, (m) => {
      const b = state.buckets.get(m[1]);
      return b ? ok(res, b) : fail(res, 404, 10006, "The specified bucket does not exist.");
    });

    // ── Queues
    on("GET", /^\/queues$/, () => {
      const list = [...state.queues.values()].filter((x) => !q.get("name") || x.queue_name === q.get("name")).map(queueJson);
      return ok(res, list, { result_info: page(list) });
    });
    on("POST", /^\/queues$/, () => {
      if (queueByName(body.queue_name)) return fail(res, 409, 11009, "A queue with this name already exists");
      const x = { queue_id: randomUUID().replace(/-/g, ""), queue_name: body.queue_name, created_on: new Date().toISOString(), consumers: [] };
      state.queues.set(x.queue_id, x);
      return ok(res, queueJson(x));
    });
    on("POST", /^\/queues\/([^/]+)\/consumers$/, (m) => {
      const x = state.queues.get(m[1]);
      if (!x) return fail(res, 404, 11000, "Queue does not exist");
      // The list answers a consumer's Worker as `script` (what wrangler matches on), the create takes `script_name`.
      const c = { ...body, script: body.script_name, consumer_id: randomUUID().replace(/-/g, ""), queue_id: x.queue_id, created_on: new Date().toISOString() };
      x.consumers.push(c);
      return ok(res, c);
    });
    on("PUT", /^\/queues\/([^/]+)\/consumers\/([^/]+)$/, (m) => {
      const x = state.queues.get(m[1]);
      const i = x?.consumers.findIndex((c) => c.consumer_id === m[2]) ?? -1;
      if (i < 0) return fail(res, 404, 11000, "Consumer does not exist");
      x.consumers[i] = { ...x.consumers[i], ...body };
      return ok(res, x.consumers[i]);
    });

    // ── Workers
    on("GET", /^\/workers\/subdomain$/, () => ok(res, { subdomain: "operator" }));
    // A Worker's first upload is one PUT of the script (live at once); later ones upload a version, then deploy it.
    on("PUT", /^\/workers\/scripts\/([^/]+)$/, (m) => {
      const v = makeVersion(m[1], body?.metadata ?? {});
      if (v.error) return fail(res, 400, 10021, v.error);
      state.scripts.set(m[1], v);
      return ok(res, { id: m[1], etag: v.etag, startup_time_ms: 10, deployment_id: v.deploymentId, has_modules: true });
    });
    on("POST", /^\/workers\/scripts\/([^/]+)\/versions$/, (m) => {
      if (!scriptOf(m[1])) return fail(res, 404, 10007, "This Worker does not exist on your account.");
      const v = makeVersion(m[1], body?.metadata ?? {});
      if (v.error) return fail(res, 400, 10021, v.error);
      state.versions.set(v.versionId, v);
      return ok(res, { id: v.versionId, number: v.uploads, startup_time_ms: 10, resources: { script: { etag: v.etag }, bindings: v.bindings }, metadata: {} });
    });
    on("POST", /^\/workers\/scripts\/([^/]+)\/deployments$/, (m) => {
      const v = state.versions.get(body?.versions?.[0]?.version_id);
      if (!v || v.name !== m[1]) return fail(res, 400, 10213, "version not found");
      state.scripts.set(m[1], v);
      return ok(res, { id: v.deploymentId, strategy: body.strategy, versions: body.versions, source: "wrangler" });
    });
    on("PATCH", /^\/workers\/scripts\/([^/]+)\/script-settings$/, (m) => {
      return scriptOf(m[1]) ? ok(res, { ...body }) : fail(res, 404, 10007, "This Worker does not exist on your account.");
    });
    on("GET", /^\/workers\/scripts\/([^/]+)\/settings$/, (m) => {
      const s = scriptOf(m[1]);
      return s
        ? ok(res, { bindings: s.bindings, compatibility_date: s.metadata.compatibility_date, placement: {} })
        : fail(res, 404, 10007, "This Worker does not exist on your account.");
    });
    on("GET", /^\/workers\/services\/([^/]+)$/, (m) => {
      const s = scriptOf(m[1]);
      return s
        ? ok(res, {
            id: m[1],
            default_environment: { environment: "production", script: { id: m[1], tag: "tag", migration_tag: s.metadata.migrations?.new_tag ?? null } },
          })
        : fail(res, 404, 10090, "This Worker does not exist on your account.");
    });
    on("GET", /^\/workers\/workers\/([^/]+)$/, (m) => {
      const s = scriptOf(m[1]);
      if (!s) return fail(res, 404, 10007, "This Worker does not exist on your account.");
      return ok(res, { id: m[1], name: m[1], subdomain: { enabled: s.subdomainEnabled, previews_enabled: s.subdomainEnabled } });
    });
    on("GET", /^\/workers\/scripts\/([^/]+)\/deployments$/, (m) => {
      const s = scriptOf(m[1]);
      if (!s) return fail(res, 404, 10007, "This Worker does not exist on your account.");
      return ok(res, {
        deployments: [{ id: s.deploymentId, source: "wrangler", strategy: "percentage", versions: [{ version_id: s.versionId, percentage: 100 }] }],
      });
    });
    on("GET", /^\/workers\/scripts\/([^/]+)\/secrets$/, (m) => {
      const s = scriptOf(m[1]);
      return s
        ? ok(
            res,
            [...s.secrets.keys()].map((name) => ({ name, type: "secret_text" })),
          )
        : fail(res, 404, 10007, "This Worker does not exist on your account.");
    });
    on("PUT", /^\/workers\/scripts\/([^/]+)\/schedules$/, (m) => {
      const s = scriptOf(m[1]);
      if (!s) return fail(res, 404, 10007, "This Worker does not exist on your account.");
      s.schedules = body;
      return ok(res, { schedules: body });
    });
    for (const verb of ["GET", "POST"]) {
      on(verb, /^\/workers\/scripts\/([^/]+)\/subdomain$/, (m) => {
        const s = scriptOf(m[1]);
        if (!s) return fail(res, 404, 10007, "This Worker does not exist on your account.");
        if (verb === "POST") s.subdomainEnabled = !!body?.enabled;
        return ok(res, { enabled: s.subdomainEnabled, previews_enabled: s.subdomainEnabled });
      });
    }
    on("POST", /^\/workers\/scripts\/([^/]+)\/domains\/changeset$/, (m) => {
      const s = scriptOf(m[1]);
      const origins = Array.isArray(body) ? body : [];
      for (const o of origins) {
        if (!zoneFor(o.hostname)) return fail(res, 400, 100117, `Could not find zone for ${o.hostname}`);
      }
      const added = origins.filter((o) => !s?.domains.some((d) => d.hostname === o.hostname)).map((o) => ({ ...o, id: randomUUID() }));
      const updated = origins.filter((o) => s?.domains.some((d) => d.hostname === o.hostname)).map((o) => ({ ...o, id: randomUUID(), modified: false }));
      return ok(res, { added, removed: [], updated, conflicting: [] });
    });
    on("PUT", /^\/workers\/scripts\/([^/]+)\/domains\/records$/, (m) => {
      const s = scriptOf(m[1]);
      if (!s) return fail(res, 404, 10007, "This Worker does not exist on your account.");
      s.domains = (body?.origins ?? []).map((o) => ({ hostname: o.hostname, zone_id: zoneFor(o.hostname)?.id, zone_name: zoneFor(o.hostname)?.name }));
      return ok(res, s.domains);
    });

    const p = path.startsWith(`${acct}/`) ? path.slice(acct.length) : null;
    for (const [verb, re, fn, underAccount] of routes) {
      const m = verb === method && (underAccount ? p !== null && re.exec(p) : re.exec(path));
      if (m) return fn(m);
    }
    fail(res, 404, 7003, `Could not route to ${path}, perhaps your object identifier is invalid?`);
    return UNKNOWN;
  }

  /** A new version of a script from an upload's metadata: `inherit` bindings resolved against the live version. */
  function makeVersion(name, metadata) {
    const prev = scriptOf(name);
    const uploaded = metadata.bindings ?? [];
    const bindings = [];
    for (const b of uploaded) {
      if (b.type === "secret_text") continue;
      if (b.type === "inherit") {
        const old = prev?.bindings.find((x) => x.name === b.name);
        if (!old) return { error: `inherit binding '${b.name}' is invalid: the previous version has no such binding` };
        bindings.push(old);
      } else bindings.push(b.type === "d1" ? { name: b.name, type: "d1", id: b.id } : b);
    }
    // Secrets: the uploaded ones, and (keep_bindings: secret_text) the previous version's others, values unchanged.
    const secrets = new Map(metadata.keep_bindings?.includes("secret_text") ? (prev?.secrets ?? []) : []);
    for (const b of uploaded) if (b.type === "secret_text") secrets.set(b.name, b.text);
    return {
      name,
      metadata,
      secrets,
      bindings: [...bindings, ...[...secrets.keys()].map((n) => ({ name: n, type: "secret_text" }))],
      schedules: prev?.schedules ?? [],
      domains: prev?.domains ?? [],
      subdomainEnabled: prev?.subdomainEnabled ?? false,
      uploads: (prev?.uploads ?? 0) + 1,
      etag: randomUUID(),
      versionId: randomUUID(),
      deploymentId: randomUUID(),
    };
  }

  function zoneFor(hostname) {
    return state.zones.find((z) => hostname === z.name || hostname.endsWith(`.${z.name}`));
  }

  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/client/v4`,
    calls,
    state,
    failNext(method, path, { status = 400, code, message }) {
      failures.push({ method, path, status, code, message });
    },
    waitFor(predicate) {
      const seen = calls.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close() {
      for (const d of state.databases.values()) d.sqlite.close();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A multipart body as the Workers script upload sends it: the `metadata` part parsed, the others by name. */
async function readMultipart(raw, type) {
  const form = await new Response(raw, { headers: { "content-type": type } }).formData();
  const parts = {};
  let metadata = null;
  for (const [name, value] of form) {
    const text = typeof value === "string" ? value : await value.text();
    if (name === "metadata") metadata = JSON.parse(text);
    else parts[name] = { size: text.length, type: typeof value === "string" ? "text/plain" : value.type };
  }
  return { metadata, parts };
}
