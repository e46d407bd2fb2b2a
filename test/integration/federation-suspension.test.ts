// Reversible suspensions over ActivityPub (Mastodon ≥3.3): a staff suspension of a local account sends an
// Update{Person} with `suspended: true` and its undo a plain Update{Person}; a remote server's Delete{Actor} suspends its account here (statuses kept, hidden)
// until an Update{Person} from it; a suspension by our own staff is not lifted by the remote server.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { anon, makeUser, ORIGIN } from "./helpers";
import { AS_PUBLIC, create, deliver, installFetchMock, newId, note, remoteActor, sql, type RemoteActor } from "./federation-inbox-fixtures";
import { addFollow, remoteAccount, take } from "./federation-outbound-fixtures";
import { queued } from "./queues";

beforeAll(() => installFetchMock());

const ADMIN = { roleId: "2", scopes: "read write admin:read admin:write" };

async function accountIdOf(a: RemoteActor): Promise<string> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", a.uri);
  return String(BigInt(row.id));
}

const deleteActor = (a: RemoteActor) => ({ id: `${a.uri}#delete`, type: "Delete", actor: a.uri, object: a.uri, to: [AS_PUBLIC] });
const updateActor = (a: RemoteActor) => ({ id: `${a.uri}#updates/${Date.now()}`, type: "Update", actor: a.uri, object: a.doc, to: [AS_PUBLIC] });

describe("outbound: staff suspending a local account", () => {
  it("suspend queues update_actor -> Update{Person} with suspended: true to followers and followed; the actor stays served, marked suspended", async () => {
    const admin = await makeUser("boss", ADMIN);
    const u = await makeUser("suzy");
    const fan = await remoteAccount("fan", "a.example");
    const solo = await remoteAccount("solo", "b.example", { shared: false });
    const idol = await remoteAccount("idol", "c.example");
    await addFollow(fan.id, u.id);
    await addFollow(solo.id, u.id);
    await addFollow(u.id, idol.id);

    const res = await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "suspend" });
    expect(res.status).toBe(200);
    expect(queued.jobs).toContainEqual({ type: "federate", origin: ORIGIN, action: { kind: "update_actor", accountId: u.id } });

    const [upd, ...rest] = await take();
    expect(rest).toEqual([]);
    // Not a Delete: to Mastodon that would be a permanent deletion, not a reversible suspension.
    expect(upd.activity).toMatchObject({ type: "Update", actor: `${ORIGIN}/users/suzy`, object: { id: `${ORIGIN}/users/suzy`, suspended: true, name: "" } });
    expect([...upd.inboxes].sort()).toEqual(["https://a.example/inbox", solo.inbox, "https://c.example/inbox"].sort());

    const doc = await SELF.fetch(`${ORIGIN}/users/suzy`, { headers: { accept: "application/activity+json" } });
    expect(doc.status).toBe(200);
    const actor = await doc.json<Record<string, any>>();
    expect(actor).toMatchObject({ id: `${ORIGIN}/users/suzy`, suspended: true, summary: "" });
    expect(actor.publicKey.publicKeyPem).toContain("PUBLIC KEY");
    expect((await anon.get(`/api/v1/accounts/${u.id}`)).status).toBe(410);

    // A second suspend of an already suspended account sends nothing more.
    queued.jobs.length = 0;
    await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "suspend" });
    expect(queued.jobs.filter((j) => j.type === "federate")).toEqual([]);
  });

  it("unsuspend queues update_actor -> Update{Person} to followers; actor document served again", async () => {
    const admin = await makeUser("boss", ADMIN);
    const u = await makeUser("suzy");
    const fan = await remoteAccount("fan", "a.example");
    await addFollow(fan.id, u.id);
    await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "suspend" });
    await take();

    const res = await admin.api.post(`/api/v1/admin/accounts/${u.id}/unsuspend`);
    expect(res.status).toBe(200);
    expect(queued.jobs).toContainEqual({ type: "federate", origin: ORIGIN, action: { kind: "update_actor", accountId: u.id } });
    const [upd, ...rest] = await take();
    expect(rest).toEqual([]);
    expect(upd.activity).toMatchObject({ type: "Update", actor: `${ORIGIN}/users/suzy`, object: { id: `${ORIGIN}/users/suzy`, type: "Person" } });
    expect((upd.activity as any).object.suspended).toBeUndefined();
    expect(upd.inboxes).toEqual(["https://a.example/inbox"]);

    const doc = await SELF.fetch(`${ORIGIN}/users/suzy`, { headers: { accept: "application/activity+json" } });
    expect(doc.status).toBe(200);
    expect((await anon.get(`/api/v1/accounts/${u.id}`)).status).toBe(200);
  });

  it("suspending a remote account federates nothing", async () => {
    const admin = await makeUser("boss", ADMIN);
    const far = await remoteAccount("far", "d.example");
    await admin.api.post(`/api/v1/admin/accounts/${far.id}/action`, { type: "suspend" });
    await admin.api.post(`/api/v1/admin/accounts/${far.id}/unsuspend`);
    expect(queued.jobs.filter((j) => j.type === "federate")).toEqual([]);
  });
});

