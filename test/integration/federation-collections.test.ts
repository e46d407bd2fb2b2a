// Collections over ActivityPub (FEP-7aa9 as Mastodon 4.6 federates them): a local collection served as a
// FeaturedCollection and announced (Add, Update, Remove) to its owner's followers; our FeatureRequest for a remote
// account and its Accept, Reject and withdrawal; a remote FeatureRequest for a local account answered with a
// FeatureAuthorization (served at its id) or refused; remote collections stored with only the items whose consent
// was proven; the notifications (added_to_collection, collection_update) and the refusals of forged documents.
import { env, SELF } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { runJob } from "../../src/background/effects-runner";
import type { JobMessage } from "../../src/effects/types";
import { makeUser, ORIGIN, type TestUser } from "./helpers";
import {
  AS_PUBLIC,
  create,
  deliver,
  installFetchMock,
  newId,
  note,
  postInbox,
  remoteActor,
  serveJson,
  sql,
  type RemoteActor,
} from "./federation-inbox-fixtures";
import { take } from "./federation-outbound-fixtures";
import { queued, unpack } from "./queues";

beforeAll(() => installFetchMock());

const AP = { accept: "application/activity+json" };
const canFeaturePublic = { interactionPolicy: { canFeature: { automaticApproval: [AS_PUBLIC] } } };
const kinds = (jobs: JobMessage[]) => jobs.flatMap(unpack).flatMap((e) => (e.type === "federate" ? [e.action.kind] : []));

/** Runs the jobs given and those queued; answers the activities stored for delivery, with their inboxes. */
const sent = (jobs: JobMessage[] = []) => take(undefined, jobs);

async function discoverable(...users: TestUser[]) {
  for (const u of users) expect((await u.api.patch("/api/v1/accounts/update_credentials", { discoverable: true })).status).toBe(200);
}

/** The remote actor known here (its actor document fetched once, through a search). */
async function known(user: TestUser, a: RemoteActor): Promise<string> {
  const res = await user.api.get(`/api/v2/search?q=${encodeURIComponent(a.uri)}&resolve=true&type=accounts`);
  expect(res.body.accounts).toHaveLength(1);
  return res.body.accounts[0].id;
}

const follow = (a: RemoteActor, user: TestUser) => deliver(a, { id: newId(a), type: "Follow", actor: a.uri, object: `${ORIGIN}/users/${user.username}` });

/** A remote collection document of `owner` featuring `items` (FeaturedItems built from [actor, authorization]). */
function remoteCollection(owner: RemoteActor, n: number, items: [string, string | null][], extra: Record<string, unknown> = {}) {
  const id = `${owner.uri}/collections/${n}`;
  return {
    "@context": "https://www.w3.org/ns/activitystreams",
    id,
    type: "FeaturedCollection",
    name: `Collection ${n}`,
    summary: "<p>good people</p>",
    attributedTo: owner.uri,
    sensitive: false,
    discoverable: true,
    totalItems: items.length,
    published: "2026-11-01T00:00:00Z",
    orderedItems: items.map(([actor, auth], i) => ({ id: `${id}/items/${i + 1}`, type: "FeaturedItem", featuredObject: actor, featureAuthorization: auth })),
    ...extra,
  };
}

