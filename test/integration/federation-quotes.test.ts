// Quote posts over ActivityPub (FEP-044f as Mastodon 4.5 federates them): the Note's quote properties and
// interactionPolicy, our QuoteRequest and its Accept / Reject, a remote QuoteRequest for a local status answered with a
// QuoteAuthorization (served at its id), a verified authorization on an incoming Note, and revocation both ways.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { JobMessage } from "../../src/effects/types";
import { makeUser, ORIGIN } from "./helpers";
import { AS_PUBLIC, create, deliver, installFetchMock, newId, note, remoteActor, serveJson, sql, type RemoteActor } from "./federation-inbox-fixtures";
import { take } from "./federation-outbound-fixtures";
import { queued, unpack } from "./queues";

beforeAll(() => installFetchMock());

const AP = { accept: "application/activity+json" };
const canQuotePublic = { interactionPolicy: { canQuote: { automaticApproval: [AS_PUBLIC] } } };
const kinds = (jobs: JobMessage[]) => jobs.flatMap(unpack).flatMap((e) => (e.type === "federate" ? [e.action.kind] : []));

async function statusIdOf(uri: string): Promise<string> {
  const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", uri);
  return String(BigInt(row!.id));
}

/** Runs the jobs given and those queued; answers the activities stored for delivery, with their inboxes. */
const sent = (jobs: JobMessage[] = []) => take(undefined, jobs);

async function remotePost(bob: RemoteActor, extra: Record<string, unknown> = {}) {
  const n = note(bob, { ...canQuotePublic, ...extra });
  await deliver(bob, create(bob, n));
  return { uri: n.id as string, id: await statusIdOf(n.id as string) };
}

