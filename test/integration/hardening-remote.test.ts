// Hostile remote documents arriving the real ways (a signed inbox POST that makes us fetch the actor, a Create, a
// search with resolve=true), observed through the REST API and ActivityPub as clients and peers see them
// (security E1–E3, E7 and the classes behind them):
// - remote HTML (actor summary, field values, status content) holds only Mastodon's allowlisted markup, checked with
//   an HTML5 parser (parse5); raw-text elements (xmp, noembed, noframes, plaintext …) never hand their contents over
//   as markup;
// - plain-text fields (display name, field names, spoiler text, media descriptions, poll options, hashtag names) are
//   stored as text without tags;
// - URLs from remote documents are http(s) or dropped, and a local post mentioning such an account links to http(s);
// - a local poll that hides its totals shows no counts in its ActivityPub Question until it ends.
import { SELF } from "cloudflare:test";
import { defaultTreeAdapter, html as h, parseFragment, type DefaultTreeAdapterMap } from "parse5";
import { beforeAll, describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";
import { create, deliver, installFetchMock, newId, note, remoteActor, serveJson, sql } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

const ELEMENTS = new Set([
  "p",
  "br",
  "span",
  "a",
  "del",
  "s",
  "pre",
  "blockquote",
  "code",
  "b",
  "strong",
  "u",
  "i",
  "em",
  "ul",
  "ol",
  "li",
  "ruby",
  "rt",
  "rp",
]);
const ATTRIBUTES = new Set(["href", "rel", "class", "translate", "target", "start", "reversed", "value", "lang"]);
const context = defaultTreeAdapter.createElement("div", h.NS.HTML, []);

/** What an HTML5 parser finds in `html` that Mastodon's strict allowlist does not allow. */
function markupProblems(html: string): string[] {
  const out: string[] = [];
  const stack: Node[] = [...parseFragment(context, html, {}).childNodes];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.nodeName === "#text") continue;
    if (n.nodeName === "#comment") {
      out.push("comment");
      continue;
    }
    const el = n as Element;
    if (!ELEMENTS.has(el.tagName) || el.namespaceURI !== h.NS.HTML) out.push(`<${el.tagName}>`);
    for (const a of el.attrs) {
      if (!ATTRIBUTES.has(a.name)) out.push(`${el.tagName}[${a.name}]`);
      if (a.name === "href" && !/^https?:\/\//i.test(a.value)) out.push(`href ${a.value}`);
    }
    stack.push(...el.childNodes);
  }
  return out;
}

/** The elements named `tag` an HTML5 parser finds in `html`. */
function elements(html: string, tag: string): Element[] {
  const out: Element[] = [];
  const stack: Node[] = [...parseFragment(context, html, {}).childNodes];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.nodeName === tag) out.push(n as Element);
    if ("childNodes" in n) stack.push(...(n as Element).childNodes);
  }
  return out;
}

const hrefOf = (el: Element) => el.attrs.find((a) => a.name === "href")?.value;

async function accountIdOf(uri: string): Promise<string> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", uri);
  return String(BigInt(row.id));
}

/** An actor document carrying the hostile profile the probe used. */
const hostileProfile = {
  name: "<img src=x onerror=alert(1)>Mallory<xmp><img src=x onerror=alert(2)></xmp>",
  summary:
    "<p>bio</p><xmp><img src=x onerror=alert(3)></xmp><noembed><img src=x onerror=alert(4)></noembed>" +
    '<textarea><img src=x onerror=alert(5)></textarea><svg><style><img src=x onerror=alert(6)></style></svg><a href="javascript:alert(1)">click</a>',
  url: "javascript:alert(1)",
  icon: { type: "Image", mediaType: "image/png", url: "javascript:alert(1)" },
  image: { type: "Image", url: "data:image/svg+xml,<svg onload=alert(1)>" },
  attachment: [
    {
      type: "PropertyValue",
      name: "<b>Site</b><xmp><img src=x onerror=alert(7)></xmp>",
      value: '<noframes><img src=x onerror=alert(8)></noframes><a href="jav&#x61;script:alert(1)">home</a>',
    },
    { type: "PropertyValue", name: "Web", value: '<a href="https://evil.example/" rel="me" onclick="alert(1)">evil.example</a>' },
  ],
};

