// End to end: Web Push as a Mastodon client sets it up, against `wrangler dev`, delivered to a real push service on
// loopback (test/support/push-service.mjs: decrypts aes128gcm and legacy aesgcm, verifies VAPID). Subscriptions are
// made with masto 8 (`v1.push.subscription.*`); notifications are caused by other users through the API.
//
// Proving that a push was NOT sent: one notification's pushes leave as one pack of jobs, run in the order of the
// subscriptions' ids. So user A keeps two subscriptions (two access tokens, as two apps would): `main`, made first,
// and `witness`, made later. When `witness` receives the push of a notification, `main` would already have received
// it had it been due; each negative check waits for the witness's push, never for a clock.
import "../support/polyfills.mjs";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createOAuthAPIClient, createRestAPIClient } from "masto";
import { startPushService } from "../support/push-service.mjs";
import { startTern } from "../support/server.mjs";

const OOB = "urn:ietf:wg:oauth:2.0:oob";
const SCOPES = "read write follow push";
const PASSWORD = "correct horse battery staple";
/** Cap of every wait: the machine is shared and busy. */
const WAIT_MS = 30_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nonce = () => Math.random().toString(36).slice(2, 9);

/** Makes masto's HTTP errors say which request failed and how. */
async function step(what, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e?.statusCode) throw new Error(`${what}: HTTP ${e.statusCode} ${JSON.stringify(e.message)}`, { cause: e });
    throw e;
  }
}

function need(value, prereq) {
  if (!value) throw new Error(`blocked by an earlier step: ${prereq}`);
  return value;
}

