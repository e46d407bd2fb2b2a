// /api/v1/push/subscription: create (JSON and Rails form), read, update, delete, one subscription per token, the
// SSRF rule for endpoints (security row D8), key validation, scopes, token revocation, and the VAPID key the server
// advertises (made once and stored when the operator sets none).
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FetchRefused } from "../../src/net/safe-fetch";
import { padId } from "../../src/lib/text/ids";
import { checkPushEndpoint } from "../../src/push/endpoint";
import { loadVapidKeys, vapidJwt, vapidPublicKey } from "../../src/push/keys";
import { issueToken } from "../../src/services/auth/tokens";
import { anon, api, db, makeApp, makeUser, ORIGIN } from "./helpers";
import { b64u, makePushClient, unb64u, verifyVapid } from "./push-fixtures";

const ALL_OFF = {
  mention: false,
  status: false,
  reblog: false,
  follow: false,
  follow_request: false,
  favourite: false,
  poll: false,
  update: false,
  quote: false,
  quoted_update: false,
  "admin.sign_up": false,
  "admin.report": false,
};

async function subscribe(u: { api: ReturnType<typeof api> }, extra: Record<string, unknown> = {}, endpoint = "https://push.example/sub/1") {
  const c = await makePushClient();
  const res = await u.api.post("/api/v1/push/subscription", {
    subscription: { endpoint, keys: { p256dh: c.p256dh, auth: c.auth } },
    ...extra,
  });
  return { res, client: c };
}

const roundTrips = (h: Headers) => Number(/d1;[^,]*dur=(\d+)/.exec(h.get("server-timing") ?? "")?.[1] ?? "NaN");

