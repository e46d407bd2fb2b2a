// Quotes from servers that send no QuoteRequest (Misskey, Pleroma, Akkoma, Hollo before 0.9: `_misskey_quote`,
// `quoteUrl`, `quoteUri`, no FEP-044f `quote`), as Mastodon 4.5 and 4.6 take them: stored as a legacy quote, pending,
// shown as a quote only when accepted (a self-quote), otherwise as the content the sender wrote; where that content
// links the quoted post nowhere (Hollo), Tern appends Mastodon's `quote-inline` "RE:" link, so a reader always sees
// what is quoted. And quoting their posts, which carry no interactionPolicy, is refused as Mastodon refuses it.
import { beforeAll, describe, expect, it } from "vitest";
import { makeUser, type TestUser } from "./helpers";
import { create, deliver, installFetchMock, remoteActor, serveJson, sql, type RemoteActor } from "./federation-inbox-fixtures";
import { akkomaNote, holloNote, misskeyNote, pleromaNote, quotedNote, type Quoted } from "./legacy-quote-fixtures";
import { queued } from "./queues";

beforeAll(() => installFetchMock());

const QUOTED_NOT_FOUND = { error: "The post you are trying to quote does not appear to exist." };

async function statusIdOf(uri: string): Promise<string> {
  const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", uri);
  return String(BigInt(row!.id));
}

const shown = async (viewer: TestUser, uri: string) => (await viewer.api.get(`/api/v1/statuses/${await statusIdOf(uri)}`)).body;

/** The stored quote of the status at `uri`: legacy flag, state, and the quoted status's uri. */
async function quoteOf(uri: string) {
  const [row] = await sql(
    `SELECT q.legacy, q.state, qs.uri AS quoted FROM quotes q JOIN statuses s ON s.id = q.status_id
      LEFT JOIN statuses qs ON qs.id = q.quoted_status_id WHERE s.uri = ?`,
    uri,
  );
  return row && { legacy: !!row.legacy, state: row.state, quoted: row.quoted };
}

/** How many links in `html` point at `href`. */
const linksTo = (html: string, href: string) => html.split(`href="${href}"`).length - 1;

/** A post of `a` served at `path` on its host, for the quote to resolve; `extra` adds to the Note. */
function servedPost(a: RemoteActor, path: string, url?: string, extra: Record<string, unknown> = {}): Quoted {
  const id = `https://${a.host}${path}`;
  serveJson(a.host, path, quotedNote(a, id, url ?? id, extra));
  return { id, url: url ?? id };
}