/** Polls fn until it returns a truthy value (for state with no event to wait on); fails after WAIT_MS. */
async function eventually(what, fn, intervalMs = 200) {
  const deadline = Date.now() + WAIT_MS;
  while (true) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS} ms`);
    await sleep(intervalMs);
  }
}

/** The value of `notification_id` exactly as written in the JSON text (a 64-bit id would be rounded by JSON.parse). */
const rawNotificationId = (text) => /"notification_id":\s*("?)(\d+)\1/.exec(text)?.[2] ?? null;

const ALL_OFF = { mention: false, follow: false, favourite: false, reblog: false, poll: false, status: false, update: false, followRequest: false };

describe("Web Push as clients use it (masto 8 against wrangler dev, a real push service on loopback)", () => {
  let server;
  let push;
  const s = {}; // shared state between steps

  const rest = (accessToken) => createRestAPIClient({ url: server.url, accessToken, timeout: 20_000 });

  async function signUp(appClient, who) {
    const username = `pu_${who}_${nonce().slice(0, 5)}`;
    const email = `${username}@example.test`;
    const token = await step(`POST /api/v1/accounts (${who})`, () =>
      appClient.v1.accounts.create({ username, email, password: PASSWORD, agreement: true, locale: "en" }),
    );
    const client = rest(token.accessToken);
    const me = await step(`verify_credentials (${who})`, () => client.v1.accounts.verifyCredentials());
    await step(`display name (${who})`, () => client.v1.accounts.updateCredentials({ displayName: `${who.toUpperCase()} Pusher` }));
    return { username, email, token: token.accessToken, client, id: me.id, name: `${who.toUpperCase()} Pusher` };
  }

  /** The next push to subscription `sub` whose decrypted body contains `marker`. */
  const pushFor = (sub, marker, type) =>
    push.waitFor((m) => m.subscriptionId === sub.pushId && (m.text ?? "").includes(marker) && (!type || m.payload?.notification_type === type), {
      timeoutMs: WAIT_MS,
    });
  const pushesTo = (sub) => push.messages.filter((m) => m.subscriptionId === sub.pushId);

  /** A mentions-A status by `from`, with a unique marker in its text (the push body carries it). */
  async function mentionA(from, text = "ping") {
    const marker = `m${nonce()}`;
    const st = await step(`POST /api/v1/statuses (mention by ${from.username})`, () =>
      from.client.v1.statuses.create({ status: `@${s.a.username} ${text} ${marker}`, visibility: "public" }),
    );
    return { st, marker };
  }

  /** A's notification of `type` about status `statusId` (or from `accountId`), as REST lists it. */
  const restNotification = (type, match) =>
    eventually(`A's ${type} notification in GET /api/v1/notifications`, async () => {
      const list = await s.a.client.v1.notifications.list({ limit: 30 });
      return list.find((n) => n.type === type && match(n));
    });

  function checkDelivery(msg, sub, token) {
    assert.equal(msg.error, null, `the push decrypts (${msg.error})`);
    assert.equal(msg.vapid.ok, true, `VAPID verifies (${msg.vapid.error})`);
    assert.equal(msg.vapid.key, s.serverKey, "signed with the key the subscription was given as server_key");
    assert.equal(msg.encoding, sub.standard ? "aes128gcm" : "aesgcm");
    assert.ok(msg.ttl > 0, "TTL header");
    assert.equal(msg.payload.access_token, token, "access_token of the subscribing token");
    assert.equal(msg.payload.preferred_locale, "en");
    assert.match(String(msg.payload.icon), /^https?:\/\/\S+$/, "icon is an absolute URL");
  }

  before(async () => {
    push = await startPushService();
    server = await startTern({ vars: { ALLOW_LOOPBACK_FETCH: "true" } });
    const anon = rest();
    const app = await step("POST /api/v1/apps", () => anon.v1.apps.create({ clientName: "Tern push e2e", redirectUris: OOB, scopes: SCOPES }));
    s.app = app;
    const oauth = createOAuthAPIClient({ url: server.url, timeout: 20_000 });
    const appToken = await step("POST /oauth/token (client_credentials)", () =>
      oauth.token.create({ grantType: "client_credentials", clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: OOB, scope: SCOPES }),
    );
    const appClient = rest(appToken.accessToken);
    for (const who of ["a", "b", "c"]) s[who] = await signUp(appClient, who);
    // A second token of A (another app would have its own): the witness subscription lives on it.
    const second = await step("POST /oauth/token (password, A's second token)", () =>
      oauth.token.create({
        grantType: "password",
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        username: s.a.email,
        password: PASSWORD,
        scope: "read push",
      }),
    );
    s.a2 = { token: second.accessToken, client: rest(second.accessToken) };
    s.instance = await step("GET /api/v2/instance", () => anon.v2.instance.fetch());
  });

  after(async () => {
    await server?.stop();
    await push?.close();
  });

  test("POST /api/v1/push/subscription: the subscription comes back with the instance's VAPID key as server_key", async () => {
    const { a } = s;
    const endpoint = push.subscribe("main");
    const created = await step("POST /api/v1/push/subscription", () =>
      a.client.v1.push.subscription.create({
        subscription: { endpoint: endpoint.endpoint, keys: endpoint.keys, standard: true },
        data: { alerts: { ...ALL_OFF, mention: true, follow: true, favourite: true } },
        policy: "all",
      }),
    );
    assert.match(created.id, /^\d+$/, "id is a numeric string");
    assert.equal(created.endpoint, endpoint.endpoint);
    assert.equal(created.alerts.mention, true);
    assert.equal(created.alerts.follow, true);
    assert.equal(created.alerts.favourite, true);
    assert.equal(created.alerts.reblog, false, "an alert not given is off");
    assert.equal(created.policy, "all");
    const vapid = s.instance.configuration?.vapid?.publicKey;
    assert.ok(vapid, "configuration.vapid.public_key");
    assert.equal(created.serverKey, vapid, "server_key is the instance's VAPID key");
    assert.equal(s.app.vapidKey, vapid, "POST /api/v1/apps gave the same vapid_key");
    const fetched = await step("GET /api/v1/push/subscription", () => a.client.v1.push.subscription.fetch());
    assert.equal(fetched.id, created.id);
    assert.deepEqual(fetched.alerts, created.alerts);
    s.serverKey = vapid;
    s.main = { ...created, pushId: endpoint.id, standard: true };
  });

  test("a mention is pushed: decrypted payload, VAPID verified", async () => {
    const { a, b } = s;
    const main = need(s.main, "main subscription");
    const { st, marker } = await mentionA(b, "hello there");
    const msg = await pushFor(main, marker, "mention");
    checkDelivery(msg, main, a.token);
    const p = msg.payload;
    assert.equal(p.notification_type, "mention");
    assert.equal(p.title, `You were mentioned by ${b.name}`);
    assert.match(p.body, new RegExp(`hello there ${marker}$`), "the body is the status text");
    const note = await restNotification("mention", (n) => n.status?.id === st.id);
    // Mastodon writes notification_id as a JSON number (the official iOS app decodes an integer); its digits are the
    // notification's id.
    assert.equal(rawNotificationId(msg.text), note.id, "notification_id is the notification's id");
  });

  test("a follow and a favourite are pushed", async () => {
    const { a, b } = s;
    const main = need(s.main, "main subscription");
    await step("B follows A", () => b.client.v1.accounts.$select(a.id).follow());
    const follow = await push.waitFor((m) => m.subscriptionId === main.pushId && m.payload?.notification_type === "follow", { timeoutMs: WAIT_MS });
    checkDelivery(follow, main, a.token);
    assert.equal(follow.payload.title, `${b.name} is now following you`);
    const note = await restNotification("follow", (n) => n.account?.id === b.id);
    assert.equal(rawNotificationId(follow.text), note.id);

    const marker = `f${nonce()}`;
    const mine = await step("A posts", () => a.client.v1.statuses.create({ status: `Something to like ${marker}`, visibility: "public" }));
    await step("B favourites A's post", () => b.client.v1.statuses.$select(mine.id).favourite());
    const fav = await pushFor(main, marker, "favourite");
    checkDelivery(fav, main, a.token);
    assert.equal(fav.payload.title, `${b.name} favorited your post`);
    assert.equal(fav.payload.body, `Something to like ${marker}`, "the body is the favourited status's text");
    s.aPosts = [mine];
  });

  test("an alert switched off is not pushed (legacy aesgcm subscription as the witness)", async () => {
    const { a, b } = s;
    const main = need(s.main, "main subscription");
    const endpoint = push.subscribe("witness");
    const witness = await step("POST /api/v1/push/subscription (A's second token, legacy)", () =>
      s.a2.client.v1.push.subscription.create({
        subscription: { endpoint: endpoint.endpoint, keys: endpoint.keys },
        data: { alerts: { ...ALL_OFF, mention: true, reblog: true, favourite: true, follow: true } },
        policy: "all",
      }),
    );
    assert.notEqual(witness.id, main.id, "one subscription per access token");
    assert.equal(witness.serverKey, s.serverKey);
    s.witness = { ...witness, pushId: endpoint.id, standard: false };

    const marker = `r${nonce()}`;
    const mine = await step("A posts", () => a.client.v1.statuses.create({ status: `Worth a boost ${marker}`, visibility: "public" }));
    await step("B reblogs A's post", () => b.client.v1.statuses.$select(mine.id).reblog());
    const got = await pushFor(s.witness, marker, "reblog");
    checkDelivery(got, s.witness, s.a2.token);
    assert.equal(got.payload.title, `${b.name} boosted your post`);
    assert.ok(!pushesTo(main).some((m) => m.payload?.notification_type === "reblog"), "main has reblog off: nothing pushed to it");
    s.aPosts.push(mine);
  });

  test("PUT /api/v1/push/subscription updates the alerts", async () => {
    const { a, b } = s;
    const main = need(s.main, "main subscription");
    const updated = await step("PUT /api/v1/push/subscription", () =>
      a.client.v1.push.subscription.update({ data: { alerts: { ...ALL_OFF, mention: true, follow: true, favourite: true, reblog: true } } }),
    );
    assert.equal(updated.id, main.id, "same subscription");
    assert.equal(updated.alerts.reblog, true);
    assert.equal(updated.endpoint, main.endpoint);
    const fetched = await a.client.v1.push.subscription.fetch();
    assert.equal(fetched.alerts.reblog, true, "the change persisted");

    const marker = `r${nonce()}`;
    const mine = await step("A posts", () => a.client.v1.statuses.create({ status: `Boost this too ${marker}`, visibility: "public" }));
    await step("B reblogs A's post", () => b.client.v1.statuses.$select(mine.id).reblog());
    const got = await pushFor(main, marker, "reblog");
    checkDelivery(got, main, a.token);
  });

  test('policy "followed": no push from accounts A does not follow, pushes from those A follows', async () => {
    const { a, b, c } = s;
    const main = need(s.main, "main subscription");
    const witness = need(s.witness, "witness subscription");
    const updated = await step("PUT /api/v1/push/subscription (policy followed)", () =>
      a.client.v1.push.subscription.update({ data: { alerts: { ...ALL_OFF, mention: true }, policy: "followed" } }),
    );
    assert.equal(updated.policy, "followed");
    await step("A follows B", () => a.client.v1.accounts.$select(b.id).follow());

    const fromC = await mentionA(c, "stranger says hi");
    await pushFor(witness, fromC.marker, "mention"); // policy all: the witness hears from C
    assert.ok(!pushesTo(main).some((m) => (m.text ?? "").includes(fromC.marker)), "main (policy followed) got nothing from C, whom A does not follow");

    const fromB = await mentionA(b, "friend says hi");
    const got = await pushFor(main, fromB.marker, "mention");
    checkDelivery(got, main, a.token);
    assert.equal(got.payload.title, `You were mentioned by ${b.name}`);
    await pushFor(witness, fromB.marker, "mention"); // and to the witness, after main: nothing is left in flight
  });

  test("a 410 from the push service removes the subscription", async () => {
    const { b } = s;
    const witness = need(s.witness, "witness subscription");
    push.respond(witness.pushId, 410);
    const { marker } = await mentionA(b, "are you still there");
    const gone = await pushFor(witness, marker, "mention");
    assert.equal(gone.status, 410, "the push service answered 410 Gone");
    await eventually("GET /api/v1/push/subscription answers 404", async () => {
      try {
        await s.a2.client.v1.push.subscription.fetch();
        return false;
      } catch (e) {
        if (e?.statusCode === 404) return true;
        throw e;
      }
    });
    s.witness = null;
  });

  test("DELETE /api/v1/push/subscription removes it: nothing more is pushed to it", async () => {
    const { a, b } = s;
    const main = need(s.main, "main subscription");
    await step("DELETE /api/v1/push/subscription", () => a.client.v1.push.subscription.remove());
    await assert.rejects(a.client.v1.push.subscription.fetch(), (e) => e?.statusCode === 404);
    // A new witness (made after main, so its push would come second).
    const endpoint = push.subscribe("witness-2");
    const witness = await step("POST /api/v1/push/subscription (new witness)", () =>
      s.a2.client.v1.push.subscription.create({
        subscription: { endpoint: endpoint.endpoint, keys: endpoint.keys, standard: true },
        data: { alerts: { ...ALL_OFF, mention: true } },
        policy: "all",
      }),
    );
    const { marker } = await mentionA(b, "after the delete");
    const got = await pushFor({ ...witness, pushId: endpoint.id }, marker, "mention");
    checkDelivery(got, { standard: true }, s.a2.token);
    assert.ok(!pushesTo(main).some((m) => (m.text ?? "").includes(marker)), "the deleted subscription got nothing");
  });
});
