// Reading a remote ActivityStreams collection (a status's `replies`, an actor's `featured`): the collection's own
// items, then its pages: `first` embedded or by link, then each page's `next`, within a page and item limit. Every
// shape Mastodon, GoToSocial, Hollo, Misskey, Pleroma and Akkoma send is taken: items as IRIs or embedded objects,
// `items` or `orderedItems`, a bare page instead of a collection. Every linked document is fetched from the owner's
// host only, and counts when it is the document asked for: its `id` is the fetched URL, or the same URL but for the
// query (GoToSocial serves `…/replies?only_other_accounts=false&page=true` with the id
// `…/replies?limit=20&only_other_accounts=false`), or it is a page whose `partOf` is the collection being read. A
// document dropped is logged with the reason.
import { sameHost } from "./normalize";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);
/** The id of an item or page given as an IRI or as an embedded object; null otherwise. */
export const idOf = (v: unknown): string | null => (typeof v === "string" ? v : isObj(v) && typeof v.id === "string" ? v.id : null);

const COLLECTIONS = new Set(["Collection", "OrderedCollection"]);
const PAGES = new Set(["CollectionPage", "OrderedCollectionPage"]);
const typesOf = (doc: Obj): string[] => (Array.isArray(doc.type) ? doc.type : [doc.type]).filter((t): t is string => typeof t === "string");

/** Whether `id` names the document at `url`: equal, or equal but for the query string (and fragment). */
export function sameDocument(id: string, url: string): boolean {
  if (id === url) return true;
  try {
    const a = new URL(id);
    const b = new URL(url);
    return a.origin === b.origin && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

export interface CollectionRead {
  /** The owner whose host every linked document must be on (a status's or an actor's id). */
  owner: string;
  /** Fetches one document (signed, SSRF-guarded, counted by the caller); null when none may be fetched any more. */
  fetch: (url: string) => Promise<Obj | null>;
  /** Documents fetched at most (the collection itself, when given as a link, counts as one). */
  maxFetches: number;
  /** Items taken at most. */
  maxItems: number;
  /** For log lines: what is being read ("replies", "featured"). */
  label: string;
}

/**
 * The items of the collection `ref` (embedded or an IRI), in order, at most `maxItems`; null when `ref` is not a
 * collection or page that could be read (logged).
 */
export async function readCollectionItems(ref: unknown, o: CollectionRead): Promise<unknown[] | null> {
  let fetches = 0;
  const load = async (r: unknown, partOf: string | null): Promise<Obj | null> => {
    if (isObj(r)) return r;
    if (typeof r !== "string") return null;
    if (!sameHost(r, o.owner)) return drop(o, r, "on another host than its owner");
    if (fetches >= o.maxFetches) return null;
    fetches++;
    const doc = await o.fetch(r);
    if (!doc) return null;
    const id = idOf(doc);
    if (id && sameDocument(id, r)) return doc;
    const docPartOf = idOf(doc.partOf);
    if (partOf && docPartOf === partOf && typesOf(doc).some((t) => PAGES.has(t))) return doc;
    return drop(o, r, `served with the id ${String(id).slice(0, 200)}`);
  };

  const top = await load(ref, null);
  if (!top) return null;
  const types = typesOf(top);
  if (!types.some((t) => COLLECTIONS.has(t) || PAGES.has(t))) return drop(o, idOf(top) ?? "(embedded)", `of type ${types.join(",") || "none"}`);
  const items: unknown[] = [];
  const take = (doc: Obj) => {
    const raw = doc.orderedItems ?? doc.items;
    for (const x of Array.isArray(raw) ? raw : raw == null ? [] : [raw]) if (items.length < o.maxItems) items.push(x);
  };
  take(top);
  const collectionId = types.some((t) => COLLECTIONS.has(t)) ? idOf(top) : idOf(top.partOf);
  let next: unknown = types.some((t) => COLLECTIONS.has(t)) ? top.first : top.next;
  const seen = new Set<string>([idOf(top) ?? ""]);
  while (next != null && items.length < o.maxItems) {
    const nextId = idOf(next);
    if (nextId && seen.has(nextId)) break; // a page naming itself (or an earlier one) as next
    if (nextId) seen.add(nextId);
    const page = await load(next, collectionId);
    if (!page) break;
    take(page);
    next = page.next;
  }
  return items;
}

function drop(o: CollectionRead, url: string, why: string): null {
  console.info(`${o.label}: dropped ${url.slice(0, 200)}: ${why}`);
  return null;
}
