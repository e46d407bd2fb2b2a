// Turns the ActivityStreams documents real servers send (Mastodon, GoToSocial, Misskey, Pleroma/Akkoma, Pixelfed)
// into typed records: single values or arrays, embedded objects or IRIs, `as:Public`/`Public` spellings, and every
// string and array capped (security §1.3 invariant 5, C22). zod validates the result's shape; nothing downstream
// reads the raw JSON. HTML fields (content, actor summary, field values) are sanitised by the callers on ingest; the
// fields that are plain text (names, spoiler text, descriptions, poll options, field names, mention names) leave here
// as plain text with no markup (`plainText`), and every URL that may be stored or linked is an absolute http(s) URL
// (`httpUrl`) or is dropped.
import * as z from "zod";
import { lazy } from "../../lib/limits/lazy";
import { httpUrl } from "../../lib/http/urls";
import { plainText } from "./sanitize";

export const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const PUBLIC_SPELLINGS = new Set([PUBLIC, "as:Public", "Public"]);

export const CAPS = {
  url: 2048,
  name: 500,
  summary: 20_000,
  content: 100_000,
  recipients: 500,
  tags: 100,
  attachments: 16,
  pollOptions: 20,
  fields: 16,
  emojis: 50,
  depth: 32,
} as const;

type Json = unknown;

/** `o[k]` when `o` is an object, else undefined: a property of a remote document whose shape is not known yet. */
export function field(o: unknown, k: string): unknown {
  return o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined;
}

function cap(s: unknown, max: number): string | null {
  if (typeof s !== "string") return null;
  return s.length > max ? s.slice(0, max) : s;
}

/** An IRI from a string or an object's `id` (or `href` for Link objects). */
export function iri(v: Json): string | null {
  if (typeof v === "string") return cap(v, CAPS.url);
  if (Array.isArray(v)) return v.length ? iri(v[0]) : null;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (typeof o.id === "string") return cap(o.id, CAPS.url);
    if (typeof o.href === "string") return cap(o.href, CAPS.url);
  }
  return null;
}

export function asArray(v: Json, max = 1000): unknown[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).slice(0, max);
}

function iris(v: Json, max = CAPS.recipients): string[] {
  const out: string[] = [];
  for (const x of asArray(v, max)) {
    const i = iri(x);
    if (i) out.push(PUBLIC_SPELLINGS.has(i) ? PUBLIC : i);
  }
  return out;
}

function typeOf(v: Json): string | null {
  if (!v || typeof v !== "object") return null;
  const t = (v as Record<string, unknown>).type;
  if (typeof t === "string") return t;
  if (Array.isArray(t) && typeof t[0] === "string") return t[0];
  return null;
}

/** A capped plain-text field: markup removed (see plainText), null stays null. */
function text(v: unknown, max: number): string | null {
  const s = cap(v, max);
  return s === null ? null : plainText(s);
}

// Mastodon's rule for remote usernames (Account USERNAME_RE).
const USERNAME = /^[A-Za-z0-9_]+(?:[.-]+[A-Za-z0-9_]+)*$/;
/** A pixel size: a positive integer (a number or a numeric string), at most 100,000; else null. */
function dimension(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d{1,6}$/.test(v.trim()) ? Number(v) : Number.NaN;
  return Number.isInteger(n) && n > 0 && n <= 100_000 ? n : null;
}

/** The first item of a value that may be a list. */
const firstOf = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

// Mastodon keeps a blurhash only when it is made of the blurhash alphabet.
const BLURHASH = /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]+$/;
const MEDIA_TYPE = /^[A-Za-z0-9][\w.+-]*\/[\w.+-]+$/;
const hashtagRe = lazy(() => /^[\p{L}\p{N}\p{M}_·]+$/u);

function bool(v: Json): boolean | null {
  return typeof v === "boolean" ? v : null;
}

