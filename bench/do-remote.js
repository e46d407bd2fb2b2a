// Bench only (`node bench/day.mjs --dos-apart`): Durable Object namespaces whose objects run in ANOTHER workerd process
// (bench/do-host.mjs, the same bundle), so the measured workerd's CPU is the Worker's own, as on Cloudflare, where each
// Durable Object call is an invocation of its own, in the object's isolate, billed apart. The shim speaks the part of
// the namespace API Tern uses (idFromName, get, a stub's fetch and its RPC methods) over a service binding to that
// process: an RPC call is one HTTP request carrying the method's arguments as JSON (Tern's are plain data), answered
// with the method's result as JSON; a stub's fetch is forwarded whole, WebSocket upgrades included. The host answers
// at PATH (bench/day-entry.js, `serveDurableObject`).

export const PATH = "/__bench/do";
const H_BINDING = "x-bench-do-binding";
const H_NAME = "x-bench-do-name";
const H_METHOD = "x-bench-do-method";
const H_URL = "x-bench-do-url";

/** A namespace for `binding` (e.g. "STREAMING") whose objects live behind `host` (a Fetcher to bench/do-host.mjs). */
export function remoteNamespace(host, binding) {
  const stub = (name) => {
    const rpc =
      (method) =>
      async (...args) => {
        const res = await host.fetch(`http://do${PATH}`, {
          method: "POST",
          headers: { [H_BINDING]: binding, [H_NAME]: name, [H_METHOD]: method },
          body: JSON.stringify(args),
        });
        const out = await res.json();
        if (out.error) throw new Error(out.error);
        return out.result;
      };
    const forward = (input, init) => {
      const req = new Request(input, init);
      const out = new Request(`http://do${PATH}`, req);
      out.headers.set(H_BINDING, binding);
      out.headers.set(H_NAME, name);
      out.headers.set(H_URL, req.url);
      return host.fetch(out);
    };
    // Not thenable (`then` is no method), as a real stub awaited by mistake would not be either.
    return new Proxy({}, { get: (_t, prop) => (prop === "fetch" ? forward : typeof prop === "string" && prop !== "then" ? rpc(prop) : undefined) });
  };
  return {
    idFromName: (name) => ({ name, toString: () => name, equals: (o) => o?.name === name }),
    get: (id) => stub(id.name),
  };
}

/** The host's side: runs the call a remoteNamespace sent on the local namespace named in it. */
export async function serveDurableObject(request, env) {
  const binding = request.headers.get(H_BINDING);
  const ns = env[binding];
  if (!ns?.idFromName) return Response.json({ error: `no Durable Object namespace ${binding}` }, { status: 400 });
  const obj = ns.get(ns.idFromName(request.headers.get(H_NAME)));
  const method = request.headers.get(H_METHOD);
  if (!method) {
    const headers = new Headers(request.headers);
    for (const h of [H_BINDING, H_NAME, H_URL]) headers.delete(h);
    return obj.fetch(new Request(request.headers.get(H_URL), { method: request.method, headers, body: request.body }));
  }
  try {
    return Response.json({ result: (await obj[method](...(await request.json()))) ?? null });
  } catch (e) {
    return Response.json({ error: e instanceof Error ? e.message : String(e) });
  }
}