describe("inbound: Delete{Actor} is a reversible suspension", () => {
  it("Delete{Actor} hides the account and its statuses and ends follows; Update{Person} restores them", async () => {
    const nia = await makeUser("nia");
    const bob = await remoteActor("bob");
    await deliver(bob, { id: newId(bob, "follows"), type: "Follow", actor: bob.uri, object: `${ORIGIN}/users/nia` });
    const n = note(bob);
    await deliver(bob, create(bob, n));
    const bobId = await accountIdOf(bob);
    await nia.api.post(`/api/v1/accounts/${bobId}/follow`);
    const [status] = await sql("SELECT id FROM statuses WHERE uri = ?", n.id);
    const statusId = String(BigInt(status.id));
    expect((await nia.api.get(`/api/v1/statuses/${statusId}`)).status).toBe(200);
    expect((await nia.api.get(`/api/v1/accounts/${nia.id}`)).body.followers_count).toBe(1);

    const r = await deliver(bob, deleteActor(bob));
    expect(r.status).toBe(202);
    expect((await nia.api.get(`/api/v1/accounts/${bobId}`)).status).toBe(410);
    expect((await anon.get(`/api/v1/statuses/${statusId}`)).status).toBe(404);
    expect((await nia.api.get(`/api/v1/statuses/${statusId}`)).status).toBe(404);
    expect((await nia.api.get(`/api/v1/accounts/${nia.id}`)).body.followers_count).toBe(0);
    expect((await nia.api.get(`/api/v1/accounts/${nia.id}`)).body.following_count).toBe(0);
    const [row] = await sql("SELECT suspended_at, suspension_origin FROM accounts WHERE uri = ?", bob.uri);
    expect(row.suspended_at).not.toBeNull();
    expect(row.suspension_origin).toBe("remote");

    // Other activities from the suspended actor are still dropped.
    const later = note(bob);
    await deliver(bob, create(bob, later));
    expect(await sql("SELECT id FROM statuses WHERE uri = ?", later.id)).toEqual([]);

    const u = await deliver(bob, updateActor(bob));
    expect(u.status).toBe(202);
    const back = await nia.api.get(`/api/v1/accounts/${bobId}`);
    expect(back.status).toBe(200);
    expect(back.body.acct).toBe("bob@remote.example");
    expect((await anon.get(`/api/v1/statuses/${statusId}`)).status).toBe(200);
    const list = await nia.api.get(`/api/v1/accounts/${bobId}/statuses`);
    expect(list.body.map((s: any) => s.id)).toEqual([statusId]);
    const [after] = await sql("SELECT suspended_at, suspension_origin FROM accounts WHERE uri = ?", bob.uri);
    expect(after).toEqual({ suspended_at: null, suspension_origin: null });
  });

  it("Update{Person} with suspended: true suspends the account here; a later plain Update lifts it", async () => {
    const carl = await remoteActor("carl");
    const nia = await makeUser("nia2");
    await deliver(carl, create(carl, note(carl, { content: "<p>before</p>" })));
    const carlId = await accountIdOf(carl);
    expect((await nia.api.get(`/api/v1/accounts/${carlId}`)).status).toBe(200);
    await deliver(carl, { ...updateActor(carl), object: { ...carl.doc, suspended: true } });
    expect((await nia.api.get(`/api/v1/accounts/${carlId}`)).status).toBe(410);
    const [row] = await sql("SELECT suspension_origin FROM accounts WHERE uri = ?", carl.uri);
    expect(row.suspension_origin).toBe("remote");
    await deliver(carl, updateActor(carl));
    expect((await nia.api.get(`/api/v1/accounts/${carlId}`)).status).toBe(200);
  });

  it("a staff suspension of a remote account is not lifted by its Update{Person} or Delete{Actor}", async () => {
    const admin = await makeUser("boss", ADMIN);
    const eve = await remoteActor("eve");
    const n = note(eve);
    await deliver(eve, create(eve, n));
    const eveId = await accountIdOf(eve);
    expect((await admin.api.post(`/api/v1/admin/accounts/${eveId}/action`, { type: "suspend" })).status).toBe(200);

    await deliver(eve, updateActor(eve));
    expect((await anon.get(`/api/v1/accounts/${eveId}`)).status).toBe(410);
    await deliver(eve, deleteActor(eve));
    await deliver(eve, updateActor(eve));
    expect((await anon.get(`/api/v1/accounts/${eveId}`)).status).toBe(410);
    const [row] = await sql("SELECT suspension_origin FROM accounts WHERE uri = ?", eve.uri);
    expect(row.suspension_origin).toBe("local");

    // Staff can still lift it.
    expect((await admin.api.post(`/api/v1/admin/accounts/${eveId}/unsuspend`)).status).toBe(200);
    expect((await anon.get(`/api/v1/accounts/${eveId}`)).status).toBe(200);
  });

  it("an Update of another actor does not lift a remote suspension (C14)", async () => {
    const bob = await remoteActor("bob");
    const mal = await remoteActor("mal");
    await deliver(bob, create(bob, note(bob)));
    await deliver(mal, create(mal, note(mal)));
    await deliver(bob, deleteActor(bob));
    const bobId = await accountIdOf(bob);
    await deliver(mal, { id: newId(mal), type: "Update", actor: mal.uri, object: bob.doc });
    expect((await anon.get(`/api/v1/accounts/${bobId}`)).status).toBe(410);
  });

  it("Delete of an unknown actor is accepted without fetching or storing it (C20)", async () => {
    const ghost = await remoteActor("ghost", "gone.example", { serve: false });
    const r = await deliver(ghost, deleteActor(ghost));
    expect(r.status).toBe(202);
    expect(await sql("SELECT id FROM accounts WHERE uri = ?", ghost.uri)).toEqual([]);
  });
});
