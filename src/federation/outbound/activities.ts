// Builders for every outbound activity kind (spec, Events): Create, Announce, Like, Follow, Accept, Reject, Block,
// Undo of each, Delete, Update, Add/Remove (featured collection), Flag. Ids are stable so a retry is the same
// activity, and receivers dedupe it.
import { AS, NOTE_CONTEXT, QUOTE_CONTEXT } from "./context";
import { PUBLIC } from "../remote/normalize";

type Obj = Record<string, unknown>;

export const createActivity = (note: Obj): Obj => ({
  "@context": NOTE_CONTEXT,
  id: `${note.id}/activity`,
  type: "Create",
  actor: note.attributedTo,
  published: note.published,
  to: note.to,
  cc: note.cc,
  object: note,
});

export const updateNoteActivity = (note: Obj, at: number): Obj => ({
  "@context": NOTE_CONTEXT,
  id: `${note.id}#updates/${at}`,
  type: "Update",
  actor: note.attributedTo,
  published: new Date(at).toISOString(),
  to: note.to,
  cc: note.cc,
  object: note,
});

export const deleteNoteActivity = (actor: string, uri: string, to: string[], cc: string[]): Obj => ({
  "@context": [AS],
  id: `${uri}#delete`,
  type: "Delete",
  actor,
  to,
  cc,
  object: { id: uri, type: "Tombstone", atomUri: uri },
});

export const announceActivity = (
  actor: string,
  reblogUri: string,
  objectUri: string,
  followers: string,
  originalAuthor: string,
  published: number,
  visibility: string,
): Obj => ({
  "@context": AS,
  id: reblogUri,
  type: "Announce",
  actor,
  published: new Date(published).toISOString(),
  to: visibility === "public" ? [PUBLIC] : [followers],
  cc: visibility === "public" ? [originalAuthor, followers] : [originalAuthor, PUBLIC],
  object: objectUri,
});

export const likeActivity = (id: string, actor: string, object: string): Obj => ({ "@context": AS, id, type: "Like", actor, object });
export const followActivity = (id: string, actor: string, object: string): Obj => ({ "@context": AS, id, type: "Follow", actor, object });
export const blockActivity = (id: string, actor: string, object: string): Obj => ({ "@context": AS, id, type: "Block", actor, object });

/** Accept or Reject of a Follow, its id derived from the Follow's. */
const followAnswer =
  (type: "Accept" | "Reject", path: string) =>
  (actor: string, follow: Obj): Obj => ({
    "@context": AS,
    id: `${actor}#${path}/follows/${encodeURIComponent(String(follow.id ?? ""))}`,
    type,
    actor,
    object: follow,
  });

export const acceptActivity = followAnswer("Accept", "accepts");
export const rejectActivity = followAnswer("Reject", "rejects");

export const undoActivity = (actor: string, inner: Obj): Obj => ({
  "@context": AS,
  id: `${inner.id}/undo`,
  type: "Undo",
  actor,
  object: { ...inner, "@context": undefined },
});

export const updateActorActivity = (actorDoc: Obj, at: number): Obj => ({
  "@context": actorDoc["@context"],
  id: `${actorDoc.id}#updates/${at}`,
  type: "Update",
  actor: actorDoc.id,
  to: [PUBLIC],
  object: { ...actorDoc, "@context": undefined },
});

export const addFeaturedActivity = (actor: string, featured: string, objectUri: string, remove = false): Obj => ({
  "@context": AS,
  id: `${actor}#${remove ? "remove" : "add"}/${encodeURIComponent(objectUri)}/${Date.now()}`,
  type: remove ? "Remove" : "Add",
  actor,
  target: featured,
  object: objectUri,
});

export const flagActivity = (id: string, instanceActor: string, targets: string[], content: string): Obj => ({
  "@context": AS,
  id,
  type: "Flag",
  actor: instanceActor,
  content,
  object: targets,
});

export const deleteActorActivity = (actor: string): Obj => ({
  "@context": [AS],
  id: `${actor}#delete`,
  type: "Delete",
  actor,
  to: [PUBLIC],
  object: actor,
});

// ---- quote posts (FEP-044f, Mastodon 4.5) ----

/** What a QuoteRequest, its Accept and Reject are about. `instrument` may be the quoting Note itself (inlined). */
export interface QuoteRequestParts {
  id: string;
  actor: string;
  quotedUri: string;
  instrument: string | Obj;
}

const quoteRequestObject = (p: QuoteRequestParts): Obj => ({ id: p.id, type: "QuoteRequest", actor: p.actor, object: p.quotedUri, instrument: p.instrument });

export const quoteRequestActivity = (p: QuoteRequestParts): Obj => ({ "@context": QUOTE_CONTEXT, ...quoteRequestObject(p) });

export const acceptQuoteRequestActivity = (quotedAuthor: string, quoteId: string, p: QuoteRequestParts, approvalUri: string): Obj => ({
  "@context": QUOTE_CONTEXT,
  id: `${quotedAuthor}#accepts/quote_requests/${quoteId}`,
  type: "Accept",
  actor: quotedAuthor,
  object: quoteRequestObject(p),
  result: approvalUri,
});

export const rejectQuoteRequestActivity = (quotedAuthor: string, p: QuoteRequestParts): Obj => ({
  "@context": QUOTE_CONTEXT,
  id: `${quotedAuthor}#rejects/quote_requests/${encodeURIComponent(p.id)}`,
  type: "Reject",
  actor: quotedAuthor,
  object: quoteRequestObject(p),
});

/** The stamp a quoted author grants, dereferenceable at its id (ActivityPub::QuoteAuthorizationSerializer). */
export const quoteAuthorizationDoc = (id: string, quotedAuthor: string, quotingUri: string, quotedUri: string): Obj => ({
  "@context": QUOTE_CONTEXT,
  id,
  type: "QuoteAuthorization",
  attributedTo: quotedAuthor,
  interactingObject: quotingUri,
  interactionTarget: quotedUri,
});

export const deleteQuoteAuthorizationActivity = (quotedAuthor: string, approvalUri: string): Obj => ({
  "@context": AS,
  id: `${approvalUri}#delete`,
  type: "Delete",
  actor: quotedAuthor,
  to: [PUBLIC],
  object: approvalUri,
});