function date(v: Json): number | null {
  if (typeof v !== "string") return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/**
 * The URL of a `url`/`icon`/`image` property (a string, a Link, an Image or Document with its own `url`, or an array
 * of these), preferring text/html: the first that is an absolute http(s) URL (httpUrl); null when none is.
 */
function urlOf(v: Json, depth = 0): string | null {
  let first: string | null = null;
  for (const x of asArray(v, 10)) {
    let u: string | null = null;
    if (typeof x === "string") u = httpUrl(x);
    else if (x && typeof x === "object") {
      const o = x as Record<string, unknown>;
      u = typeof o.href === "string" ? httpUrl(o.href) : o.url !== undefined && depth < 2 ? urlOf(o.url, depth + 1) : httpUrl(o.id);
      if (u && o.mediaType === "text/html") return u;
    }
    first ??= u;
  }
  return first;
}

/** contentMap → (content, language) when `content` is missing, as Misskey and GoToSocial sometimes send. */
function contentAndLanguage(o: Record<string, unknown>): { content: string; language: string | null } {
  const map = o.contentMap && typeof o.contentMap === "object" ? (o.contentMap as Record<string, unknown>) : null;
  const lang = map ? (Object.keys(map).find((k) => /^[a-z]{2,3}(-[A-Za-z0-9]+)?$/.test(k)) ?? null) : null;
  const content = cap(o.content, CAPS.content) ?? (lang ? cap(map![lang], CAPS.content) : null) ?? "";
  return { content, language: lang ? (lang.split("-")[0] ?? null) : null };
}

function depthOk(v: Json, max: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  let seen = 0;
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (d > max) return false;
    if (++seen > 100_000) return false;
    if (x && typeof x === "object") for (const y of Object.values(x as object)) if (y && typeof y === "object") stack.push([y, d + 1]);
  }
  return true;
}

// ---------- actors ----------

const EmojiSchema = lazy(() => z.object({ shortcode: z.string(), url: z.string(), uri: z.string().nullable() }));

export const ActorSchema = lazy(() =>
  z.object({
    id: z.string().url(),
    type: z.enum(["Person", "Service", "Application", "Group", "Organization"]),
    preferredUsername: z.string().min(1).max(100).regex(USERNAME),
    name: z.string().max(CAPS.name),
    summary: z.string(),
    url: z.string().nullable(),
    inbox: z.string().url(),
    sharedInbox: z.string().url().nullable(),
    outbox: z.string().nullable(),
    followers: z.string().nullable(),
    following: z.string().nullable(),
    featured: z.string().nullable(),
    featuredTags: z.string().nullable(),
    /** FEP-7aa9: the actor's collections of accounts, and who may feature it (interactionPolicy.canFeature). */
    featuredCollections: z.string().nullable(),
    canFeature: z.object({ automatic: z.array(z.string()), manual: z.array(z.string()) }).nullable(),
    publicKey: z.object({ id: z.string(), owner: z.string(), publicKeyPem: z.string().max(10_000) }).nullable(),
    icon: z.string().nullable(),
    image: z.string().nullable(),
    manuallyApprovesFollowers: z.boolean(),
    discoverable: z.boolean().nullable(),
    indexable: z.boolean(),
    memorial: z.boolean(),
    movedTo: z.string().nullable(),
    alsoKnownAs: z.array(z.string()),
    fields: z.array(z.object({ name: z.string(), value: z.string() })),
    emojis: z.array(EmojiSchema()),
    published: z.number().nullable(),
  }),
);
export type NormalizedActor = z.infer<ReturnType<typeof ActorSchema>>;