describe("quotes from servers without quote requests", { timeout: 60000 }, () => {
  it("Misskey: `_misskey_quote` and `quoteUrl` make a pending legacy quote, shown as the RE: link Misskey writes", async () => {
    const alice = await makeUser("alice");
    const [mi, mj] = await Promise.all([remoteActor("9k1mi0000a", "misskey.example"), remoteActor("9k1mj0000b", "misskey.example")]);
    const quoted = servedPost(mj, "/notes/9k1qt0000c");
    const doc = misskeyNote(mi, quoted, "so true");
    await deliver(mi, create(mi, doc));

    expect(await quoteOf(doc.id)).toEqual({ legacy: true, state: "pending", quoted: quoted.id });
    const s = await shown(alice, doc.id);
    expect(s.quote).toBeNull();
    // Misskey's own "RE: <uri>" is the link; nothing is added.
    expect(s.content).toContain("RE: ");
    expect(linksTo(s.content, quoted.id)).toBe(1);
    expect(s.content).not.toContain("quote-inline");

    // A Misskey self-quote needs no approval: it is shown as a quote (Mastodon's fast track).
    const own = servedPost(mi, "/notes/9k1qt0000d");
    const self = misskeyNote(mi, own, "me again");
    await deliver(mi, create(mi, self));
    const selfShown = await shown(alice, self.id);
    expect(selfShown.quote.state).toBe("accepted");
    expect(selfShown.quote.quoted_status.uri).toBe(own.id);
  });

  it("Pleroma: `quoteUrl`, `quoteUri`, `_misskey_quote` and a Link tag; its quote-inline span with RT: is the link", async () => {
    const alice = await makeUser("alice");
    const [pl, pm] = await Promise.all([remoteActor("lain", "pleroma.example"), remoteActor("mint", "pleroma.example")]);
    const quoted = servedPost(pm, "/objects/0196a1b2-aaaa-7000-8000-000000000001");
    const doc = pleromaNote(pl, quoted, "agreed");
    await deliver(pl, create(pl, doc, { id: `https://pleroma.example/activities/${doc.id.split("/").pop()}` }));

    expect(await quoteOf(doc.id)).toEqual({ legacy: true, state: "pending", quoted: quoted.id });
    const s = await shown(alice, doc.id);
    expect(s.quote).toBeNull();
    expect(s.content).toContain('<span class="quote-inline">');
    expect(s.content).toContain("RT:");
    expect(linksTo(s.content, quoted.id)).toBe(1);
    expect(s.content).not.toContain('<p class="quote-inline">');
  });

  it("Akkoma: `quoteUri` and `quoteUrl`; its quote-inline span links the quoted post's page, not its id", async () => {
    const alice = await makeUser("alice");
    const ak = await remoteActor("kaniini", "akkoma.example");
    const carol = await remoteActor("carol", "mastodon.example");
    // A Mastodon 4.5 post anyone may quote: Akkoma still asks nobody, so the quote stays pending as on Mastodon.
    const quoted = servedPost(carol, "/users/carol/statuses/1134", "https://mastodon.example/@carol/1134", {
      interactionPolicy: { canQuote: { automaticApproval: ["https://www.w3.org/ns/activitystreams#Public"] } },
    });
    const doc = akkomaNote(ak, quoted, "look at this");
    await deliver(ak, create(ak, doc));

    expect(await quoteOf(doc.id)).toEqual({ legacy: true, state: "pending", quoted: quoted.id });
    const s = await shown(alice, doc.id);
    expect(s.quote).toBeNull();
    expect(linksTo(s.content, quoted.url)).toBe(1);
    expect(linksTo(s.content, quoted.id)).toBe(0);
    expect(s.content).not.toContain('<p class="quote-inline">');

    // The same when the quoted post cannot be fetched: the sender's span is the fallback, whatever it links.
    const gone = akkomaNote(ak, { id: "https://mastodon.example/users/carol/statuses/404", url: "https://mastodon.example/@carol/404" }, "lost");
    await deliver(ak, create(ak, gone));
    expect(await quoteOf(gone.id)).toEqual({ legacy: true, state: "pending", quoted: null });
    expect((await shown(alice, gone.id)).content).not.toContain('<p class="quote-inline">');
  });

  it("A Hollo quote shows what it quotes on Tern", async () => {
    const alice = await makeUser("alice");
    const hollo = await remoteActor("hong", "hollo.example");
    const carol = await remoteActor("carol", "mastodon.example");
    const quoted = servedPost(carol, "/users/carol/statuses/2001", "https://mastodon.example/@carol/2001");
    const doc = holloNote(hollo, quoted, "This is so true.");
    await deliver(hollo, create(hollo, doc, { id: `${doc.id}#create` }));

    expect(await quoteOf(doc.id)).toEqual({ legacy: true, state: "pending", quoted: quoted.id });
    const s = await shown(alice, doc.id);
    // Not shown as a quote (nobody approved it, as on Mastodon), but the content links the quoted post's page, after
    // Hollo's text, in Mastodon's fallback paragraph.
    expect(s.quote).toBeNull();
    expect(s.content).toMatch(/^<p>This is so true\.<\/p>\s*<p class="quote-inline">RE: <a href="https:\/\/mastodon\.example\/@carol\/2001"/);
    expect(linksTo(s.content, quoted.url)).toBe(1);
    expect(s.edited_at).toBeNull();

    // An Update that changes nothing is no edit; one that does keeps the link, once.
    const later = (ms: number) => new Date(Date.now() + ms).toISOString();
    await deliver(hollo, { id: `${doc.id}#update-1`, type: "Update", actor: hollo.uri, object: { ...doc, updated: later(1000) } });
    const same = await shown(alice, doc.id);
    expect(same.edited_at).toBeNull();
    expect(same.content).toBe(s.content);
    const edited = holloNote(hollo, quoted, "This is so very true.", doc.id);
    await deliver(hollo, { id: `${doc.id}#update-2`, type: "Update", actor: hollo.uri, object: { ...edited, updated: later(2000) } });
    const after = await shown(alice, doc.id);
    expect(after.edited_at).not.toBeNull();
    expect(after.content).toContain("This is so very true.");
    expect(linksTo(after.content, quoted.url)).toBe(1);

    // A quoted post that cannot be fetched is linked by the IRI Hollo gave.
    const lost = holloNote(hollo, { id: "https://mastodon.example/users/carol/statuses/404", url: "" }, "Gone now.");
    await deliver(hollo, create(hollo, lost, { id: `${lost.id}#create` }));
    expect(await quoteOf(lost.id)).toEqual({ legacy: true, state: "pending", quoted: null });
    expect(linksTo((await shown(alice, lost.id)).content, "https://mastodon.example/users/carol/statuses/404")).toBe(1);
  });

  it("their posts carry no interactionPolicy: quoting them is refused as Mastodon refuses it, and no QuoteRequest goes out", async () => {
    const alice = await makeUser("alice");
    const hollo = await remoteActor("hong", "hollo.example");
    const mi = await remoteActor("9k1mi0000a", "misskey.example");
    for (const [a, path] of [
      [hollo, "/@hong/0196a1b2-bbbb-7000-8000-000000000002"],
      [mi, "/notes/9k1qt0000e"],
    ] as const) {
      const post = quotedNote(a, `https://${a.host}${path}`);
      await deliver(a, create(a, post));
      const id = await statusIdOf(post.id);
      expect((await alice.api.get(`/api/v1/statuses/${id}`)).body.quote_approval).toEqual({ automatic: [], manual: [], current_user: "denied" });
      queued.jobs.length = 0;
      const res = await alice.api.post("/api/v1/statuses", { status: "quoting", quoted_status_id: id });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(QUOTED_NOT_FOUND);
      expect(queued.jobs).toEqual([]);
    }
  });
});
