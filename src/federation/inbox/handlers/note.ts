// Create, Update and Delete of statuses (Mastodon's ActivityPub::Activity::Create/Update/Delete for objects).
import { sql } from "drizzle-orm";
import { tombstones } from "../../../db/schema/index";
import { padId } from "../../../lib/text/ids";
import { removeStatus } from "../../../services/statuses/delete-status";
import { normalizeNote, sameHost } from "../../remote/normalize";
import { applyPollCounts, voteNoteOf } from "../../remote/poll-votes";
import { handleVoteCreate } from "./vote";
import { applyNoteUpdate, ingestLookupFrom, ingestLookupStatements, ingestNote } from "../../remote/remote-statuses";
import { statusByUri } from "../../remote/resolution";
import { resolveStatus } from "../../remote/resolve-status";
import { refreshIncomingQuote } from "../../remote/quotes-inbound";
import { drop, takeEarly, withFinish, type InboxContext } from "./context";
import { type DB, runBatch, type Statement } from "../../../db/client";
import type { AccountRow } from "../../../db/schema/index";
import type { NormalizedActivity, NormalizedNote } from "../../remote/normalize";
import type { BatchItem } from "drizzle-orm/batch";
import type { StatusRow } from "../../../entities/statuses/status";

export const OBJECT_TYPES = new Set(["Note", "Question", "Article", "Page"]);

/**
 * An incoming Create's first reads (ingestNote's lookups), for the POST to make with its store (EarlyReads): only for
 * an embedded object this handler would ingest, not a poll vote. Null: the handler reads for itself, if at all.
 */
export function createEarlyReads(db: DB, activity: NormalizedActivity, signer: AccountRow): { stmts: Statement[]; note: NormalizedNote } | null {
  const uri = activity.objectId;
  if (!uri || !activity.object || !sameHost(uri, signer.uri) || voteNoteOf(activity.object)) return null;
  const note = normalizeNote(activity.object);
  if (!note || note.attributedTo !== signer.uri) return null;
  return { stmts: [...ingestLookupStatements(db, note)], note };
}

export async function handleCreate(ctx: InboxContext): Promise<void> {
  const { activity, signer } = ctx;
  const uri = activity.objectId;
  if (!uri) return drop("create without object");
  if (!sameHost(uri, signer.uri)) return drop("object id not on the actor's host"); // C11
  const early = takeEarly(ctx, "Create");
  // A poll vote is a Create{Note} too: it counts, and is never stored as a status (Mastodon's poll_vote?).
  const vote = voteNoteOf(activity.object);
  if (vote && (await handleVoteCreate(ctx, vote))) return;
  if (!activity.object) {
    // Only an IRI: fetch it from its origin (it must still be the signer's).
    const s = await resolveStatus(ctx.r, uri);
    if (s && s.accountId !== signer.id) return drop("fetched object has another author");
    return;
  }
  const note = early?.note ?? normalizeNote(activity.object);
  if (!note) return drop("unsupported or malformed object");
  if (note.attributedTo !== signer.uri) return drop("attributedTo is not the actor"); // C12
  // ingestNote's first reads in one batch (made early, with the item's store, when the POST's invocation processes
  // it), and the inbox item's finishing statements in its write batch.
  const pre = ingestLookupFrom(note, early?.results ?? (await ctx.db.batch([...ingestLookupStatements(ctx.db, note)])));
  await ingestNote(ctx.r, note, signer, 0, { pre, withWrites: (writes, notify, ahead) => withFinish(ctx, writes, notify, ahead) });
}

export async function handleUpdateNote(ctx: InboxContext): Promise<void> {
  const { activity, signer, db } = ctx;
  if (!activity.object || !activity.objectId) return drop("update without an embedded object");
  const note = normalizeNote(activity.object);
  if (!note) return drop("malformed object");
  const status = await statusByUri(db, note.id);
  if (!status) return drop("update of an unknown status");
  if (status.accountId !== signer.id || note.attributedTo !== signer.uri || !sameHost(note.id, signer.uri)) return drop("update of another's status"); // C14
  // An Update that is no newer edit still brings a poll's counts (sent after votes, as Mastodon does).
  if (note.poll && status.editedAt != null && (note.updated == null || note.updated <= status.editedAt)) {
    await applyPollCounts(db, status.id, note);
    return;
  }
  // The item's seen and delete go with the update's writes, unless a quote's stamp is still to be checked after them.
  const stamp = !!note.quote?.authorization;
  await applyNoteUpdate(ctx.r, status, note, signer, stamp ? undefined : (writes, notify, ahead) => withFinish(ctx, writes, notify, ahead));
  // A pending quote may now carry the quoted author's stamp.
  if (stamp) await refreshIncomingQuote(ctx.r, status, note);
}

/** Delete{Note} (or Delete{Tombstone}): only by the author (C14); an unknown object is tombstoned for later (C16). */
export async function handleDeleteNote(ctx: InboxContext, known?: StatusRow | null): Promise<void> {
  const { activity, signer, db } = ctx;
  const uri = activity.objectId;
  if (!uri) return drop("delete without object");
  // `known`: the status by uri, read by the caller in its batch (null: none).
  const status = known !== undefined ? known : await statusByUri(db, uri);
  if (status && status.accountId !== signer.id) return drop("delete of another's status"); // C14
  if (!status && !sameHost(uri, signer.uri)) return drop("delete of an object on another host");
  // The last write either way: the inbox item's finishing statements join its batch.
  if (!status) {
    const w = withFinish(ctx, [db.insert(tombstones).values({ uri, accountId: signer.id, createdAt: Date.now() }).onConflictDoNothing()]);
    await runBatch(db, w.stmts);
    w.committed();
    return;
  }
  // Remote media is only a link: nothing to keep for a redraft.
  const w = withFinish(ctx, [db.run(sql`DELETE FROM media_attachments WHERE status_id = ${padId(status.id)} AND file_key IS NULL`)]);
  await removeStatus(db, ctx.fx, status, w.stmts as BatchItem<"sqlite">[]);
  w.committed();
}