export function normalizeActor(doc: Json): NormalizedActor | null {
  if (!doc || typeof doc !== "object" || Array.isArray(doc) || !depthOk(doc, CAPS.depth)) return null;
  const o = doc as Record<string, unknown>;
  const pk = (Array.isArray(o.publicKey) ? o.publicKey[0] : o.publicKey) as Record<string, unknown> | undefined;
  const endpoints = (o.endpoints && typeof o.endpoints === "object" ? o.endpoints : {}) as Record<string, unknown>;
  const candidate = {
    id: httpUrl(iri(o.id)),
    type: typeOf(o),
    preferredUsername: cap(o.preferredUsername, 100),
    name: text(o.name, CAPS.name) ?? "",
    summary: cap(o.summary, CAPS.summary) ?? "",
    url: urlOf(o.url),
    inbox: httpUrl(iri(o.inbox)),
    sharedInbox: httpUrl(iri(endpoints.sharedInbox)) ?? httpUrl(iri(o.sharedInbox)),
    outbox: httpUrl(iri(o.outbox)),
    followers: httpUrl(iri(o.followers)),
    following: httpUrl(iri(o.following)),
    featured: httpUrl(iri(o.featured)),
    featuredTags: httpUrl(iri(o.featuredTags)),
    featuredCollections: httpUrl(iri(o.featuredCollections)),
    canFeature: policyOf(o, "canFeature"),
    publicKey:
      pk && typeof pk === "object" && typeof pk.publicKeyPem === "string"
        ? { id: iri(pk.id) ?? "", owner: iri(pk.owner) ?? "", publicKeyPem: cap(pk.publicKeyPem, 10_000)! }
        : null,
    icon: urlOf(o.icon),
    image: urlOf(o.image),
    manuallyApprovesFollowers: bool(o.manuallyApprovesFollowers) ?? false,
    discoverable: bool(o.discoverable),
    indexable: bool(o.indexable) ?? false,
    memorial: bool(o.memorial) ?? false,
    movedTo: httpUrl(iri(o.movedTo)),
    alsoKnownAs: asArray(o.alsoKnownAs, 20)
      .map((x) => httpUrl(iri(x as Json)))
      .filter((x): x is string => !!x),
    fields: asArray(o.attachment, CAPS.fields)
      .filter((a) => typeOf(a) === "PropertyValue")
      .map((a) => ({ name: text(field(a, "name"), 255) ?? "", value: cap(field(a, "value"), 2048) ?? "" })),
    emojis: emojisOf(o.tag),
    published: date(o.published),
  };
  const r = ActorSchema().safeParse(candidate);
  return r.success ? r.data : null;
}

/**
 * The Emoji tags of an object (Mastodon's process_emoji): a shortcode of word characters (`:name:` with or without the
 * colons, `[a-zA-Z0-9_]{2,}` as Mastodon's SHORTCODE_RE_FRAGMENT, at most 64), an http(s) icon URL (urlOf), and the
 * tag's id when it is one; the first tag per shortcode counts, at most 50 are kept. Anything else is dropped (E7).
 */
function emojisOf(tags: Json): { shortcode: string; url: string; uri: string | null }[] {
  const out: { shortcode: string; url: string; uri: string | null }[] = [];
  const seen = new Set<string>();
  for (const t of asArray(tags, CAPS.tags)) {
    if (typeOf(t) !== "Emoji") continue;
    const name = cap(field(t, "name"), 100)?.replace(/^:|:$/g, "");
    const url = urlOf(field(t, "icon"));
    if (!name || !/^[a-zA-Z0-9_]{2,64}$/.test(name) || !url || seen.has(name)) continue;
    seen.add(name);
    out.push({ shortcode: name, url, uri: httpUrl(iri(field(t, "id"))) });
    if (out.length >= CAPS.emojis) break;
  }
  return out;
}

// ---------- objects (Note, Question, Article, Page, ...) ----------

/**
 * A Note's quote (Mastodon's ActivityPub::Parser::StatusParser): the quoted IRI from FEP-044f `quote`, else
 * `_misskey_quote`, `quoteUrl` or `quoteUri` (legacy: not FEP-044f); a `quote` Tombstone names a deleted one.
 */
const QuoteSchema = lazy(() =>
  z.object({
    uri: z.string().nullable(),
    legacy: z.boolean(),
    deleted: z.boolean(),
    authorization: z.string().nullable(),
  }),
);

function quoteOf(o: Record<string, unknown>) {
  const keys = ["quote", "_misskey_quote", "quoteUrl", "quoteUri"];
  if (!keys.some((k) => o[k] !== undefined && o[k] !== null && o[k] !== "")) return null;
  const deleted = typeOf(firstOf(o.quote)) === "Tombstone";
  const uri = deleted ? null : (keys.map((k) => httpUrl(iri(o[k]))).find(Boolean) ?? null);
  return { uri, legacy: o.quote === undefined, deleted, authorization: httpUrl(iri(o.quoteAuthorization)) };
}

