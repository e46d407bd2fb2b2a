// Quote posts as servers without FEP-044f quote requests send them: the Note documents of Misskey, Pleroma, Akkoma and
// Hollo (before 0.9), each with the quote properties and the content fallback that server writes. Shapes read from
// their sources: Misskey's ApRendererService#renderNote (`_misskey_quote` and `quoteUrl`, "RE: <uri>" appended to
// the MFM text), Pleroma's Transmogrifier#set_quote_url (`quoteUrl`, `quoteUri`, `_misskey_quote`) with its
// QuoteToLinkTagPolicy (a FEP-e232 Link tag) and InlineQuotePolicy (`<span class="quote-inline">` with "RT:"),
// Akkoma's (`quoteUri`, `quoteUrl`, the span with "RE:" linking the quoted post's `url`), and Hollo 0.8's toObject
// through Fedify (`quoteUrl`, which Fedify also writes as `_misskey_quote` and `quoteUri`, a FEP-e232 Link tag, and
// no link in the content).
import { AS_PUBLIC, type RemoteActor } from "./federation-inbox-fixtures";

/** The quoted post as the quoting server knows it: its id, and its page (Akkoma links that one). */
export interface Quoted {
  id: string;
  url: string;
}

const published = () => new Date().toISOString();
const AS_LINK = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"';
let seq = 0;
const uuid = () => `0196a1b2-c3d4-7e5f-8a9b-${String(Date.now() % 1e6).padStart(6, "0")}${String(++seq).padStart(6, "0")}`;

/** Misskey: `/notes/<aid>` ids, the quote in `_misskey_quote` and `quoteUrl`, "RE: <quoted id>" at the end of the content. */
export function misskeyNote(a: RemoteActor, quoted: Quoted, text: string, id = `https://${a.host}/notes/9${(++seq).toString(36).padStart(9, "0")}`) {
  return {
    "@context": [
      "https://www.w3.org/ns/activitystreams",
      "https://w3id.org/security/v1",
      {
        quoteUrl: "as:quoteUrl",
        misskey: "https://misskey-hub.net/ns#",
        _misskey_content: "misskey:_misskey_content",
        _misskey_quote: "misskey:_misskey_quote",
      },
    ],
    id,
    type: "Note",
    attributedTo: a.uri,
    content: `<p><span>${text}<br><br>RE: </span><a href="${quoted.id}">${quoted.id}</a></p>`,
    _misskey_content: text,
    source: { content: text, mediaType: "text/x.misskeymarkdown" },
    _misskey_quote: quoted.id,
    quoteUrl: quoted.id,
    published: published(),
    to: [AS_PUBLIC],
    cc: [a.followers],
    inReplyTo: null,
    attachment: [],
    sensitive: false,
    tag: [],
  };
}

/** Pleroma: `/objects/<uuid>` ids, `quoteUrl` with its aliases, a Link tag, and the quote-inline span with "RT:". */
export function pleromaNote(a: RemoteActor, quoted: Quoted, text: string) {
  const context = `https://${a.host}/contexts/${uuid()}`;
  return {
    id: `https://${a.host}/objects/${uuid()}`,
    type: "Note",
    actor: a.uri,
    attributedTo: a.uri,
    content: `${text}<span class="quote-inline"><br/><br/><bdi>RT:</bdi> <a href="${quoted.id}">${quoted.id}</a></span>`,
    source: { content: text, mediaType: "text/plain" },
    context,
    conversation: context,
    quoteUrl: quoted.id,
    quoteUri: quoted.id,
    _misskey_quote: quoted.id,
    tag: [{ type: "Link", mediaType: AS_LINK, href: quoted.id }],
    summary: "",
    sensitive: false,
    attachment: [],
    published: published(),
    to: [AS_PUBLIC],
    cc: [a.followers],
  };
}

/** Akkoma: `quoteUri` and `quoteUrl`, and the quote-inline span with "RE:" linking the quoted post's page. */
export function akkomaNote(a: RemoteActor, quoted: Quoted, text: string) {
  const context = `https://${a.host}/contexts/${uuid()}`;
  return {
    id: `https://${a.host}/objects/${uuid()}`,
    type: "Note",
    actor: a.uri,
    attributedTo: a.uri,
    content: `<p>${text}<span class="quote-inline"><br/><br/>RE: <a href="${quoted.url}">${quoted.url}</a></span></p>`,
    source: { content: text, mediaType: "text/markdown" },
    context,
    conversation: context,
    quoteUri: quoted.id,
    quoteUrl: quoted.id,
    summary: "",
    sensitive: false,
    attachment: [],
    published: published(),
    to: [AS_PUBLIC],
    cc: [a.followers],
  };
}

/** Hollo 0.8 (Fedify): `/@user/<uuid>` ids, `quoteUrl` and its aliases, a Link tag, and nothing of the quote in the content. */
export function holloNote(a: RemoteActor, quoted: Quoted, text: string, id = `https://${a.host}/@${a.name}/${uuid()}`) {
  const content = `<p>${text}</p>\n`;
  return {
    "@context": [
      "https://www.w3.org/ns/activitystreams",
      "https://w3id.org/security/data-integrity/v1",
      {
        toot: "http://joinmastodon.org/ns#",
        misskey: "https://misskey-hub.net/ns#",
        fedibird: "http://fedibird.com/ns#",
        sensitive: "as:sensitive",
        quoteUrl: "as:quoteUrl",
        _misskey_quote: "misskey:_misskey_quote",
        quoteUri: "fedibird:quoteUri",
      },
    ],
    id,
    type: "Note",
    attributedTo: a.uri,
    content,
    contentMap: { en: content },
    source: { content: text, mediaType: "text/markdown" },
    quoteUrl: quoted.id,
    _misskey_quote: quoted.id,
    quoteUri: quoted.id,
    tag: [{ type: "Link", mediaType: AS_LINK, href: quoted.id, name: quoted.id }],
    replies: { id: `${id}#replies`, type: "OrderedCollection", totalItems: 0, items: [] },
    published: published(),
    url: id,
    to: [AS_PUBLIC],
    cc: [a.followers],
    sensitive: false,
  };
}

/** A plain post of `a` to quote, at `id`, with `url` as its page; `extra` adds to the Note (an interactionPolicy). */
export function quotedNote(a: RemoteActor, id: string, url = id, extra: Record<string, unknown> = {}) {
  return {
    id,
    type: "Note",
    attributedTo: a.uri,
    content: "<p>the post being quoted</p>",
    published: published(),
    url,
    to: [AS_PUBLIC],
    cc: [a.followers],
    ...extra,
  };
}