describe("quote posts over ActivityPub", { timeout: 60000 }, () => {
  it("a local Note quoting a local status carries quote, _misskey_quote, quoteUri, quoteAuthorization and canQuote", async () => {
    const [alice, bob] = await Promise.all([makeUser("alice"), makeUser("bob")]);
    const orig = (await alice.api.post("/api/v1/statuses", { status: "orig", quote_approval_policy: "followers" })).body;
    await bob.api.post(`/api/v1/accounts/${alice.id}/follow`);
    const q = (await bob.api.post("/api/v1/statuses", { status: "quoting", quoted_status_id: orig.id })).body;
    const doc = await (await SELF.fetch(`${ORIGIN}/users/bob/statuses/${q.id}`, { headers: AP })).json<any>();
    expect(doc.quote).toBe(orig.uri);
    expect(doc._misskey_quote).toBe(orig.uri);
    expect(doc.quoteUri).toBe(orig.uri);
    expect(doc.quoteAuthorization).toMatch(new RegExp(`^${ORIGIN}/users/alice/quote_authorizations/\\d+$`));
    expect(doc.interactionPolicy).toEqual({ canQuote: { automaticApproval: [AS_PUBLIC] } });
    const ctx = doc["@context"][1];
    expect(ctx.quote).toEqual({ "@id": "https://w3id.org/fep/044f#quote", "@type": "@id" });
    const origDoc = await (await SELF.fetch(`${ORIGIN}/users/alice/statuses/${orig.id}`, { headers: AP })).json<any>();
    expect(origDoc.interactionPolicy).toEqual({ canQuote: { automaticApproval: [`${ORIGIN}/users/alice/followers`] } });
    expect(origDoc.quote).toBeUndefined();

    // The stamp is served at its id; it names both statuses and the quoted author.
    const stamp = await SELF.fetch(doc.quoteAuthorization, { headers: AP });
    expect(stamp.status).toBe(200);
    expect(await stamp.json()).toMatchObject({
      id: doc.quoteAuthorization,
      type: "QuoteAuthorization",
      attributedTo: `${ORIGIN}/users/alice`,
      interactingObject: doc.id,
      interactionTarget: orig.uri,
    });
  });

  it("a quote of a remote status asks with a QuoteRequest; the author's Accept authorizes it, a Delete revokes it", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const target = await remotePost(bob);
    expect((await alice.api.get(`/api/v1/statuses/${target.id}`)).body.quote_approval).toEqual({
      automatic: ["public"],
      manual: [],
      current_user: "automatic",
    });

    const q = await alice.api.post("/api/v1/statuses", { status: "quoting bob", quoted_status_id: target.id });
    expect(q.status).toBe(200);
    expect(q.body.quote).toEqual({ state: "pending", quoted_status: null });
    expect(kinds(queued.jobs)).toEqual(["create", "quote_request"]);
    const out = await sent();
    const request = out.find((o) => o.activity.type === "QuoteRequest")!;
    expect(request.inboxes).toEqual([bob.inbox]);
    expect(request.activity).toMatchObject({ type: "QuoteRequest", actor: `${ORIGIN}/users/alice`, object: target.uri });
    expect(request.activity.id).toMatch(new RegExp(`^${ORIGIN}/users/alice/quote_requests/`));
    expect(request.activity.instrument).toMatchObject({ id: q.body.uri, quote: target.uri, _misskey_quote: target.uri, quoteUri: target.uri });
    expect(request.activity.instrument.quoteAuthorization).toBeUndefined();
    // The Create reaches the quoted author's server too.
    expect(out.find((o) => o.activity.type === "Create")!.inboxes).toContain("https://remote.example/inbox");

    // An Accept from someone else, or with a stamp on another host, is ignored.
    const eve = await remoteActor("eve", "evil.example");
    await deliver(eve, { id: newId(eve), type: "Accept", actor: eve.uri, object: request.activity.id, result: `${eve.uri}/stamp` });
    await deliver(bob, { id: newId(bob), type: "Accept", actor: bob.uri, object: request.activity.id, result: "https://evil.example/stamp" });
    expect((await alice.api.get(`/api/v1/statuses/${q.body.id}`)).body.quote.state).toBe("pending");

    const stamp = `${bob.uri}/quote_authorizations/7`;
    const acc = await deliver(bob, {
      id: newId(bob),
      type: "Accept",
      actor: bob.uri,
      object: { id: request.activity.id, type: "QuoteRequest", actor: `${ORIGIN}/users/alice`, object: target.uri, instrument: q.body.uri },
      result: stamp,
    });
    expect(kinds(acc.jobs)).toContain("update_status");
    const after = (await alice.api.get(`/api/v1/statuses/${q.body.id}`)).body;
    expect(after.quote.state).toBe("accepted");
    expect(after.quote.quoted_status.id).toBe(target.id);
    expect((await alice.api.get(`/api/v1/statuses/${target.id}`)).body.quotes_count).toBe(1);
    const update = (await sent(acc.jobs)).find((o) => o.activity.type === "Update")!;
    expect(update.activity.object.quoteAuthorization).toBe(stamp);

    // bob withdraws the stamp.
    await deliver(bob, { id: `${stamp}#delete`, type: "Delete", actor: bob.uri, to: [AS_PUBLIC], object: stamp });
    expect((await alice.api.get(`/api/v1/statuses/${q.body.id}`)).body.quote).toEqual({ state: "revoked", quoted_status: null });
    expect((await alice.api.get(`/api/v1/statuses/${target.id}`)).body.quotes_count).toBe(0);
  });

  it("a Reject of our QuoteRequest rejects the quote", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const target = await remotePost(bob);
    const q = (await alice.api.post("/api/v1/statuses", { status: "quoting", quoted_status_id: target.id })).body;
    const request = (await sent()).find((o) => o.activity.type === "QuoteRequest")!;
    await deliver(bob, { id: newId(bob), type: "Reject", actor: bob.uri, object: request.activity });
    expect((await alice.api.get(`/api/v1/statuses/${q.id}`)).body.quote).toEqual({ state: "rejected", quoted_status: null });
  });

  it("a remote QuoteRequest for a local status is accepted with a QuoteAuthorization; revoking deletes it", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const orig = (await alice.api.post("/api/v1/statuses", { status: "quote me" })).body;
    const quoting = note(bob, { quote: orig.uri, content: "<p>RE: quoting alice</p>" });
    await deliver(bob, create(bob, quoting));
    const qid = await statusIdOf(quoting.id as string);
    expect((await alice.api.get(`/api/v1/statuses/${qid}`)).body.quote).toEqual({ state: "pending", quoted_status: null });

    const requestId = `${bob.uri}/quote_requests/1`;
    const r = await deliver(bob, {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: requestId,
      type: "QuoteRequest",
      actor: bob.uri,
      object: orig.uri,
      instrument: quoting.id,
    });
    expect(kinds(r.jobs)).toEqual(["accept_quote_request"]);
    const shown = (await alice.api.get(`/api/v1/statuses/${qid}`)).body;
    expect(shown.quote.state).toBe("accepted");
    expect(shown.quote.quoted_status.id).toBe(orig.id);
    const notes = await alice.api.get("/api/v1/notifications");
    expect(notes.body.map((n: any) => [n.type, n.account.acct, n.status?.id])).toEqual([["quote", "bob@remote.example", qid]]);

    const [accept] = await sent(r.jobs);
    expect(accept!.inboxes).toEqual([bob.inbox]);
    expect(accept!.activity).toMatchObject({
      type: "Accept",
      actor: `${ORIGIN}/users/alice`,
      object: { type: "QuoteRequest", id: requestId, actor: bob.uri, object: orig.uri, instrument: quoting.id },
    });
    const stampUri = accept!.activity.result as string;
    const stamp = await SELF.fetch(stampUri, { headers: AP });
    expect(await stamp.json()).toMatchObject({ type: "QuoteAuthorization", interactingObject: quoting.id, interactionTarget: orig.uri });

    const rev = await alice.api.post(`/api/v1/statuses/${orig.id}/quotes/${qid}/revoke`);
    expect(rev.body.quote.state).toBe("revoked");
    const [del] = await sent();
    expect(del!.activity).toEqual({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${stampUri}#delete`,
      type: "Delete",
      actor: `${ORIGIN}/users/alice`,
      to: [AS_PUBLIC],
      object: stampUri,
    });
    expect(del!.inboxes).toEqual(["https://remote.example/inbox"]);
    expect((await SELF.fetch(stampUri, { headers: AP })).status).toBe(404);
  });

  it("a QuoteRequest the policy forbids is rejected; an inlined instrument is taken from the request", async () => {
    const alice = await makeUser("alice");
    const bob = await remoteActor("bob");
    const closed = (await alice.api.post("/api/v1/statuses", { status: "no quotes", quote_approval_policy: "nobody" })).body;
    await sent();
    const n1 = note(bob, { quote: closed.uri });
    const r1 = await deliver(bob, { id: `${bob.uri}/quote_requests/2`, type: "QuoteRequest", actor: bob.uri, object: closed.uri, instrument: n1 });
    expect(kinds(r1.jobs)).toEqual(["reject_quote_request"]);
    const [reject] = await sent(r1.jobs);
    expect(reject!.activity).toMatchObject({
      type: "Reject",
      actor: `${ORIGIN}/users/alice`,
      object: { type: "QuoteRequest", id: `${bob.uri}/quote_requests/2`, instrument: n1.id },
    });

    const open = (await alice.api.post("/api/v1/statuses", { status: "quote away" })).body;
    await sent();
    const n2 = note(bob, { quote: open.uri });
    const r2 = await deliver(bob, { id: `${bob.uri}/quote_requests/3`, type: "QuoteRequest", actor: bob.uri, object: open.uri, instrument: n2 });
    expect(kinds(r2.jobs)).toEqual(["accept_quote_request"]);
    expect((await alice.api.get(`/api/v1/statuses/${await statusIdOf(n2.id as string)}`)).body.quote.state).toBe("accepted");
  });

  it("an incoming quote of a remote status is accepted only with a matching QuoteAuthorization from the quoted host", async () => {
    const alice = await makeUser("alice");
    const carol = await remoteActor("carol", "other.example");
    const bob = await remoteActor("bob");
    const quoted = await remotePost(carol);
    const good = note(bob, { quote: quoted.uri, quoteAuthorization: `${carol.uri}/stamps/1` });
    serveJson("other.example", "/users/carol/stamps/1", {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${carol.uri}/stamps/1`,
      type: "QuoteAuthorization",
      attributedTo: carol.uri,
      interactingObject: good.id,
      interactionTarget: quoted.uri,
    });
    await deliver(bob, create(bob, good));
    const shown = (await alice.api.get(`/api/v1/statuses/${await statusIdOf(good.id as string)}`)).body;
    expect(shown.quote.state).toBe("accepted");
    expect(shown.quote.quoted_status.id).toBe(quoted.id);

    // The same stamp does not authorize another Note; a stamp on bob's own host is not carol's.
    const forged = note(bob, { quote: quoted.uri, quoteAuthorization: `${carol.uri}/stamps/1` });
    await deliver(bob, create(bob, forged));
    expect((await alice.api.get(`/api/v1/statuses/${await statusIdOf(forged.id as string)}`)).body.quote.state).toBe("pending");
    // An Update carrying a stamp made for it accepts the pending quote.
    serveJson("other.example", "/users/carol/stamps/2", {
      id: `${carol.uri}/stamps/2`,
      type: "QuoteAuthorization",
      attributedTo: carol.uri,
      interactingObject: forged.id,
      interactionTarget: quoted.uri,
    });
    const stamped = { ...forged, quoteAuthorization: `${carol.uri}/stamps/2`, updated: new Date(Date.now() + 1000).toISOString() };
    await deliver(bob, { id: `${forged.id}#updates/1`, type: "Update", actor: bob.uri, object: stamped });
    expect((await alice.api.get(`/api/v1/statuses/${await statusIdOf(forged.id as string)}`)).body.quote.state).toBe("accepted");
    const own = note(bob, { quote: quoted.uri, quoteAuthorization: `${bob.uri}/stamps/1` });
    await deliver(bob, create(bob, own));
    expect((await alice.api.get(`/api/v1/statuses/${await statusIdOf(own.id as string)}`)).body.quote.state).toBe("pending");

    // A self-quote needs no stamp; a Misskey-style quote (no FEP-044f `quote`) is not shown until accepted.
    const self = note(carol, { quote: quoted.uri });
    await deliver(carol, create(carol, self));
    expect((await alice.api.get(`/api/v1/statuses/${await statusIdOf(self.id as string)}`)).body.quote.state).toBe("accepted");
    const legacy = note(bob, { _misskey_quote: quoted.uri });
    await deliver(bob, create(bob, legacy));
    expect((await alice.api.get(`/api/v1/statuses/${await statusIdOf(legacy.id as string)}`)).body.quote).toBeNull();
  });
});