/** interactionPolicy.canQuote (a Note's) or canFeature (an actor's): the URIs approved automatically and manually; null when absent. */
function policyOf(o: Record<string, unknown>, which: "canQuote" | "canFeature") {
  const policy = field(field(o, "interactionPolicy"), which);
  if (!policy || typeof policy !== "object") return null;
  const list = (v: unknown) =>
    asArray(v, 20)
      .filter((x): x is string => typeof x === "string")
      .map((x) => cap(x, CAPS.url)!);
  return { automatic: list(field(policy, "automaticApproval")), manual: list(field(policy, "manualApproval")) };
}

export const NoteSchema = lazy(() =>
  z.object({
    id: z.string().url(),
    type: z.string(),
    attributedTo: z.string().url(),
    content: z.string(),
    summary: z.string(),
    sensitive: z.boolean(),
    language: z.string().nullable(),
    inReplyTo: z.string().nullable(),
    published: z.number().nullable(),
    updated: z.number().nullable(),
    url: z.string().nullable(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    conversation: z.string().nullable(),
    mentions: z.array(z.object({ href: z.string(), name: z.string().nullable() })),
    hashtags: z.array(z.string()),
    emojis: z.array(EmojiSchema()),
    attachments: z.array(
      z.object({
        url: z.string(),
        width: z.number().nullable(),
        height: z.number().nullable(),
        focus: z.tuple([z.number(), z.number()]).nullable(),
        mediaType: z.string().nullable(),
        description: z.string().nullable(),
        blurhash: z.string().nullable(),
      }),
    ),
    poll: z
      .object({
        options: z.array(z.object({ title: z.string(), votes: z.number() })),
        multiple: z.boolean(),
        endTime: z.number().nullable(),
        votersCount: z.number().nullable(),
      })
      .nullable(),
    quote: QuoteSchema().nullable(),
    /** interactionPolicy.canQuote: the actors (or collections) approved automatically and manually; null when absent. */
    canQuote: z.object({ automatic: z.array(z.string()), manual: z.array(z.string()) }).nullable(),
  }),
);
export type NormalizedNote = z.infer<ReturnType<typeof NoteSchema>>;

const NOTE_TYPES = new Set(["Note", "Question", "Article", "Page", "Image", "Video", "Audio", "Event"]);

export function normalizeNote(doc: Json): NormalizedNote | null {
  if (!doc || typeof doc !== "object" || Array.isArray(doc) || !depthOk(doc, CAPS.depth)) return null;
  const o = doc as Record<string, unknown>;
  const type = typeOf(o);
  if (!type || !NOTE_TYPES.has(type)) return null;
  const { content, language } = contentAndLanguage(o);
  const tags = asArray(o.tag, CAPS.tags);
  const isQuestion = type === "Question";
  const choices = isQuestion ? asArray(o.oneOf ?? o.anyOf, CAPS.pollOptions) : [];
  const candidate = {
    id: httpUrl(iri(o.id)),
    type,
    attributedTo: httpUrl(
      iri(
        asArray(o.attributedTo, 5).find((a) => typeof a === "string" || typeOf(a) === "Person" || typeOf(a) === "Service" || typeOf(a) === "Group") ??
          o.attributedTo,
      ),
    ),
    content,
    summary: text(o.summary, CAPS.summary) ?? "",
    sensitive: bool(o.sensitive) ?? false,
    language,
    inReplyTo: iri(o.inReplyTo),
    published: date(o.published),
    updated: date(o.updated),
    url: urlOf(o.url),
    to: iris(o.to),
    cc: iris(o.cc),
    conversation: iri(o.context) ?? iri(o.conversation),
    mentions: tags
      .filter((t) => typeOf(t) === "Mention")
      .map((t) => ({ href: httpUrl(iri(field(t, "href"))) ?? "", name: text(field(t, "name"), 500) }))
      .filter((m) => m.href),
    // A hashtag's name is kept only when it is a hashtag (Mastodon drops invalid ones); its href is not used.
    hashtags: tags
      .filter((t) => typeOf(t) === "Hashtag")
      .map((t) => cap(field(t, "name"), 100)?.replace(/^#/, "") ?? "")
      .filter((n) => hashtagRe().test(n)),
    emojis: emojisOf(o.tag),
    attachments: asArray(o.attachment, CAPS.attachments)
      .map((a) => {
        if (!a || typeof a !== "object") return null;
        const x = a as Record<string, unknown>;
        const url = urlOf(x.url) ?? httpUrl(iri(x.href));
        if (!url) return null;
        const mediaType = cap(x.mediaType, 100);
        const blurhash = cap(x.blurhash, 100);
        const fp = Array.isArray(x.focalPoint) && x.focalPoint.length === 2 ? (x.focalPoint as unknown[]).map(Number) : null;
        return {
          url,
          mediaType: mediaType && MEDIA_TYPE.test(mediaType) ? mediaType : null,
          description: text(x.name ?? x.summary, 1500),
          blurhash: blurhash && BLURHASH.test(blurhash) ? blurhash : null,
          // On the attachment, or on its `url` Link (as some servers send them), as a number or a numeric string.
          width: dimension(x.width) ?? dimension(field(firstOf(x.url), "width")),
          height: dimension(x.height) ?? dimension(field(firstOf(x.url), "height")),
          focus: fp?.every((n) => Number.isFinite(n) && n >= -1 && n <= 1) ? ([fp[0], fp[1]] as [number, number]) : null,
        };
      })
      .filter((a): a is NonNullable<typeof a> => a !== null),
    poll: isQuestion
      ? {
          options: choices
            .map((c) => ({ title: text(field(c, "name"), 200) ?? "", votes: Number(field(field(c, "replies"), "totalItems") ?? 0) || 0 }))
            .filter((c) => c.title),
          multiple: o.anyOf !== undefined,
          endTime: date(o.endTime) ?? date(o.closed),
          votersCount: typeof o.votersCount === "number" ? o.votersCount : null,
        }
      : null,
    quote: quoteOf(o),
    canQuote: policyOf(o, "canQuote"),
  };
  const r = NoteSchema().safeParse(candidate);
  return r.success ? r.data : null;
}

// ---------- activities ----------

export interface NormalizedActivity {
  id: string | null;
  type: string;
  actor: string;
  /** The object as an IRI, and the embedded document when one was sent (never trusted on its own: C13, C15). */
  objectId: string | null;
  object: Record<string, unknown> | null;
  target: string | null;
  to: string[];
  cc: string[];
  published: number | null;
}

export function normalizeActivity(doc: Json): NormalizedActivity | null {
  if (!doc || typeof doc !== "object" || Array.isArray(doc) || !depthOk(doc, CAPS.depth)) return null;
  const o = doc as Record<string, unknown>;
  const type = typeOf(o);
  const actor = iri(o.actor);
  if (!type || !actor) return null;
  const obj = Array.isArray(o.object) ? o.object[0] : o.object;
  return {
    id: iri(o.id),
    type,
    actor,
    objectId: iri(obj),
    object: obj && typeof obj === "object" ? (obj as Record<string, unknown>) : null,
    target: iri(o.target),
    to: iris(o.to),
    cc: iris(o.cc),
    published: date(o.published),
  };
}

/** Mastodon's visibility from audience: public (Public in to), unlisted (Public in cc), private (followers), direct. */
export function visibilityFromAudience(to: string[], cc: string[], followersUrl: string | null): "public" | "unlisted" | "private" | "direct" {
  if (to.includes(PUBLIC)) return "public";
  if (cc.includes(PUBLIC)) return "unlisted";
  if (followersUrl && (to.includes(followersUrl) || cc.includes(followersUrl))) return "private";
  return "direct";
}

export function sameHost(a: string, b: string): boolean {
  try {
    return new URL(a).host.toLowerCase() === new URL(b).host.toLowerCase();
  } catch {
    return false;
  }
}
