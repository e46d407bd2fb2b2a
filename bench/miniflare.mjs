// Tern bundled as for deployment and served by Miniflare, for the benches that drive one workerd directly:
// bench/direct.mjs (a child process of bench/server.mjs), bench/profile.mjs and bench/cold.mjs (in their own process).
// The bundle and the Miniflare come from scripts/local-worker.mjs, which `npm run dev` serves with too; here are the
// bench's own helpers around them.
export { bundleTern, ternMiniflare } from "../scripts/local-worker.mjs";

/** One API call as a client makes it (a form body when `form` is given); the status and the parsed body. */
export async function apiCall(url, path, { form, token } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (form) headers["content-type"] = "application/x-www-form-urlencoded";
  const res = await fetch(url + path, { method: form ? "POST" : "GET", headers, body: form ? new URLSearchParams(form).toString() : undefined });
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
}

/** Registers an app, signs `username` up through it (registrations open) and returns the user's token. */
export async function signUp(url, username) {
  const scopes = "read write";
  const app = (await apiCall(url, "/api/v1/apps", { form: { client_name: username, redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes } })).body;
  const grant = { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: scopes };
  const appToken = (await apiCall(url, "/oauth/token", { form: grant })).body.access_token;
  const form = { username, email: `${username}@example.com`, password: "correct horse battery", agreement: "true", locale: "en" };
  const token = (await apiCall(url, "/api/v1/accounts", { form, token: appToken })).body.access_token;
  if (!token) throw new Error(`sign-up of ${username} gave no token`);
  return token;
}

/** For a Miniflare run as its own process (direct.mjs, d1-host.mjs): disposed on SIGTERM or SIGINT, then exits; logs when ready. */
export async function serveUntilSignal(mf, label) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await mf.dispose();
    } finally {
      process.exit(0);
    }
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  const url = await mf.ready;
  console.log(`[${label}] Miniflare ready at ${url.href}`);
  return url;
}