const subscriptionCount = async (accountId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM web_push_subscriptions WHERE account_id = ?").bind(padId(accountId)).first<{ n: number }>())!.n;

describe("push subscription API", () => {
  it("creates, reads, updates and deletes the token's subscription", async () => {
    const u = await makeUser();
    const { res } = await subscribe(u, { data: { alerts: { mention: true, follow: "1", favourite: false }, policy: "followed" } });
    expect(res.status).toBe(200);
    const serverKey = (await anon.get("/api/v2/instance")).body.configuration.vapid.public_key;
    expect(res.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      endpoint: "https://push.example/sub/1",
      standard: false,
      alerts: { ...ALL_OFF, mention: true, follow: true },
      policy: "followed",
      server_key: serverKey,
    });
    const key = unb64u(serverKey);
    expect(key.length).toBe(65);
    expect(key[0]).toBe(4);

    const got = await u.api.get("/api/v1/push/subscription");
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    // PUT replaces the data part only: absent alerts are off, policy may come at the top level (masto.js).
    const put = await u.api.put("/api/v1/push/subscription", { data: { alerts: { reblog: true, "admin.report": "true" } }, policy: "none" });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...res.body, alerts: { ...ALL_OFF, reblog: true, "admin.report": true }, policy: "none" });
    const put2 = await u.api.put("/api/v1/push/subscription", {});
    expect(put2.body).toMatchObject({ id: res.body.id, alerts: ALL_OFF, policy: "all" });

    const del = await u.api.delete("/api/v1/push/subscription");
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    const gone = await u.api.get("/api/v1/push/subscription");
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: "Record not found" });
    expect((await u.api.put("/api/v1/push/subscription", { data: { alerts: { mention: true } } })).status).toBe(404);
    // Deleting nothing is fine (Mastodon: "deleted or did not exist").
    expect((await u.api.delete("/api/v1/push/subscription")).body).toEqual({});
  });

  it("takes Rails-style form parameters (Tusky, the official apps) including admin.* alerts and standard", async () => {
    const u = await makeUser();
    const c = await makePushClient();
    const form = new URLSearchParams({
      "subscription[endpoint]": "https://push.example/form",
      "subscription[keys][p256dh]": c.p256dh,
      "subscription[keys][auth]": c.auth,
      "subscription[standard]": "true",
      "data[alerts][mention]": "true",
      "data[alerts][admin.sign_up]": "1",
      "data[alerts][poll]": "false",
      "data[policy]": "follower",
    });
    const res = await u.api.post("/api/v1/push/subscription", form, "form");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ standard: true, policy: "follower", alerts: { ...ALL_OFF, mention: true, "admin.sign_up": true } });
    // The spec's plural spelling of the create path works too.
    const again = await u.api.post("/api/v1/push/subscriptions", {
      subscription: { endpoint: "https://push.example/p", keys: { p256dh: c.p256dh, auth: c.auth } },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ endpoint: "https://push.example/p", standard: false, policy: "all", alerts: ALL_OFF });
  });

  it("shows the endpoint back as it was sent (masto.js compares it): a root URL keeps no added slash", async () => {
    const u = await makeUser();
    const { res } = await subscribe(u, {}, "https://push.example");
    expect(res.status).toBe(200);
    expect(res.body.endpoint).toBe("https://push.example");
    expect((await u.api.get("/api/v1/push/subscription")).body.endpoint).toBe("https://push.example");
    expect((await u.api.put("/api/v1/push/subscription", { data: { alerts: { follow: true } } })).body.endpoint).toBe("https://push.example");
    // Other spellings are kept in their parsed form: the delivery circuit reads the host from the stored URL.
    const upper = await subscribe(u, {}, "HTTPS://Push.Example:443");
    expect(upper.res.body.endpoint).toBe("https://push.example/");
  });

  it("answers the subscription routes in one D1 round trip after the token lookup", async () => {
    const u = await makeUser();
    await anon.get("/api/v2/instance"); // the key pair exists from here on
    const { res } = await subscribe(u);
    expect(roundTrips(res.headers)).toBe(2);
    for (const r of [await u.api.get("/api/v1/push/subscription"), await u.api.put("/api/v1/push/subscription", {})]) {
      expect(r.status).toBe(200);
      expect(roundTrips(r.headers)).toBe(2);
    }
  });

  it("keeps one subscription per access token: a new POST replaces it, other tokens have their own", async () => {
    const u = await makeUser();
    const first = (await subscribe(u, {}, "https://push.example/one")).res.body;
    const second = (await subscribe(u, { data: { alerts: { mention: true } } }, "https://push.example/two")).res.body;
    expect(second.id).not.toBe(first.id);
    expect((await u.api.get("/api/v1/push/subscription")).body).toMatchObject({ id: second.id, endpoint: "https://push.example/two" });
    expect(await subscriptionCount(u.id)).toBe(1);

    // Another token of the same user (another app or device) has none until it subscribes (B14: no cross-token reads).
    const app = await makeApp();
    const t2 = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: u.userId, scopes: ["push"], reuse: false });
    const other = api(t2.accessToken);
    expect((await other.get("/api/v1/push/subscription")).status).toBe(404);
    await subscribe({ api: other }, {}, "https://push.example/three");
    expect(await subscriptionCount(u.id)).toBe(2);
    expect((await u.api.get("/api/v1/push/subscription")).body.endpoint).toBe("https://push.example/two");
    // Deleting one token's subscription leaves the other's.
    await other.delete("/api/v1/push/subscription");
    expect((await u.api.get("/api/v1/push/subscription")).status).toBe(200);
  });

  it("drops the subscription when its token is revoked (POST /oauth/revoke)", async () => {
    const u = await makeUser();
    const app = await makeApp();
    const t = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: u.userId, scopes: ["read", "push"], reuse: false });
    const client = api(t.accessToken);
    expect((await subscribe({ api: client })).res.status).toBe(200);
    expect(await subscriptionCount(u.id)).toBe(1);
    const res = await SELF.fetch(`${ORIGIN}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, token: t.accessToken }),
    });
    expect(res.status).toBe(200);
    expect(await subscriptionCount(u.id)).toBe(0);
    expect((await client.get("/api/v1/push/subscription")).status).toBe(401);
  });

  it("refuses endpoints that are not public https URLs with 422 (D8) and stores nothing", async () => {
    const u = await makeUser();
    const bad = [
      "http://10.0.0.1/",
      "https://10.0.0.1/x",
      "http://push.example/x", // not https
      "https://127.0.0.1/x",
      "https://[::1]/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://2130706433/x",
      "https://169.254.169.254/latest",
      "https://localhost/x",
      "https://push.internal/x",
      "https://user:pw@push.example/x",
      "https://push.example:8443/x",
      "https://tern.test/x", // this server
      "ftp://push.example/x",
      "not a url",
      `https://push.example/${"a".repeat(2100)}`,
      "https://push.example/a%0d%0aX-Injected:1",
    ];
    for (const endpoint of bad) {
      const { res } = await subscribe(u, {}, endpoint);
      expect(res.status, endpoint).toBe(422);
      expect(res.body.error, endpoint).toMatch(/^Validation failed: /);
    }
    expect(await subscriptionCount(u.id)).toBe(0);
  });

  it("allows plain http only to a loopback push service, and only with ALLOW_LOOPBACK_FETCH (e2e)", () => {
    const on = { domain: "tern.test", allowLoopbackFetch: true };
    const off = { domain: "tern.test", allowLoopbackFetch: false };
    expect(checkPushEndpoint("http://127.0.0.1:8123/push/a", on).host).toBe("127.0.0.1:8123");
    expect(checkPushEndpoint("http://[::1]:8123/push/a", on).protocol).toBe("http:");
    expect(() => checkPushEndpoint("http://127.0.0.1:8123/push/a", off)).toThrow(FetchRefused);
    expect(() => checkPushEndpoint("http://push.example/a", on)).toThrow(/https/);
    expect(() => checkPushEndpoint("http://10.0.0.1/a", on)).toThrow(FetchRefused);
    expect(checkPushEndpoint("https://push.example/a", off).toString()).toBe("https://push.example/a");
  });

  it("validates keys, parameters and policy", async () => {
    const u = await makeUser();
    const c = await makePushClient();
    const post = (body: unknown) => u.api.post("/api/v1/push/subscription", body);
    const sub = (keys: unknown, endpoint: unknown = "https://push.example/k") => ({ subscription: { endpoint, keys } });
    // Missing `subscription` entirely: Mastodon's 400 for a missing required parameter.
    expect((await post({ data: { alerts: { mention: true } } })).status).toBe(400);
    expect((await post(sub({ p256dh: c.p256dh, auth: c.auth }, ""))).status).toBe(422);
    expect((await post(sub({ p256dh: c.p256dh }))).status).toBe(422);
    expect((await post(sub({ auth: c.auth }))).status).toBe(422);
    expect((await post(sub({ p256dh: c.p256dh, auth: b64u(new Uint8Array(8)) }))).status).toBe(422); // auth not 16 bytes
    expect((await post(sub({ p256dh: b64u(new Uint8Array(65).fill(4)), auth: c.auth }))).status).toBe(422); // not on the curve
    expect((await post(sub({ p256dh: "!!!not base64!!!", auth: c.auth }))).status).toBe(422);
    expect((await post(sub({ p256dh: [c.p256dh], auth: c.auth }))).status).toBe(422);
    expect((await post({ ...sub({ p256dh: c.p256dh, auth: c.auth }), data: { policy: "everyone" } })).status).toBe(422);
    expect(await subscriptionCount(u.id)).toBe(0);
    // Standard (padded) base64 keys are accepted and stored as base64url.
    const std = (b: Uint8Array) => btoa(String.fromCharCode(...b));
    const ok = await post(sub({ p256dh: std(c.publicKey), auth: std(c.authSecret) }));
    expect(ok.status).toBe(200);
    const row = await env.DB.prepare("SELECT key_p256dh AS p, key_auth AS a FROM web_push_subscriptions WHERE account_id = ?")
      .bind(padId(u.id))
      .first<{ p: string; a: string }>();
    expect(row).toEqual({ p: c.p256dh, a: c.auth });
  });

  it("requires a user token with the push scope", async () => {
    const noPush = await makeUser(undefined, { scopes: "read write follow" });
    expect((await noPush.api.get("/api/v1/push/subscription")).status).toBe(403);
    expect((await subscribe(noPush)).res.status).toBe(403);
    expect((await anon.get("/api/v1/push/subscription")).status).toBe(401);
    expect((await anon.delete("/api/v1/push/subscription")).status).toBe(401);
    // `push` alone is enough.
    const onlyPush = await makeUser(undefined, { scopes: "push" });
    expect((await subscribe(onlyPush)).res.status).toBe(200);
  });
});

