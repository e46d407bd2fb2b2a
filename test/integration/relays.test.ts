// Relays (Mastodon's relay protocol) and /api/v1/admin/relays: the instance actor's Follow of as:Public, the relay's
// Accept/Reject, local public statuses delivered to an accepted relay, the relay's Announces taken as the original
// status (federated timeline, not home, no boost), Undo{Follow} on disable and removal, and the permission.
import { beforeAll, describe, expect, it } from "vitest";
import { anon, makeUser, ORIGIN } from "./helpers";
import { AS_PUBLIC, deliver, installFetchMock, newId, note, pad, remoteActor, serveJson, sql } from "./federation-inbox-fixtures";
import { take } from "./federation-outbound-fixtures";
import { hidden, signIn, web } from "./oauth-helpers";
import { ADMIN, MOD } from "./admin-fixtures";

beforeAll(() => installFetchMock());

const RELAY_INBOX = "https://relay.example/inbox";

const relayActor = () => remoteActor("relay", "relay.example", { docPatch: { type: "Application" } });

const logRows = async () =>
  (await sql("SELECT action, target_type FROM admin_action_logs WHERE target_type = 'Relay' ORDER BY id")).map((r) => `${r.action} ${r.target_type}`);

describe("relays", () => {
  it("add → Follow of as:Public from the instance actor; Accept → accepted; public statuses delivered; Announce ingested; removal → Undo", async () => {
    const admin = await makeUser("relayadmin", ADMIN);
    const added = await admin.api.post("/api/v1/admin/relays", { inbox_url: RELAY_INBOX });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ inbox_url: RELAY_INBOX, state: "pending", enabled: false });
    expect((await admin.api.post("/api/v1/admin/relays", { inbox_url: RELAY_INBOX })).status).toBe(422);
    expect((await admin.api.post("/api/v1/admin/relays", { inbox_url: "http://10.0.0.1/inbox" })).status).toBe(422);

    // The Follow: from the instance actor (an Application), object as:Public, to the relay's inbox only.
    const [follow, ...more] = await take("Follow");
    expect(more).toEqual([]);
    expect(follow!.inboxes).toEqual([RELAY_INBOX]);
    expect(follow!.activity).toMatchObject({ type: "Follow", actor: `${ORIGIN}/actor`, object: AS_PUBLIC });
    expect(follow!.activity.id).toMatch(new RegExp(`^${ORIGIN}/relay-follows/`));
    const [instanceActor] = await sql("SELECT id FROM accounts WHERE uri = ?", `${ORIGIN}/actor`);
    expect(pad(follow!.accountId)).toBe(instanceActor!.id);

    // Before the Accept, nothing is delivered to the relay.
    const alice = await makeUser("relayalice");
    await alice.api.post("/api/v1/statuses", { status: "before the accept", visibility: "public" });
    expect((await take("Create")).flatMap((a) => a.inboxes)).not.toContain(RELAY_INBOX);

    // The relay accepts (at the instance actor's inbox, with the Follow embedded as activityrelay sends it).
    const relay = await relayActor();
    const accept = { id: newId(relay), type: "Accept", actor: relay.uri, object: { ...follow!.activity, "@context": undefined } };
    expect((await deliver(relay, accept, "/actor/inbox")).status).toBe(202);
    expect((await admin.api.get("/api/v1/admin/relays")).body).toMatchObject([{ id: added.body.id, state: "accepted", enabled: true }]);

    // Public statuses go to the relay (Create, Update, Delete); unlisted ones do not.
    const pub = await alice.api.post("/api/v1/statuses", { status: "for the relay", visibility: "public" });
    const [create] = await take("Create");
    expect(create!.inboxes).toContain(RELAY_INBOX);
    expect(create!.activity.object.id).toBe(pub.body.uri);
    await alice.api.post("/api/v1/statuses", { status: "quietly", visibility: "unlisted" });
    expect((await take("Create")).flatMap((a) => a.inboxes)).not.toContain(RELAY_INBOX);
    await alice.api.put(`/api/v1/statuses/${pub.body.id}`, { status: "for the relay, edited" });
    expect((await take("Update"))[0]!.inboxes).toContain(RELAY_INBOX);
    await alice.api.delete(`/api/v1/statuses/${pub.body.id}`);
    const [del] = await take("Delete");
    expect(del!.inboxes).toContain(RELAY_INBOX);
    expect(del!.activity.object.id ?? del!.activity.object).toBe(pub.body.uri);

    // The relay announces dora's public post: stored as dora's status, on the federated timeline, no boost by the
    // relay, not in the home feed of dora's local follower.
    const dora = await remoteActor("dora", "far.example");
    await deliver(dora, { id: newId(dora), type: "Like", actor: dora.uri, object: "https://x.example/none" });
    const [doraRow] = await sql("SELECT id FROM accounts WHERE uri = ?", dora.uri);
    const reader = await makeUser("relayreader");
    await sql(
      "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, 0, ?)",
      pad("7777"),
      pad(reader.id),
      doraRow!.id,
      Date.now(),
    );
    const relayed = note(dora, { content: "<p>relayed to you</p>" });
    serveJson("far.example", new URL(relayed.id as string).pathname, relayed);
    const announce = { id: `https://relay.example/activities/${crypto.randomUUID()}`, type: "Announce", actor: relay.uri, object: relayed.id, to: [AS_PUBLIC] };
    expect((await deliver(relay, announce)).status).toBe(202);
    const stored = await sql(
      "SELECT s.uri, s.reblog_of_id, a.uri AS author FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE s.uri IN (?, ?)",
      relayed.id,
      announce.id,
    );
    expect(stored).toEqual([{ uri: relayed.id, reblog_of_id: null, author: dora.uri }]);
    const [relayRow] = await sql("SELECT statuses_count FROM accounts WHERE uri = ?", relay.uri);
    expect(relayRow!.statuses_count).toBe(0);
    const federatedTl = await reader.api.get("/api/v1/timelines/public?remote=true");
    expect(federatedTl.body.map((s: { uri: string; reblog: unknown }) => [s.uri, s.reblog])).toEqual([[relayed.id, null]]);
    const home = await reader.api.get("/api/v1/timelines/home");
    expect(home.body.map((s: { uri: string }) => s.uri)).not.toContain(relayed.id);
    expect((await sql("SELECT count(*) AS n FROM notifications"))[0]!.n).toBe(0);

    // Disable → Undo{Follow}, nothing more delivered; enable → a new Follow; removal → Undo of that one.
    const disabled = await admin.api.post(`/api/v1/admin/relays/${added.body.id}/disable`);
    expect(disabled.body).toMatchObject({ state: "idle", enabled: false });
    const [undo1] = await take("Undo");
    expect(undo1!.inboxes).toEqual([RELAY_INBOX]);
    expect(undo1!.activity).toMatchObject({ actor: `${ORIGIN}/actor`, object: { type: "Follow", id: follow!.activity.id, object: AS_PUBLIC } });
    await alice.api.post("/api/v1/statuses", { status: "relay is off", visibility: "public" });
    expect((await take("Create")).flatMap((a) => a.inboxes)).not.toContain(RELAY_INBOX);

    const enabled = await admin.api.post(`/api/v1/admin/relays/${added.body.id}/enable`);
    expect(enabled.body).toMatchObject({ state: "pending" });
    const [follow2] = await take("Follow");
    expect(follow2!.activity.id).not.toBe(follow!.activity.id);
    expect(follow2!.activity.object).toBe(AS_PUBLIC);

    expect((await admin.api.delete(`/api/v1/admin/relays/${added.body.id}`)).status).toBe(200);
    const [undo2] = await take("Undo");
    expect(undo2!.inboxes).toEqual([RELAY_INBOX]);
    expect(undo2!.activity.object).toMatchObject({ type: "Follow", id: follow2!.activity.id });
    expect((await admin.api.get("/api/v1/admin/relays")).body).toEqual([]);
    expect(await logRows()).toEqual(["create Relay", "disable Relay", "enable Relay", "destroy Relay"]);
  });

  it("Reject → rejected; an answer from another host or to an unknown Follow changes nothing", async () => {
    const admin = await makeUser("relayadmin2", ADMIN);
    const added = await admin.api.post("/api/v1/admin/relays", { inbox_url: RELAY_INBOX });
    const [follow] = await take("Follow");
    const followId = follow!.activity.id as string;

    const stranger = await remoteActor("mallory", "elsewhere.example", { docPatch: { type: "Application" } });
    await deliver(stranger, { id: newId(stranger), type: "Accept", actor: stranger.uri, object: followId });
    const relay = await relayActor();
    await deliver(relay, { id: newId(relay), type: "Accept", actor: relay.uri, object: `${ORIGIN}/relay-follows/unknown` });
    expect((await admin.api.get(`/api/v1/admin/relays/${added.body.id}`)).body.state).toBe("pending");

    await deliver(relay, { id: newId(relay), type: "Reject", actor: relay.uri, object: followId });
    expect((await admin.api.get(`/api/v1/admin/relays/${added.body.id}`)).body.state).toBe("rejected");

    // A rejected relay gets nothing, and its Announces are not taken as a relay's.
    const alice = await makeUser("relayalice2");
    await alice.api.post("/api/v1/statuses", { status: "not for a rejected relay", visibility: "public" });
    expect((await take("Create")).flatMap((a) => a.inboxes)).not.toContain(RELAY_INBOX);
  });

  it("needs manage_federation: 401 signed out, 403 for a moderator, 403 without an admin scope", async () => {
    expect((await anon.get("/api/v1/admin/relays")).status).toBe(401);
    const mod = await makeUser("relaymod", MOD);
    for (const res of [
      await mod.api.get("/api/v1/admin/relays"),
      await mod.api.post("/api/v1/admin/relays", { inbox_url: RELAY_INBOX }),
      await mod.api.delete("/api/v1/admin/relays/1"),
      await mod.api.post("/api/v1/admin/relays/1/enable"),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "This action is not allowed" });
    }
    const noScope = await makeUser("relaynoscope", { roleId: "2", scopes: "read write" });
    expect((await noScope.api.get("/api/v1/admin/relays")).status).toBe(403);
    expect((await sql("SELECT count(*) AS n FROM relays"))[0]!.n).toBe(0);
    expect(await take()).toEqual([]);
  });

  it("the admin page lists, adds, disables and removes relays (manage_federation)", async () => {
    const admin = await makeUser("relaypages", ADMIN);
    const jar = await signIn("relaypages@example.com");
    const csrf = hidden((await web("/", { jar })).text_, "csrf") ?? "";
    const post = (path: string, form: Record<string, string> = {}) => web(path, { jar, form: { csrf, ...form }, headers: { origin: ORIGIN } });

    const page = await web("/admin/relays", { jar });
    expect(page.status).toBe(200);
    expect(page.text_).toContain("No relay.");
    expect(page.text_).toContain('href="/admin/relays"');
    expect((await post("/admin/relays", { inbox_url: RELAY_INBOX })).status).toBe(303);
    const [relay] = (await admin.api.get("/api/v1/admin/relays")).body;
    expect(relay).toMatchObject({ inbox_url: RELAY_INBOX, state: "pending" });
    expect((await take("Follow")).map((a) => a.inboxes)).toEqual([[RELAY_INBOX]]);
    const listed = (await web("/admin/relays", { jar })).text_;
    expect(listed).toContain(RELAY_INBOX);
    expect(listed).toContain("waiting for the relay&#39;s approval");
    expect(listed).toContain(`action="/admin/relays/${relay.id}/disable"`);
    expect((await post("/admin/relays", { inbox_url: "not a url" })).status).toBe(422);

    expect((await post(`/admin/relays/${relay.id}/disable`)).status).toBe(303);
    expect((await admin.api.get(`/api/v1/admin/relays/${relay.id}`)).body.state).toBe("idle");
    const disabled = (await web("/admin/relays", { jar })).text_;
    expect(disabled).toContain(`action="/admin/relays/${relay.id}/enable"`);
    expect(disabled).not.toContain(`action="/admin/relays/${relay.id}/disable"`);
    expect((await take("Undo")).map((a) => a.inboxes)).toEqual([[RELAY_INBOX]]);
    // Removing asks first; the confirmed form removes it.
    const ask = await post(`/admin/relays/${relay.id}/delete`);
    expect(ask.status).toBe(200);
    expect(ask.text_).toContain(`Remove the relay ${RELAY_INBOX}?`);
    expect((await admin.api.get("/api/v1/admin/relays")).body).toHaveLength(1);
    expect((await post(`/admin/relays/${relay.id}/delete`, { confirmed: "1" })).status).toBe(303);
    expect((await admin.api.get("/api/v1/admin/relays")).body).toEqual([]);
    expect(await take()).toEqual([]); // a disabled relay is removed without another Undo

    await makeUser("relaypagesmod", MOD);
    const modJar = await signIn("relaypagesmod@example.com");
    expect((await web("/admin/relays", { jar: modJar })).status).toBe(403);
  });
});
