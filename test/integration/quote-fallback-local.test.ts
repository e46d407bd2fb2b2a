// A local quote post's content carries Mastodon's `quote-inline` fallback (TextFormatter#add_quote_fallback): a
// "RE:" link to the quoted post's page, first, in the API and in the Note other servers read, so readers without
// quote support still see what is quoted; not when the text already links the quoted post, and no more once the quote
// is withdrawn.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";

async function note(uri: string): Promise<{ content: string; contentMap?: Record<string, string> }> {
  const res = await SELF.fetch(uri, { headers: { accept: "application/activity+json" } });
  expect(res.status).toBe(200);
  return res.json();
}

describe("the quote-inline fallback of a local quote post", () => {
  it("links the quoted post first, in the API and the Note, unless the text links it; gone once revoked", async () => {
    const alice = await makeUser("quotedann");
    const bob = await makeUser("quotingbob");
    const orig = (await alice.api.post("/api/v1/statuses", { status: "the original" })).body;
    const page = `${ORIGIN}/@quotedann/${orig.id}`;
    expect(orig.url).toBe(page);

    const q = (await bob.api.post("/api/v1/statuses", { status: "look at this", quoted_status_id: orig.id })).body;
    const fallback = `<p class="quote-inline">RE: <a href="${page}"`;
    expect(q.content.startsWith(fallback)).toBe(true);
    expect(q.content.endsWith("<p>look at this</p>")).toBe(true);
    expect((await bob.api.get(`/api/v1/statuses/${q.id}`)).body.content).toBe(q.content);
    const n = await note(q.uri);
    expect(n.content).toBe(q.content);

    // A text that links the quoted post already gets no second link.
    const linked = (await bob.api.post("/api/v1/statuses", { status: `see ${page}`, quoted_status_id: orig.id })).body;
    expect(linked.content).not.toContain("quote-inline");

    // The quoted author withdraws the quote: the link goes with it.
    expect((await alice.api.post(`/api/v1/statuses/${orig.id}/quotes/${q.id}/revoke`)).status).toBe(200);
    expect((await bob.api.get(`/api/v1/statuses/${q.id}`)).body.content).toBe("<p>look at this</p>");
    expect((await note(q.uri)).content).toBe("<p>look at this</p>");
  });
});