describe("VAPID keys", () => {
  it("are made once, stored, and advertised the same everywhere", async () => {
    const a = (await anon.get("/api/v2/instance")).body.configuration.vapid.public_key;
    const second = await anon.get("/api/v2/instance");
    const b = second.body.configuration.vapid.public_key;
    expect(a).toMatch(/^[\w-]{87}$/);
    expect(b).toBe(a);
    // Once made, reading it costs nothing extra: the instance document stays one D1 round trip.
    expect(roundTrips(second.headers)).toBe(1);
    const rows = await env.DB.prepare("SELECT public_key, private_key_sealed FROM vapid_keys").all<{ public_key: string; private_key_sealed: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0].public_key).toBe(a);
    // The private scalar is not stored in clear.
    expect(rows.results[0].private_key_sealed).toMatch(/^[\w-]+\.[\w-]+$/);
    expect(rows.results[0].private_key_sealed.split(".")[1].length).toBeGreaterThan(43);
    // The stored pair signs JWTs that verify with the advertised key.
    const keys = await loadVapidKeys(db(), env);
    expect(keys.publicKey).toBe(a);
    const jwt = await vapidJwt(keys, "https://push.example", "mailto:admin@tern.test");
    await verifyVapid(new Headers({ authorization: `vapid t=${jwt}, k=${a}` }), a, "https://push.example/x");
  });

  it("uses the operator's VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY when both are set", async () => {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const pub = b64u(new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer));
    const d = ((await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey).d!;
    // Mastodon's tools write padded base64url; accept that.
    const operatorEnv = { ...env, VAPID_PUBLIC_KEY: `${pub}=`, VAPID_PRIVATE_KEY: `${d}=` };
    expect(await vapidPublicKey(db(), operatorEnv)).toBe(pub);
    const keys = await loadVapidKeys(db(), operatorEnv);
    const jwt = await vapidJwt(keys, "https://push.example", "mailto:a@b.example");
    await verifyVapid(new Headers({ authorization: `vapid t=${jwt}, k=${pub}` }), pub, "https://push.example/");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM vapid_keys").first<{ n: number }>())!.n).toBe(0);
    // Only one half set: the stored pair is used instead.
    const half = await vapidPublicKey(db(), { ...env, VAPID_PUBLIC_KEY: pub });
    expect(half).not.toBe(pub);
  });
});
