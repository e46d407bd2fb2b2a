// What other servers read of a local profile and of the instance actor (issue "federation, third round", points 4
// and 5): hashtags in a bio and in profile fields link to this server by absolute URL, in the API and in the actor
// document (a relative link pointed at the reader's own server on Hollo, and GoToSocial dropped it), the actor lists
// them in `tag` as Mastodon does, a bio stored with relative links by an earlier version is served absolute, and the
// instance actor has an empty featured collection (GoToSocial dereferences `featured` on every actor it loads).
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";

const AP = { accept: "application/activity+json" };

async function apGet(path: string): Promise<{ status: number; body: any }> {
  const res = await SELF.fetch(`${ORIGIN}${path}`, { headers: AP });
  return { status: res.status, body: await res.json() };
}

describe("hashtags in a local profile", () => {
  it("link to this server by absolute URL in the API and the actor, and the actor lists them in `tag`", async () => {
    const u = await makeUser("taggy");
    const form = new FormData();
    form.append("note", "Into #Cats and #café, not #cats twice");
    form.append("fields_attributes[0][name]", "Likes");
    form.append("fields_attributes[0][value]", "#Dogs");
    expect((await u.api.patch("/api/v1/accounts/update_credentials", form, "multipart")).status).toBe(200);

    const me = (await u.api.get("/api/v1/accounts/verify_credentials")).body;
    expect(me.note).toContain(`href="${ORIGIN}/tags/cats"`);
    expect(me.note).toContain(`href="${ORIGIN}/tags/cafe"`);
    expect(me.note).not.toContain('href="/');
    expect(me.fields[0].value).toContain(`href="${ORIGIN}/tags/dogs"`);
    expect(me.source.note).toBe("Into #Cats and #café, not #cats twice");

    const actor = await apGet("/users/taggy");
    expect(actor.status).toBe(200);
    expect(actor.body.summary).toBe(me.note);
    expect(actor.body.attachment[0].value).toContain(`href="${ORIGIN}/tags/dogs"`);
    const hashtags = actor.body.tag.filter((t: { type: string }) => t.type === "Hashtag");
    expect(hashtags).toEqual([
      { type: "Hashtag", href: `${ORIGIN}/tags/cats`, name: "#cats" },
      { type: "Hashtag", href: `${ORIGIN}/tags/cafe`, name: "#cafe" },
      { type: "Hashtag", href: `${ORIGIN}/tags/dogs`, name: "#dogs" },
    ]);
  });

  it("a bio stored with relative links by an earlier version is served with absolute ones", async () => {
    const u = await makeUser("oldbio");
    const old = '<p>Old <a href="/tags/legacy" class="mention hashtag" rel="tag">#<span>legacy</span></a></p>';
    await env.DB.prepare("UPDATE accounts SET note = ?, note_source = ? WHERE id = ?").bind(old, "Old #legacy", u.id.padStart(20, "0")).run();
    const abs = `href="${ORIGIN}/tags/legacy"`;
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).body.note).toContain(abs);
    expect((await u.api.get(`/api/v1/accounts/${u.id}`)).body.note).toContain(abs);
    const actor = await apGet("/users/oldbio");
    expect(actor.body.summary).toContain(abs);
    expect(actor.body.summary).not.toContain('href="/tags');
  });
});

describe("the instance actor", () => {
  it("names an empty featured collection, served as an OrderedCollection", async () => {
    const actor = await apGet("/actor");
    expect(actor.status).toBe(200);
    expect(actor.body.featured).toBe(`${ORIGIN}/actor/collections/featured`);
    const featured = await apGet("/actor/collections/featured");
    expect(featured.status).toBe(200);
    expect(featured.body).toMatchObject({ id: `${ORIGIN}/actor/collections/featured`, type: "OrderedCollection", totalItems: 0, orderedItems: [] });
    expect(featured.body["@context"]).toBeTruthy();
  });
});
