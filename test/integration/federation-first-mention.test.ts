// Mentioning a remote account never seen here: the handle is resolved by WebFinger while posting (bounded in time,
// through the fetch guard), so the mention is linked and in the post's first delivery; what cannot be resolved stays
// plain text and the post still goes out.
import { fetchMock } from "../support/fetch-mock";
import { beforeAll, describe, expect, it } from "vitest";
import { makeUser } from "./helpers";
import { take } from "./federation-outbound-fixtures";

const HOST = "https://first.example";

function serveNewcomer(username: string) {
  const id = `${HOST}/users/${username}`;
  fetchMock
    .get(HOST)
    .intercept({ path: (p) => p.startsWith("/.well-known/webfinger") && p.includes(encodeURIComponent(`acct:${username}@first.example`)) })
    .reply(200, JSON.stringify({ subject: `acct:${username}@first.example`, links: [{ rel: "self", type: "application/activity+json", href: id }] }), {
      headers: { "content-type": "application/jrd+json" },
    });
  fetchMock
    .get(HOST)
    .intercept({ path: `/users/${username}` })
    .reply(
      200,
      JSON.stringify({
        "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
        id,
        type: "Person",
        preferredUsername: username,
        inbox: `${id}/inbox`,
        followers: `${id}/followers`,
        url: `${HOST}/@${username}`,
        publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----" },
      }),
      { headers: { "content-type": "application/activity+json" } },
    );
  return { id, inbox: `${id}/inbox` };
}

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});

describe("first-contact mentions", () => {
  it("resolves an unseen handle while posting: linked, listed in mentions, delivered to its inbox", async () => {
    const u = await makeUser();
    const newcomer = serveNewcomer("newcomer");
    const res = await u.api.post("/api/v1/statuses", { status: "hello @newcomer@first.example, welcome" });
    expect(res.status).toBe(200);
    expect(res.body.mentions).toEqual([expect.objectContaining({ username: "newcomer", acct: "newcomer@first.example", url: `${HOST}/@newcomer` })]);
    expect(res.body.content).toContain(`href="${HOST}/@newcomer"`);
    const [create] = await take("Create");
    expect(create?.inboxes).toContain(newcomer.inbox);
    expect(create?.activity.object.tag).toContainEqual({ type: "Mention", href: newcomer.id, name: "@newcomer@first.example" });
  });

  it("a handle that cannot be resolved stays plain text and the post goes out", async () => {
    const u = await makeUser();
    fetchMock
      .get(HOST)
      .intercept({ path: (p) => p.startsWith("/.well-known/webfinger") })
      .reply(404, "not here");
    const res = await u.api.post("/api/v1/statuses", { status: "hello @ghost@first.example" });
    expect(res.status).toBe(200);
    expect(res.body.mentions).toEqual([]);
    expect(res.body.content).toBe("<p>hello @ghost@first.example</p>");
    // A private address is never asked at all, and does not fail the post either.
    const local = await u.api.post("/api/v1/statuses", { status: "hi @x@127.0.0.1" });
    expect(local.status).toBe(200);
    expect(local.body.mentions).toEqual([]);
  });
});
