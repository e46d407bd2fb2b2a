// Preview cards: the first link of a status is fetched after the response (a fetch_card effect run by the JOBS
// consumer's code), through the SSRF guard, and the card appears on the status wherever it is rendered. Pages are
// served by fetchMock; security D10 (hostile OpenGraph / oEmbed), D1/D2 (private addresses) and E8 (card HTML).
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { create, deliver, note, remoteActor } from "./federation-inbox-fixtures";
import { anon, eventually, makeUser } from "./helpers";
import { queued, unpack } from "./queues";

const NEWS = "https://news.example";
const HTML = { headers: { "content-type": "text/html; charset=utf-8" } };
const JSON_TYPE = { headers: { "content-type": "application/json" } };

function page(head: string, body = "<p>hello</p>") {
  return `<!doctype html><html lang="en-GB"><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;
}

const ARTICLE_HEAD = [
  "<title>Fallback &amp; title</title>",
  '<meta property="og:title" content="Cats &amp; Dogs &#8212; a study">',
  '<meta property="og:description" content="All about   pets.">',
  '<meta property="og:image" content="/img/cat.jpg">',
  '<meta property="og:image:alt" content="A cat">',
  '<meta property="og:type" content="article">',
  '<meta property="og:site_name" content="News Example">',
  '<meta property="article:published_time" content="2024-05-01T10:00:00Z">',
  `<link rel="canonical" href="${NEWS}/articles/cats">`,
].join("");

let fetchSpy: MockInstance<typeof fetch>;
const fetchedUrls = () => fetchSpy.mock.calls.map(([input]) => (input instanceof Request ? input.url : String(input)));

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
beforeEach(() => {
  fetchSpy = vi.spyOn(globalThis, "fetch");
});
afterEach(() => {
  fetchSpy.mockRestore();
  fetchMock.assertNoPendingInterceptors();
});

const serve = (path: string, body: string, opts: { headers: Record<string, string> } = HTML, status = 200) =>
  fetchMock.get(NEWS).intercept({ path }).reply(status, body, opts);

async function cardOf(api: { get: (p: string) => Promise<{ body: any }> }, id: string): Promise<any> {
  return (await api.get(`/api/v1/statuses/${id}`)).body.card;
}

describe("preview cards of local statuses", () => {
  it("fetches the first link's OpenGraph card after the response and shows it on the status", async () => {
    const u = await makeUser();
    serve("/article?ref=1", page(ARTICLE_HEAD));
    const posted = await u.api.post("/api/v1/statuses", { status: `#news @nobody read ${NEWS}/article?ref=1 and https://other.example/x` });
    expect(posted.status).toBe(200);
    // As on Mastodon, the card is not there yet when the post is answered.
    expect(posted.body.card).toBeNull();
    const effects = queued.jobs.flatMap(unpack).map((e) => e.type);
    expect(effects).toContain("fetch_card");

    const card = await eventually(async () => {
      const c = await cardOf(u.api, posted.body.id);
      expect(c).not.toBeNull();
      return c as Record<string, unknown>;
    });
    expect(card).toEqual({
      url: `${NEWS}/article?ref=1`,
      title: "Cats & Dogs — a study",
      description: "All about pets.",
      language: "en",
      type: "link",
      author_name: "",
      author_url: "",
      provider_name: "News Example",
      provider_url: "",
      html: "",
      width: 0,
      height: 0,
      image: `${NEWS}/img/cat.jpg`,
      image_description: "A cat",
      embed_url: "",
      blurhash: null,
      published_at: "2024-05-01T10:00:00.000Z",
      authors: [],
    });
    expect(fetchedUrls()).toEqual([`${NEWS}/article?ref=1`]);
    // Stored once under the page's canonical URL; signed-out readers and timelines see it too.
    const row = await env.DB.prepare("SELECT url, link_type FROM preview_cards").all();
    expect(row.results).toEqual([{ url: `${NEWS}/articles/cats`, link_type: "article" }]);
    expect((await cardOf(anon, posted.body.id)) as any).toMatchObject({ title: "Cats & Dogs — a study" });
    const home = await u.api.get("/api/v1/timelines/home");
    expect(home.body[0].card).toMatchObject({ url: `${NEWS}/article?ref=1` });

    // A boost carries the card inside its reblog, not on itself.
    const other = await makeUser();
    const boost = await other.api.post(`/api/v1/statuses/${posted.body.id}/reblog`);
    expect(boost.body.card).toBeNull();
    expect(boost.body.reblog.card).toMatchObject({ title: "Cats & Dogs — a study" });
  });

  it("reuses a stored card for the same link without fetching it again", async () => {
    const u = await makeUser();
    serve("/same", page(ARTICLE_HEAD.replace(`${NEWS}/articles/cats`, `${NEWS}/same`)));
    const first = await u.api.post("/api/v1/statuses", { status: `${NEWS}/same` });
    await eventually(async () => expect(await cardOf(u.api, first.body.id)).not.toBeNull());
    fetchSpy.mockClear();
    const second = await u.api.post("/api/v1/statuses", { status: `again: ${NEWS}/same` });
    const card = await eventually(async () => {
      const c = await cardOf(u.api, second.body.id);
      expect(c).not.toBeNull();
      return c as any;
    });
    expect(card.title).toBe("Cats & Dogs — a study");
    expect(fetchSpy).not.toHaveBeenCalled();
    expect((await env.DB.prepare("SELECT count(*) AS n FROM preview_cards").first())!.n).toBe(1);
  });

  it("gives no card and makes no request for links to private or internal addresses (D1, D2)", async () => {
    const u = await makeUser();
    const ids: string[] = [];
    for (const link of [
      "http://10.0.0.1/admin",
      "http://127.0.0.1:8080/",
      "http://localhost/secret",
      "http://169.254.169.254/latest/meta-data",
      "https://example.com@10.0.0.2/",
      "http://[::1]/",
    ]) {
      const res = await u.api.post("/api/v1/statuses", { status: `look ${link}` });
      expect(res.status).toBe(200);
      ids.push(res.body.id);
    }
    await eventually(() => expect(queued.jobs).toHaveLength(0));
    for (const id of ids) expect(await cardOf(u.api, id)).toBeNull();
    expect(fetchSpy).not.toHaveBeenCalled();
    expect((await env.DB.prepare("SELECT count(*) AS n FROM status_preview_cards").first())!.n).toBe(0);
  });

  it("skips links to this server and posts without links record no fetch", async () => {
    const u = await makeUser();
    const own = await u.api.post("/api/v1/statuses", { status: "see http://tern.test/@someone and #tags" });
    expect(queued.jobs.flatMap(unpack).some((e) => e.type === "fetch_card")).toBe(false);
    await eventually(() => expect(queued.jobs).toHaveLength(0));
    expect(await cardOf(u.api, own.body.id)).toBeNull();
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("follows a redirect to the page and refuses one to a private address (D3)", async () => {
    const u = await makeUser();
    serve("/short", "", { headers: { location: `${NEWS}/long` } }, 301);
    serve("/long", page('<meta property="og:title" content="Long read">'));
    fetchMock
      .get("https://short.example")
      .intercept({ path: "/x" })
      .reply(302, "", { headers: { location: "http://192.168.1.1/" } });
    const ok = await u.api.post("/api/v1/statuses", { status: `${NEWS}/short` });
    const bad = await u.api.post("/api/v1/statuses", { status: "https://short.example/x" });
    await eventually(async () => expect(await cardOf(u.api, ok.body.id)).toMatchObject({ url: `${NEWS}/short`, title: "Long read" }));
    expect(await cardOf(u.api, bad.body.id)).toBeNull();
    expect(fetchedUrls()).not.toContain("http://192.168.1.1/");
    // Stored under where the page was found.
    expect((await env.DB.prepare("SELECT url FROM preview_cards").all()).results).toEqual([{ url: `${NEWS}/long` }]);
  });

  it("reads only HTML, and at most 1 MB of it: a huge page still gives its head's card", async () => {
    const u = await makeUser();
    serve("/video.mp4", "x".repeat(2048), { headers: { "content-type": "video/mp4" } });
    serve("/notfound", page('<meta property="og:title" content="Gone">'), HTML, 404);
    serve("/huge", page('<meta property="og:title" content="Huge page">', "y".repeat(3 * 1024 * 1024)));
    const a = await u.api.post("/api/v1/statuses", { status: `${NEWS}/video.mp4` });
    const b = await u.api.post("/api/v1/statuses", { status: `${NEWS}/notfound` });
    const c = await u.api.post("/api/v1/statuses", { status: `${NEWS}/huge` });
    await eventually(async () => expect(await cardOf(u.api, c.body.id)).toMatchObject({ title: "Huge page" }));
    expect(await cardOf(u.api, a.body.id)).toBeNull();
    expect(await cardOf(u.api, b.body.id)).toBeNull();
  });

  it("drops scripts and javascript: images from hostile pages; oEmbed video keeps only a rebuilt iframe (D10, E8)", async () => {
    const u = await makeUser();
    serve(
      "/hostile",
      page(
        [
          "<title><script>alert(1)</script>Title</title>",
          '<meta property="og:title" content="<script>alert(1)</script>">',
          '<meta property="og:image" content="javascript:alert(1)">',
          '<meta property="og:description" content="&lt;img src=x onerror=alert(1)&gt;">',
        ].join(""),
      ),
    );
    serve(
      "/watch",
      page(
        `<meta property="og:title" content="A video"><meta property="og:description" content="Moving pictures"><link rel="alternate" type="application/json+oembed" href="/oembed?url=watch">`,
      ),
    );
    serve(
      "/oembed?url=watch",
      JSON.stringify({
        version: "1.0",
        type: "video",
        title: "The video",
        provider_name: "Tube",
        provider_url: "/",
        author_name: "Filmer",
        author_url: "https://news.example/@filmer",
        thumbnail_url: "https://cdn.news.example/t.jpg",
        width: 640,
        height: 360,
        html: '<script src="https://evil.example/x.js"></script><iframe src="https://player.news.example/embed/1" onload="alert(1)" width="640" height="360" srcdoc="<script>x</script>"></iframe>',
      }),
      JSON_TYPE,
    );
    serve("/rich", page('<meta property="og:title" content="Rich page"><link rel="alternate" type="application/json+oembed" href="/oembed?url=rich">'));
    serve("/oembed?url=rich", JSON.stringify({ version: "1.0", type: "rich", html: "<script>alert(1)</script>" }), JSON_TYPE);
    serve("/player", page('<meta property="og:title" content="Player"><meta name="twitter:player" content="javascript:alert(1)">'));

    const hostile = await u.api.post("/api/v1/statuses", { status: `${NEWS}/hostile` });
    const video = await u.api.post("/api/v1/statuses", { status: `${NEWS}/watch` });
    const rich = await u.api.post("/api/v1/statuses", { status: `${NEWS}/rich` });
    const player = await u.api.post("/api/v1/statuses", { status: `${NEWS}/player` });
    await eventually(async () => expect(await cardOf(u.api, player.body.id)).not.toBeNull());

    const h = (await cardOf(u.api, hostile.body.id)) as any;
    // Text fields stay text (clients escape them); no image with a javascript: URL.
    expect(h).toMatchObject({ title: "<script>alert(1)</script>", description: "<img src=x onerror=alert(1)>", image: null, html: "", type: "link" });

    const v = (await cardOf(u.api, video.body.id)) as any;
    expect(v).toMatchObject({
      type: "video",
      title: "The video",
      description: "Moving pictures",
      author_name: "Filmer",
      author_url: "https://news.example/@filmer",
      provider_name: "Tube",
      provider_url: `${NEWS}/`,
      image: "https://cdn.news.example/t.jpg",
      width: 640,
      height: 360,
      authors: [{ name: "Filmer", url: "https://news.example/@filmer", account: null }],
    });
    expect(v.html).toBe(
      '<iframe src="https://player.news.example/embed/1" width="640" height="360" allowfullscreen="true" allowtransparency="true" scrolling="no" frameborder="0"></iframe>',
    );

    // oEmbed "rich" is refused as Mastodon does; the page's OpenGraph card is used instead.
    expect(await cardOf(u.api, rich.body.id)).toMatchObject({ type: "link", title: "Rich page", html: "" });
    // A javascript: player is no player.
    expect(await cardOf(u.api, player.body.id)).toMatchObject({ type: "link", html: "" });
  });

  it("decodes the page in the charset its Content-Type names, and falls back to UTF-8 for an unknown one", async () => {
    const u = await makeUser();
    const latin1 = Uint8Array.from(Array.from(page('<meta property="og:title" content="Caf\u00e9 &eacute;t&#233;">'), (ch) => ch.charCodeAt(0) & 0xff));
    serve("/latin1", latin1 as unknown as string, { headers: { "content-type": "text/html; charset=ISO-8859-1" } });
    serve("/odd", page('<meta property="og:title" content="Odd \u00fc">'), { headers: { "content-type": "text/html; charset=x-unknown-1" } });
    const a = await u.api.post("/api/v1/statuses", { status: `${NEWS}/latin1` });
    const b = await u.api.post("/api/v1/statuses", { status: `${NEWS}/odd` });
    await eventually(async () => expect(await cardOf(u.api, b.body.id)).not.toBeNull());
    expect((await cardOf(u.api, a.body.id)).title).toBe("Caf\u00e9 \u00e9t\u00e9");
    expect((await cardOf(u.api, b.body.id)).title).toBe("Odd \u00fc");
  });

  it("a changed link after an edit gets the new page's card", async () => {
    const u = await makeUser();
    serve("/one", page('<meta property="og:title" content="One">'));
    serve("/two", page('<meta property="og:title" content="Two">'));
    const s = await u.api.post("/api/v1/statuses", { status: `${NEWS}/one` });
    await eventually(async () => expect(await cardOf(u.api, s.body.id)).toMatchObject({ title: "One" }));
    const edited = await u.api.put(`/api/v1/statuses/${s.body.id}`, { status: `now ${NEWS}/two` });
    expect(edited.status).toBe(200);
    expect(edited.body.card).toBeNull();
    await eventually(async () => expect(await cardOf(u.api, s.body.id)).toMatchObject({ title: "Two", url: `${NEWS}/two` }));
    // An edit that keeps the text keeps the card without fetching.
    fetchSpy.mockClear();
    await u.api.put(`/api/v1/statuses/${s.body.id}`, { status: `now ${NEWS}/two`, spoiler_text: "cw" });
    await eventually(() => expect(queued.jobs).toHaveLength(0));
    expect(await cardOf(u.api, s.body.id)).toMatchObject({ title: "Two" });
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

describe("preview cards of remote statuses", () => {
  const REMOTE = "https://remote.example";
  const AP = { headers: { "content-type": "application/activity+json" } };

  it("takes the first link that is not a mention or a hashtag", async () => {
    const u = await makeUser();
    const uri = `${REMOTE}/users/erin/statuses/7`;
    const note = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: uri,
      type: "Note",
      attributedTo: `${REMOTE}/users/erin`,
      content: `<p><span class="h-card"><a href="${REMOTE}/@zed" class="u-url mention">@<span>zed</span></a></span> <a href="${REMOTE}/tags/cats" class="mention hashtag" rel="tag">#<span>cats</span></a> read <a href="${NEWS}/remote-read" rel="nofollow">this</a></p>`,
      published: new Date().toISOString(),
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      cc: [`${REMOTE}/users/erin/followers`],
      tag: [{ type: "Hashtag", name: "#cats", href: `${REMOTE}/tags/cats` }],
    };
    const actor = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${REMOTE}/users/erin`,
      type: "Person",
      preferredUsername: "erin",
      inbox: `${REMOTE}/users/erin/inbox`,
      followers: `${REMOTE}/users/erin/followers`,
      publicKey: {
        id: `${REMOTE}/users/erin#main-key`,
        owner: `${REMOTE}/users/erin`,
        publicKeyPem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
      },
    };
    fetchMock.get(REMOTE).intercept({ path: "/users/erin/statuses/7" }).reply(200, JSON.stringify(note), AP);
    fetchMock.get(REMOTE).intercept({ path: "/users/erin" }).reply(200, JSON.stringify(actor), AP);
    serve("/remote-read", page('<meta property="og:title" content="Remote read">'));
    const res = await u.api.get(`/api/v2/search?q=${encodeURIComponent(uri)}&resolve=true`);
    expect(res.body.statuses).toHaveLength(1);
    const id = res.body.statuses[0].id;
    await eventually(async () => expect(await cardOf(u.api, id)).toMatchObject({ title: "Remote read", url: `${NEWS}/remote-read` }));
    expect(fetchedUrls().filter((x) => x.startsWith(NEWS))).toEqual([`${NEWS}/remote-read`]);
  });

  it("a Create delivered to the inbox gets its card; an Update that changes the content gets the new one", async () => {
    const u = await makeUser();
    const bob = await remoteActor("bob");
    serve("/first", page('<meta property="og:title" content="First">'));
    serve("/second", page('<meta property="og:title" content="Second">'));
    const n = note(bob, { content: `<p>read <a href="${NEWS}/first">this</a></p>` });
    expect((await deliver(bob, create(bob, n))).status).toBe(202);
    const [row] = (await env.DB.prepare("SELECT id FROM statuses WHERE uri = ?").bind(n.id).all()).results as { id: string }[];
    const id = String(BigInt(row.id));
    await eventually(async () => expect(await cardOf(u.api, id)).toMatchObject({ title: "First" }));
    const updated = new Date(Date.now() + 1000).toISOString();
    await deliver(bob, {
      id: `${n.id}#updates/1`,
      type: "Update",
      actor: bob.uri,
      object: { ...n, content: `<p>no, <a href="${NEWS}/second">this</a></p>`, updated },
    });
    await eventually(async () => expect(await cardOf(u.api, id)).toMatchObject({ title: "Second", url: `${NEWS}/second` }));
  });
});