describe("collections over ActivityPub", { timeout: 60000 }, () => {
  it("a local collection is a FeaturedCollection: served, listed on the actor, and its Add, Update and Remove reach the followers", async () => {
    const [alice, bea] = await Promise.all([makeUser("alice"), makeUser("bea")]);
    await discoverable(bea);
    const bob = await remoteActor("bob");
    await follow(bob, alice);
    await sent();

    const actor = await (await SELF.fetch(`${ORIGIN}/users/alice`, { headers: AP })).json<any>();
    expect(actor.featuredCollections).toBe(`${ORIGIN}/users/alice/featured_collections`);
    expect(actor.interactionPolicy).toEqual({ canFeature: { automaticApproval: [`${ORIGIN}/users/alice`] } }); // not discoverable
    expect((await (await SELF.fetch(`${ORIGIN}/actor`, { headers: AP })).json<any>()).featuredCollections).toBeUndefined();
    const beaActor = await (await SELF.fetch(`${ORIGIN}/users/bea`, { headers: AP })).json<any>();
    expect(beaActor.interactionPolicy).toEqual({ canFeature: { automaticApproval: [AS_PUBLIC] } });

    const created = (
      await alice.api.post("/api/v1/collections", { name: "Birders", description: "watchers", language: "en", tag_name: "Birds", account_ids: [bea.id] })
    ).body.collection;
    const uri = `${ORIGIN}/collections/${created.id}`;
    expect(created.uri).toBe(uri);
    const out = await sent();
    const add = out.find((o) => o.activity.type === "Add")!;
    expect(add.inboxes).toEqual([bob.inbox.replace("/users/bob/inbox", "/inbox")]);
    expect(add.activity).toMatchObject({ actor: `${ORIGIN}/users/alice`, target: `${ORIGIN}/users/alice/featured_collections` });
    const itemId = created.items[0].id;
    const expected = {
      id: uri,
      type: "FeaturedCollection",
      name: "Birders",
      summaryMap: { en: "watchers" },
      attributedTo: `${ORIGIN}/users/alice`,
      totalItems: 1,
      sensitive: false,
      discoverable: true,
      topic: { type: "Hashtag", href: `${ORIGIN}/tags/birds`, name: "#Birds" },
      orderedItems: [
        {
          id: `${uri}/items/${itemId}`,
          type: "FeaturedItem",
          featuredObject: `${ORIGIN}/users/bea`,
          featuredObjectType: "Person",
          featureAuthorization: `${ORIGIN}/users/bea/feature_authorizations/${itemId}`,
        },
      ],
    };
    expect(add.activity.object).toMatchObject(expected);

    // Served at its id, listed on the actor, its item and bea's consent served at theirs.
    const doc = await (await SELF.fetch(uri, { headers: AP })).json<any>();
    expect(doc).toMatchObject(expected);
    expect(doc["@context"][1].FeaturedCollection).toBe("https://w3id.org/fep/7aa9#FeaturedCollection");
    const list = await (await SELF.fetch(actor.featuredCollections, { headers: AP })).json<any>();
    expect(list).toMatchObject({ type: "Collection", totalItems: 1, items: [{ id: uri }] });
    expect(await (await SELF.fetch(`${uri}/items/${itemId}`, { headers: AP })).json()).toMatchObject(expected.orderedItems[0]);
    const auth = await SELF.fetch(expected.orderedItems[0].featureAuthorization, { headers: AP });
    expect(await auth.json()).toMatchObject({ type: "FeatureAuthorization", interactionTarget: `${ORIGIN}/users/bea`, interactingObject: uri });

    // bea was told, with the collection.
    const beaNotes = (await bea.api.get("/api/v1/notifications")).body;
    expect(beaNotes.map((n: any) => [n.type, n.account.id, n.collection?.id])).toEqual([["added_to_collection", alice.id, created.id]]);

    // An update: Update to the followers, and bea hears of it.
    expect((await alice.api.patch(`/api/v1/collections/${created.id}`, { name: "Bird people" })).status).toBe(200);
    const update = (await sent()).find((o) => o.activity.type === "Update")!;
    expect(update.activity.object).toMatchObject({ id: uri, name: "Bird people" });
    const grouped = (await bea.api.get("/api/v2/notifications")).body;
    expect(grouped.notification_groups.map((g: any) => [g.type, g.collection?.name])).toEqual([
      ["collection_update", "Bird people"],
      ["added_to_collection", "Bird people"],
    ]);

    // bea revokes: her item is gone from the document, her consent no longer served, a Remove goes out.
    expect((await bea.api.post(`/api/v1/collections/${created.id}/items/${itemId}/revoke`)).status).toBe(200);
    const remove = (await sent()).find((o) => o.activity.type === "Remove")!;
    expect(remove.activity).toMatchObject({ target: uri, object: `${uri}/items/${itemId}` });
    expect((await SELF.fetch(expected.orderedItems[0].featureAuthorization, { headers: AP })).status).toBe(404);
    expect((await (await SELF.fetch(uri, { headers: AP })).json<any>()).orderedItems).toEqual([]);

    // Deleted: Remove from the featured collections, and the document is gone.
    expect((await alice.api.delete(`/api/v1/collections/${created.id}`)).status).toBe(200);
    const gone = (await sent()).find((o) => o.activity.type === "Remove")!;
    expect(gone.activity).toMatchObject({ target: `${ORIGIN}/users/alice/featured_collections`, object: uri });
    expect((await SELF.fetch(uri, { headers: AP })).status).toBe(404);
  });

  it("a remote account is asked with a FeatureRequest: pending until its Accept, then announced; its Delete withdraws it", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob2", "remote.example", { docPatch: canFeaturePublic });
    const dan = await remoteActor("dan", "remote.example");
    const bobId = await known(alice, bob);
    const danId = await known(alice, dan);
    expect((await alice.api.get(`/api/v1/accounts/${bobId}`)).body.feature_approval).toEqual({ automatic: ["public"], manual: [], current_user: "automatic" });
    expect((await alice.api.get(`/api/v1/accounts/${danId}`)).body.feature_approval).toEqual({ automatic: [], manual: [], current_user: "missing" });

    const col = (await alice.api.post("/api/v1/collections", { name: "Remote friends" })).body.collection;
    await sent();
    // An account whose server gives no consent policy cannot be added; nothing is stored.
    expect((await alice.api.post(`/api/v1/collections/${col.id}/items`, { account_id: danId })).status).toBe(403);
    const added = await alice.api.post(`/api/v1/collections/${col.id}/items`, { account_id: bobId });
    expect(added.status).toBe(200);
    expect(added.body.collection_item).toMatchObject({ account_id: bobId, state: "pending" });
    const [request] = await sent();
    expect(request!.inboxes).toEqual([bob.inbox]);
    expect(request!.activity).toMatchObject({
      type: "FeatureRequest",
      actor: `${ORIGIN}/users/alice`,
      object: bob.uri,
      instrument: `${ORIGIN}/collections/${col.id}`,
    });
    // Pending: shown to the owner only, and not in the FeaturedCollection.
    expect((await alice.api.get(`/api/v1/collections/${col.id}`)).body.collection.items.map((i: any) => i.state)).toEqual(["pending"]);
    const anyone = await makeUser("carl");
    expect((await anyone.api.get(`/api/v1/collections/${col.id}`)).body.collection.items).toEqual([]);
    expect((await (await SELF.fetch(`${ORIGIN}/collections/${col.id}`, { headers: AP })).json<any>()).orderedItems).toEqual([]);

    // Answers from someone else, or naming an authorization on another host, change nothing.
    const eve = await remoteActor("eve", "evil.example", { docPatch: canFeaturePublic });
    await deliver(eve, { id: newId(eve), type: "Accept", actor: eve.uri, object: request!.activity.id, result: `${eve.uri}/feature_authorizations/1` });
    await deliver(bob, { id: newId(bob), type: "Accept", actor: bob.uri, object: request!.activity.id, result: "https://evil.example/auth/1" });
    expect((await alice.api.get(`/api/v1/collections/${col.id}`)).body.collection.items.map((i: any) => i.state)).toEqual(["pending"]);

    const authUri = `${bob.uri}/feature_authorizations/9`;
    const acc = await deliver(bob, { id: newId(bob), type: "Accept", actor: bob.uri, object: request!.activity.id, result: authUri });
    expect(kinds(acc.jobs)).toEqual(["collection_item_add"]);
    const shown = (await anyone.api.get(`/api/v1/collections/${col.id}`)).body;
    expect(shown.collection).toMatchObject({ item_count: 1, items: [{ account_id: bobId, state: "accepted" }] });
    const [addItem] = await sent(acc.jobs);
    expect(addItem!.activity).toMatchObject({
      type: "Add",
      target: `${ORIGIN}/collections/${col.id}`,
      object: { featuredObject: bob.uri, featureAuthorization: authUri },
    });
    expect(addItem!.inboxes).toContain("https://remote.example/inbox");

    // bob withdraws: the item is revoked, and its Remove goes out.
    const del = await deliver(bob, {
      id: `${authUri}#delete`,
      type: "Delete",
      actor: bob.uri,
      to: [AS_PUBLIC],
      object: { id: authUri, type: "FeatureAuthorization" },
    });
    expect((await anyone.api.get(`/api/v1/collections/${col.id}`)).body.collection).toMatchObject({ item_count: 0, items: [] });
    expect((await sent(del.jobs)).map((o) => o.activity.type)).toEqual(["Remove"]);
  });

  it("a Reject of our FeatureRequest rejects the item", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob3", "remote.example", { docPatch: canFeaturePublic });
    const bobId = await known(alice, bob);
    const col = (await alice.api.post("/api/v1/collections", { name: "Asked", account_ids: [bobId] })).body.collection;
    expect(col.items.map((i: any) => i.state)).toEqual(["pending"]);
    const request = (await sent()).find((o) => o.activity.type === "FeatureRequest")!;
    await deliver(bob, { id: newId(bob), type: "Reject", actor: bob.uri, object: request.activity.id });
    const [row] = await sql("SELECT state FROM collection_items WHERE activity_uri = ?", request.activity.id);
    expect(row!.state).toBe("rejected");
    expect((await alice.api.get(`/api/v1/collections/${col.id}`)).body.collection.items).toEqual([]);
  });

  it("a remote FeatureRequest for a local account: accepted with a FeatureAuthorization, or rejected; the account is told and may withdraw", async () => {
    const [alice, quiet] = await Promise.all([makeUser("alice"), makeUser("quiet")]);
    await discoverable(alice);
    await sent();
    const bob = await remoteActor("bob4");
    const collection = remoteCollection(bob, 1, []);
    serveJson("remote.example", "/users/bob4/collections/1", collection);

    const requestId = `${bob.uri}/feature_requests/1`;
    const r = await deliver(bob, { id: requestId, type: "FeatureRequest", actor: bob.uri, object: `${ORIGIN}/users/alice`, instrument: collection.id });
    expect(kinds(r.jobs)).toEqual(["feature_answer"]);
    const [accept] = await sent(r.jobs);
    expect(accept!.inboxes).toEqual([bob.inbox]);
    expect(accept!.activity).toMatchObject({ type: "Accept", actor: `${ORIGIN}/users/alice`, object: requestId });
    const authUri = accept!.activity.result as string;
    expect(authUri).toMatch(new RegExp(`^${ORIGIN}/users/alice/feature_authorizations/\\d+$`));
    expect(await (await SELF.fetch(authUri, { headers: AP })).json()).toMatchObject({
      type: "FeatureAuthorization",
      interactionTarget: `${ORIGIN}/users/alice`,
      interactingObject: collection.id,
    });
    const notes = (await alice.api.get("/api/v1/notifications")).body;
    expect(notes.map((n: any) => [n.type, n.account.acct, n.collection?.name, n.collection?.local])).toEqual([
      ["added_to_collection", "bob4@remote.example", "Collection 1", false],
    ]);

    // bob's Update lists the item: it takes that id; alice hears of the update; the collection shows on bob's profile.
    const updated = remoteCollection(bob, 1, [[`${ORIGIN}/users/alice`, authUri]], { name: "Renamed" });
    await deliver(bob, { id: newId(bob), type: "Update", actor: bob.uri, to: [AS_PUBLIC], object: updated });
    const bobId = (await sql("SELECT id FROM accounts WHERE uri = ?", bob.uri))[0]!.id as string;
    const onProfile = (await alice.api.get(`/api/v1/accounts/${String(BigInt(bobId))}/collections`)).body.collections;
    expect(onProfile.map((c: any) => [c.name, c.uri, c.local, c.items.length])).toEqual([["Renamed", collection.id, false, 1]]);
    expect((await alice.api.get("/api/v1/notifications")).body.map((n: any) => n.type)).toEqual(["collection_update", "added_to_collection"]);
    // The same Update again says nothing new: nobody is told twice.
    await deliver(bob, { id: newId(bob), type: "Update", actor: bob.uri, to: [AS_PUBLIC], object: updated });
    expect((await alice.api.get("/api/v1/notifications")).body).toHaveLength(2);

    // alice withdraws: the Delete of her authorization goes to bob, and it is no longer served.
    const item = onProfile[0].items[0];
    expect((await alice.api.post(`/api/v1/collections/${onProfile[0].id}/items/${item.id}/revoke`)).status).toBe(200);
    const [del] = await sent();
    expect(del!.inboxes).toEqual([bob.inbox]);
    expect(del!.activity).toMatchObject({ type: "Delete", actor: `${ORIGIN}/users/alice`, object: { id: authUri, type: "FeatureAuthorization" } });
    expect((await SELF.fetch(authUri, { headers: AP })).status).toBe(404);
    // Asked again, the withdrawn consent stays withdrawn; an account that is not discoverable is never featured.
    const again = await deliver(bob, {
      id: `${bob.uri}/feature_requests/2`,
      type: "FeatureRequest",
      actor: bob.uri,
      object: `${ORIGIN}/users/alice`,
      instrument: collection.id,
    });
    const no = await deliver(bob, {
      id: `${bob.uri}/feature_requests/3`,
      type: "FeatureRequest",
      actor: bob.uri,
      object: `${ORIGIN}/users/${quiet.username}`,
      instrument: collection.id,
    });
    const answers = await sent([...again.jobs, ...no.jobs]);
    expect(answers.map((o) => [o.activity.type, o.activity.object])).toEqual([
      ["Reject", `${bob.uri}/feature_requests/2`],
      ["Reject", `${bob.uri}/feature_requests/3`],
    ]);
  });

  it("a remote collection keeps only the items whose consent is proven; forged requests and documents are refused", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob5", "remote.example", { docPatch: { featuredCollections: "https://remote.example/users/bob5/featured_collections" } });
    const carol = await remoteActor("carol", "other.example", { docPatch: canFeaturePublic });
    const mallory = await remoteActor("mallory", "other.example");
    // carol's authorization names the collection; mallory's names another one; alice never consented.
    const col = remoteCollection(bob, 2, [
      [carol.uri, `${carol.uri}/feature_authorizations/1`],
      [mallory.uri, `${mallory.uri}/feature_authorizations/1`],
      [`${ORIGIN}/users/alice`, `${ORIGIN}/users/alice/feature_authorizations/1`],
    ]);
    serveJson("other.example", "/users/carol/feature_authorizations/1", {
      id: `${carol.uri}/feature_authorizations/1`,
      type: "FeatureAuthorization",
      interactionTarget: carol.uri,
      interactingObject: col.id,
    });
    serveJson("other.example", "/users/mallory/feature_authorizations/1", {
      id: `${mallory.uri}/feature_authorizations/1`,
      type: "FeatureAuthorization",
      interactionTarget: mallory.uri,
      interactingObject: `${bob.uri}/collections/99`,
    });
    const res = await deliver(bob, { id: newId(bob), type: "Add", actor: bob.uri, target: `${bob.uri}/featured_collections`, object: col });
    expect(res.status).toBe(202);
    const bobId = String(BigInt((await sql("SELECT id FROM accounts WHERE uri = ?", bob.uri))[0]!.id as string));
    const [stored] = (await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections;
    expect(stored).toMatchObject({ name: "Collection 2", uri: col.id, local: false, description: "<p>good people</p>", item_count: 1 });
    const withAccounts = (await alice.api.get(`/api/v1/collections/${stored.id}`)).body;
    expect(withAccounts.accounts.map((a: any) => a.acct)).toEqual(["bob5@remote.example", "carol@other.example"]);

    // A post of bob's linking to it shows it (tagged_collections).
    const linking = note(bob, { content: `<p>see <a href="${col.id}">my list</a></p>` });
    await deliver(bob, create(bob, linking));
    const statusId = String(BigInt((await sql("SELECT id FROM statuses WHERE uri = ?", linking.id))[0]!.id as string));
    expect((await alice.api.get(`/api/v1/statuses/${statusId}`)).body.tagged_collections.map((c: any) => [c.id, c.item_count])).toEqual([[stored.id, 1]]);

    // Reported with the collection and forwarded: the Flag names the account, the status and the collection.
    const report = await alice.api.post("/api/v1/reports", { account_id: bobId, status_ids: [statusId], collection_ids: [stored.id], forward: true });
    expect(report.body.collection_ids).toEqual([stored.id]);
    const flag = (await sent()).find((o) => o.activity.type === "Flag")!;
    expect(flag.activity.object).toEqual([bob.uri, linking.id, col.id]);

    // A collection attributed to someone else, or on another host, is not stored; nor is a FeatureRequest from another host.
    await deliver(bob, {
      id: newId(bob),
      type: "Add",
      actor: bob.uri,
      target: `${bob.uri}/featured_collections`,
      object: { ...remoteCollection(bob, 3, []), attributedTo: carol.uri },
    });
    await deliver(bob, {
      id: newId(bob),
      type: "Add",
      actor: bob.uri,
      target: `${bob.uri}/featured_collections`,
      object: { ...remoteCollection(bob, 4, []), id: "https://other.example/collections/4" },
    });
    const forged = await deliver(bob, {
      id: "https://other.example/feature_requests/1",
      type: "FeatureRequest",
      actor: bob.uri,
      object: `${ORIGIN}/users/alice`,
      instrument: col.id,
    });
    expect(kinds(forged.jobs)).toEqual([]);
    expect((await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections.map((c: any) => c.uri)).toEqual([col.id]);

    // Another collection, deleted by a Delete naming it by id alone (read in the Delete's one batch with the status): gone.
    const other = remoteCollection(bob, 9, []);
    await deliver(bob, { id: newId(bob), type: "Add", actor: bob.uri, target: `${bob.uri}/featured_collections`, object: other });
    expect((await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections.map((c: any) => c.uri)).toEqual([other.id, col.id]);
    await deliver(bob, { id: `${other.id}#delete`, type: "Delete", actor: bob.uri, to: [AS_PUBLIC], object: other.id });
    expect((await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections.map((c: any) => c.uri)).toEqual([col.id]);

    // Removed from bob's featured collections: gone.
    await deliver(bob, { id: newId(bob), type: "Remove", actor: bob.uri, target: `${bob.uri}/featured_collections`, object: col.id });
    expect((await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections).toEqual([]);
    expect((await sql("SELECT count(*) AS n FROM collection_items WHERE collection_id = ?", stored.id.padStart(20, "0")))[0]!.n).toBe(0);
  });

  it("a remote account's collections are read from its featuredCollections when its profile's collections are asked for", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob6", "remote.example", { docPatch: { featuredCollections: "https://remote.example/users/bob6/featured_collections" } });
    const col = remoteCollection(bob, 7, []);
    serveJson("remote.example", "/users/bob6/featured_collections", {
      id: "https://remote.example/users/bob6/featured_collections",
      type: "Collection",
      totalItems: 1,
      items: [col],
    });
    const bobId = await known(alice, bob);
    expect((await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections).toEqual([]);
    const db = createDb(env.DB);
    while (queued.jobs.length) await runJob(db, env, queued.jobs.shift()!);
    expect((await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections.map((c: any) => [c.uri, c.name])).toEqual([
      [col.id, "Collection 7"],
    ]);
  });

  it("a consent its server cannot show now (5xx) is tried once more by one job; a missing one (404) is not", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob7");
    const erin = await remoteActor("erin", "flaky.example", { docPatch: canFeaturePublic });
    const gil = await remoteActor("gil", "flaky.example", { docPatch: canFeaturePublic });
    const col = remoteCollection(bob, 8, [
      [erin.uri, `${erin.uri}/feature_authorizations/1`],
      [gil.uri, `${gil.uri}/feature_authorizations/1`],
    ]);
    serveJson("remote.example", "/users/bob7/collections/8", col);
    // erin's server fails once, then answers; gil's never had such an authorization.
    fetchMock.get("https://flaky.example").intercept({ path: "/users/erin/feature_authorizations/1" }).reply(503, "busy");
    serveJson("flaky.example", "/users/erin/feature_authorizations/1", {
      id: `${erin.uri}/feature_authorizations/1`,
      type: "FeatureAuthorization",
      interactionTarget: erin.uri,
      interactingObject: col.id,
    });
    fetchMock.get("https://flaky.example").intercept({ path: "/users/gil/feature_authorizations/1" }).reply(404, "").persist();
    await postInbox(bob, { id: newId(bob), type: "Add", actor: bob.uri, target: `${bob.uri}/featured_collections`, object: col });
    const db = createDb(env.DB);
    // The inbox's own pass: nothing proven, one collection_verify job left.
    const first = queued.jobs.splice(0);
    for (const j of first.filter((j) => !unpack(j).some((e) => e.type === "collection_verify"))) await runJob(db, env, j);
    const verify = [...first, ...queued.jobs.splice(0)].filter((j) => unpack(j).some((e) => e.type === "collection_verify"));
    const bobId = String(BigInt((await sql("SELECT id FROM accounts WHERE uri = ?", bob.uri))[0]!.id as string));
    expect((await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections[0].item_count).toBe(0);
    expect(verify).toHaveLength(1);
    // The job proves erin's; gil's stays out, and the job queues no other.
    for (const j of verify) await runJob(db, env, j);
    expect(queued.jobs.filter((j) => unpack(j).some((e) => e.type === "collection_verify"))).toEqual([]);
    const [shown] = (await alice.api.get(`/api/v1/accounts/${bobId}/collections`)).body.collections;
    expect(shown.item_count).toBe(1);
    const withAccounts = (await alice.api.get(`/api/v1/collections/${shown.id}`)).body;
    expect(withAccounts.accounts.map((a: any) => a.acct)).toEqual(["bob7@remote.example", "erin@flaky.example"]);
  });
});