describe("a hostile actor document (E1-E3)", () => {
  it("fetched because of an inbox POST: profile HTML holds only allowlisted markup, names are text, URLs are http(s) or gone", async () => {
    const viewer = await makeUser("viewer");
    const mallory = await remoteActor("mallory", "evil.example", { docPatch: hostileProfile });
    const r = await deliver(mallory, { id: newId(mallory), type: "Like", actor: mallory.uri, object: `${ORIGIN}/users/viewer/statuses/1` });
    expect(r.status).toBe(202);

    const res = await viewer.api.get(`/api/v1/accounts/${await accountIdOf(mallory.uri)}`);
    expect(res.status).toBe(200);
    const a = res.body;
    expect(a.display_name).toBe("Mallory");
    expect(markupProblems(a.note)).toEqual([]);
    expect(elements(a.note, "img")).toEqual([]);
    // RCDATA (textarea) contents stay as escaped text, as Mastodon keeps them; raw-text contents (xmp …) are dropped.
    expect(a.note).toBe("<p>bio</p>&lt;img src=x onerror=alert(5)&gt;click");
    expect(a.fields.map((f: any) => f.name)).toEqual(["Site", "Web"]);
    for (const f of a.fields) expect(markupProblems(f.value)).toEqual([]);
    expect(a.fields[0].value).toBe("home");
    expect(a.fields[1].value).toBe('<a href="https://evil.example/" rel="nofollow noopener noreferrer" target="_blank">evil.example</a>');
    // url, icon and image were not http(s): dropped, so the profile links to the actor and shows the default pictures.
    expect(a.url).toBe(mallory.uri);
    expect(a.avatar).toBe(`${ORIGIN}/avatars/original/missing.png`);
    expect(a.header).toBe(`${ORIGIN}/headers/original/missing.png`);
    const [row] = await sql("SELECT url, avatar_remote_url, header_remote_url FROM accounts WHERE uri = ?", mallory.uri);
    expect(row).toEqual({ url: null, avatar_remote_url: null, header_remote_url: null });
  });

  it("a local post mentioning that actor links the mention to an http(s) URL only", async () => {
    const alice = await makeUser("alice");
    const mallory = await remoteActor("mallory", "evil.example", { docPatch: hostileProfile });
    await deliver(mallory, { id: newId(mallory), type: "Like", actor: mallory.uri, object: `${ORIGIN}/users/alice/statuses/1` });

    const post = await alice.api.post("/api/v1/statuses", { status: "hello @mallory@evil.example" });
    expect(post.status).toBe(200);
    expect(markupProblems(post.body.content)).toEqual([]);
    expect(elements(post.body.content, "a").map(hrefOf)).toEqual([mallory.uri]);

    // A row stored before URLs were checked: the bad `url` is never used; the mention links to the actor's id,
    // which is itself checked (an http(s) URL), as Mastodon links a mention to `url || uri`.
    await sql("UPDATE accounts SET url = 'javascript:alert(1)' WHERE uri = ?", mallory.uri);
    const again = await alice.api.post("/api/v1/statuses", { status: "again @mallory@evil.example" });
    expect(again.status).toBe(200);
    expect(again.body.content).not.toContain("javascript:");
    expect(elements(again.body.content, "a").map(hrefOf)).toEqual([mallory.uri]);

    // And with neither an http(s) url nor an http(s) id, the mention stays plain text.
    await sql("UPDATE accounts SET uri = 'javascript:alert(2)' WHERE uri = ?", mallory.uri);
    const third = await alice.api.post("/api/v1/statuses", { status: "third @mallory@evil.example" });
    expect(third.status).toBe(200);
    expect(third.body.content).toBe("<p>third @mallory@evil.example</p>");
  });
});

describe("a hostile Note (E1-E3, E7)", () => {
  const hostileNote = (a: Awaited<ReturnType<typeof remoteActor>>, extra: Record<string, unknown> = {}) =>
    note(a, {
      content:
        "<p>ok</p><xmp><img src=x onerror=alert(1)></xmp><noembed><img src=x onerror=alert(2)></noembed><noframes><img src=x onerror=alert(3)></noframes>" +
        "<svg><p><style><img src=x onerror=alert(4)></style></p></svg><!-- <img src=x onerror=alert(5)> -->" +
        '<math><semantics><mi>x</mi><annotation encoding="application/x-tex">x^2</annotation></semantics></math>' +
        '<a href="jav&#x61;script:alert(1)">j</a> <a href="https://ok.example/a?b=1&amp;c=2" class="u-url evil" onclick="alert(1)">ok</a>' +
        "<plaintext><img src=x onerror=alert(6)>",
      summary: "<b>CW</b><xmp><img src=x onerror=alert(7)></xmp>",
      url: "javascript:alert(1)",
      attachment: [
        { type: "Document", mediaType: "image/png", url: "javascript:alert(1)", name: "x" },
        { type: "Document", mediaType: "image/png", url: "data:image/png;base64,AAAA", name: "y" },
        {
          type: "Document",
          mediaType: 'image/png"><script>',
          url: "https://remote.example/m/2.png",
          name: "<img src=x onerror=alert(8)>a cat<xmp><img src=x onerror=alert(9)></xmp>",
          blurhash: '"><script>',
        },
      ],
      tag: [
        { type: "Mention", href: "javascript:alert(1)", name: "@x" },
        { type: "Hashtag", name: "#<script>", href: "javascript:alert(1)" },
        { type: "Hashtag", name: "#fine", href: "https://remote.example/tags/fine" },
        { type: "Emoji", name: ":blob:", icon: { type: "Image", url: "javascript:alert(1)" } },
      ],
      ...extra,
    });

  function expectSafe(s: any, n: Record<string, unknown>) {
    expect(markupProblems(s.content)).toEqual([]);
    expect(s.content).toBe(
      // <p> inside <svg> leaves foreign content, as in a browser (its <style> contents are dropped)
      '<p>ok</p><p></p>$x^2$j <a href="https://ok.example/a?b=1&amp;c=2" rel="nofollow noopener noreferrer" target="_blank" class="u-url">ok</a>',
    );
    expect(s.spoiler_text).toBe("CW");
    expect(s.sensitive).toBe(true);
    expect(s.url).toBe(n.id);
    expect(s.media_attachments).toHaveLength(1);
    expect(s.media_attachments[0]).toMatchObject({ remote_url: "https://remote.example/m/2.png", description: "a cat", blurhash: null });
    expect(s.tags.map((t: any) => t.name)).toEqual(["fine"]);
    expect(s.mentions).toEqual([]);
  }

  it("through the inbox: content allowlisted, spoiler and description plain text, bad URLs and tags dropped", async () => {
    const viewer = await makeUser("viewer2");
    const bob = await remoteActor("bob");
    const n = hostileNote(bob);
    expect((await deliver(bob, create(bob, n))).status).toBe(202);
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", n.id);
    const res = await viewer.api.get(`/api/v1/statuses/${String(BigInt(row.id))}`);
    expect(res.status).toBe(200);
    expectSafe(res.body, n);
  });

  it("through search with resolve=true: the same rules on the fetch path", async () => {
    const viewer = await makeUser("viewer3");
    const bob = await remoteActor("bob");
    const n = hostileNote(bob, { id: `${bob.uri}/statuses/hostile-1`, url: "javascript:alert(1)" });
    serveJson("remote.example", "/users/bob/statuses/hostile-1", { "@context": "https://www.w3.org/ns/activitystreams", ...n });
    const res = await viewer.api.get(`/api/v2/search?type=statuses&resolve=true&q=${encodeURIComponent(n.id as string)}`);
    expect(res.status).toBe(200);
    expect(res.body.statuses).toHaveLength(1);
    expectSafe(res.body.statuses[0], n);
  });

  it("a Question's option titles are plain text", async () => {
    const viewer = await makeUser("viewer4");
    const bob = await remoteActor("bob");
    const q = note(bob, {
      type: "Question",
      content: "<p>pick</p>",
      endTime: new Date(Date.now() + 3600_000).toISOString(),
      oneOf: [
        { type: "Note", name: "<img src=x onerror=alert(1)>Yes<xmp><b>no</b></xmp>", replies: { type: "Collection", totalItems: 2 } },
        { type: "Note", name: "<textarea>No</textarea>", replies: { type: "Collection", totalItems: 1 } },
      ],
    });
    await deliver(bob, create(bob, q));
    const [row] = await sql("SELECT id FROM statuses WHERE uri = ?", q.id);
    const res = await viewer.api.get(`/api/v1/statuses/${String(BigInt(row.id))}`);
    expect(res.body.poll.options).toEqual([
      { title: "Yes", votes_count: 2 },
      { title: "No", votes_count: 1 },
    ]);
  });
});

describe("ActivityPub Question of a poll that hides its totals", () => {
  it("has no per-option counts nor votersCount until the poll ends; then it has both, and closed", async () => {
    const alice = await makeUser("pollster");
    const bea = await makeUser("voter");
    const post = await alice.api.post("/api/v1/statuses", { status: "which?", poll: { options: ["a", "b"], expires_in: 3600, hide_totals: true } });
    expect(post.status).toBe(200);
    expect((await bea.api.post(`/api/v1/polls/${post.body.poll.id}/votes`, { choices: [0] })).status).toBe(200);
    const noteUrl = `${ORIGIN}/users/pollster/statuses/${post.body.id}`;

    const hidden = await (await fetchNote(noteUrl)).json<any>();
    expect(hidden.type).toBe("Question");
    expect(hidden.oneOf.map((o: any) => o.replies.totalItems)).toEqual([null, null]);
    expect(hidden).not.toHaveProperty("votersCount");
    expect(hidden).not.toHaveProperty("closed");
    expect(JSON.stringify(hidden.oneOf)).not.toContain('"totalItems":1');

    await sql("UPDATE polls SET expires_at = ? WHERE status_id = ?", Date.now() - 1000, post.body.id.padStart(20, "0"));
    const shown = await (await fetchNote(noteUrl)).json<any>();
    expect(shown.oneOf.map((o: any) => o.replies.totalItems)).toEqual([1, 0]);
    expect(shown.votersCount).toBe(1);
    expect(typeof shown.closed).toBe("string");
  });

  it("a poll that shows its totals has them while it runs", async () => {
    const alice = await makeUser("pollster2");
    const bea = await makeUser("voter2");
    const post = await alice.api.post("/api/v1/statuses", { status: "which?", poll: { options: ["a", "b"], expires_in: 3600 } });
    await bea.api.post(`/api/v1/polls/${post.body.poll.id}/votes`, { choices: [1] });
    const doc = await (await fetchNote(`${ORIGIN}/users/pollster2/statuses/${post.body.id}`)).json<any>();
    expect(doc.oneOf.map((o: any) => o.replies.totalItems)).toEqual([0, 1]);
    expect(doc.votersCount).toBe(1);
  });
});

async function fetchNote(url: string): Promise<Response> {
  const res = await SELF.fetch(url, { headers: { accept: "application/activity+json" } });
  expect(res.status).toBe(200);
  return res;
}
