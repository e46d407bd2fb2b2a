// Importing an account archive (issue 33): the zip Mastodon's BackupService writes (outbox.json, actor.json, likes.json,
// bookmarks.json, media_attachments/…, avatar and header), Tern's own archive (src/services/data/export-archive.ts,
// the same layout), or an outbox.json alone. The upload is streamed into R2 and checked before anything else is
// stored: a zip's directory (src/lib/text/zip-read.ts: corrupt files, unsafe paths, zip bombs), the sizes, and whose
// archive it is (the importing account itself, or one of its aliases: the old account a user moves from). A refused
// upload is deleted from R2 and answered with a 4xx; nothing else was written. Accepted, the import is worked through
// in bounded rounds by the `import_archive` effect (import-archive-rounds.ts).
import { and, desc, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { ownRow } from "../../db/owned";
import { archiveImports, type AccountRow, type ArchiveImportRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { Env } from "../../env";
import { normalizeActivity } from "../../federation/remote/normalize";
import { ApiError, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { CollectionItemSplitter, JsonItemsError } from "../../lib/text/json-items";
import { r2Access, type RandomAccess, readCentralDirectory, readEntry, openEntry, type ZipEntryInfo, ZipError } from "../../lib/text/zip-read";

/** One request's upload (the Workers platform takes request bodies up to 100 MB). */
export const ARCHIVE_UPLOAD_MAX_BYTES = 100 * 1024 * 1024;
/** A multipart upload, in all (no ZIP64: a zip is at most 4 GiB). */
export const ARCHIVE_MAX_BYTES = 0xffffffff;
/** outbox.json, likes.json, bookmarks.json: declared (and inflated) size at most. */
export const ARCHIVE_JSON_MAX_BYTES = 256 * 1024 * 1024;
/** Any one file of the archive (a video is at most 99 MB in Mastodon). */
export const ARCHIVE_ENTRY_MAX_BYTES = 128 * 1024 * 1024;
/** Everything the archive expands to. */
export const ARCHIVE_TOTAL_MAX_BYTES = 4 * 1024 * 1024 * 1024;
export const ACTOR_MAX_BYTES = 1024 * 1024;

export const ARCHIVE_FILES = { outbox: "outbox.json", actor: "actor.json", likes: "likes.json", bookmarks: "bookmarks.json" } as const;

export const fileKeyOf = (id: string) => `archive_imports/${id}/upload`;

export interface ArchiveUpload {
  body: ReadableStream<Uint8Array>;
  size: number;
  filename: string | null;
  takeProfile: boolean;
}

const tooLarge = () => new ApiError(413, `Validation failed: File is too large (the limit is ${ARCHIVE_UPLOAD_MAX_BYTES / 1024 / 1024} MB)`);

/** Stores and checks an upload, then starts its import. */
export async function createArchiveImport(db: DB, env: Pick<Env, "MEDIA">, fx: Effects, me: AccountRow, upload: ArchiveUpload): Promise<ArchiveImportRow> {
  if (upload.size > ARCHIVE_UPLOAD_MAX_BYTES) throw tooLarge();
  if (upload.size < 2) throw validationFailed("File can't be blank");
  const now = Date.now();
  const id = snowflake(now);
  const key = fileKeyOf(id);
  const fixed = new FixedLengthStream(upload.size);
  try {
    await Promise.all([env.MEDIA.put(key, fixed.readable), upload.body.pipeTo(fixed.writable)]);
  } catch {
    await env.MEDIA.delete(key).catch(() => {});
    throw validationFailed("File could not be read whole (its length differs from the one announced)");
  }
  return startStoredImport(db, env, fx, me, { id, key, size: upload.size, filename: upload.filename, takeProfile: upload.takeProfile, createdAt: now });
}

/** An import's row as it starts (or as its multipart upload starts): its progress, budget and error all empty. */
export function newArchiveImportRow(
  o: Pick<ArchiveImportRow, "id" | "accountId" | "state" | "kind" | "fileKey" | "fileSize" | "actorUri" | "takeProfile" | "uploadId" | "createdAt"> & {
    originalFilename: string | null;
  },
): ArchiveImportRow {
  return {
    ...o,
    phase: "split",
    originalFilename: o.originalFilename?.slice(0, 255) ?? null,
    parts: {},
    cursor: null,
    totalItems: 0,
    processedItems: 0,
    importedItems: 0,
    skippedItems: 0,
    failedItems: 0,
    attempts: 0,
    rowsWritten: 0,
    budgetDay: 0,
    budgetRows: 0,
    error: null,
    finishedAt: null,
  };
}

/** An upload now whole in R2 (one request, or a multipart upload completed). */
export interface StoredUpload {
  id: string;
  key: string;
  size: number;
  filename: string | null;
  takeProfile: boolean;
  createdAt: number;
}

/**
 * Checks an upload stored in R2 and starts its import; `uploading`: the row of a multipart upload, which becomes the
 * import. A refused upload is deleted (object and row) and answered with a 4xx.
 */
export async function startStoredImport(
  db: DB,
  env: Pick<Env, "MEDIA">,
  fx: Effects,
  me: AccountRow,
  up: StoredUpload,
  uploading = false,
): Promise<ArchiveImportRow> {
  try {
    if (up.size > ARCHIVE_MAX_BYTES) throw new ApiError(413, "Validation failed: File is too large (the limit is 4 GB)");
    const src = r2Access(env.MEDIA, up.key, up.size);
    const head = await src.read(0, Math.min(up.size, 4));
    const kind = head[0] === 0x50 && head[1] === 0x4b ? "zip" : "outbox";
    const actorUri = kind === "zip" ? await checkZip(src, up.takeProfile) : await firstActor(await src.stream(0, up.size), up.size);
    if (!actorUri) throw validationFailed("This archive names no account (actor.json, or the actor of its first activity)");
    if (!(await isSelfOrAlias(db, me, actorUri))) {
      throw validationFailed(`This archive is of another account (${actorUri.slice(0, 200)}); add it as an alias of this account first`);
    }
    const row = newArchiveImportRow({
      id: up.id,
      accountId: me.id,
      state: "in_progress",
      kind,
      fileKey: up.key,
      fileSize: up.size,
      originalFilename: up.filename,
      actorUri,
      takeProfile: up.takeProfile && kind === "zip",
      uploadId: null,
      createdAt: up.createdAt,
    });
    const { id: _, ...set } = row;
    const write = uploading
      ? db
          .update(archiveImports)
          .set(set)
          .where(and(eq(archiveImports.id, up.id), eq(archiveImports.state, "uploading")))
      : db.insert(archiveImports).values(row);
    await commit(db, fx, [write], (fx) => fx.add({ type: "import_archive", importId: up.id, origin: fx.origin }));
    return row;
  } catch (e) {
    await env.MEDIA.delete(up.key).catch(() => {});
    if (uploading) await db.delete(archiveImports).where(and(eq(archiveImports.id, up.id), eq(archiveImports.state, "uploading")));
    if (e instanceof ZipError || e instanceof JsonItemsError) throw validationFailed(`File is not a readable archive: ${e.message}`);
    throw e;
  }
}

/** The zip's directory is sound and holds an outbox; the actor is actor.json's `id` (else the first activity's). */
async function checkZip(src: RandomAccess, takeProfile: boolean): Promise<string | null> {
  const dir = await readCentralDirectory(src, { maxEntrySize: ARCHIVE_ENTRY_MAX_BYTES, maxTotalSize: ARCHIVE_TOTAL_MAX_BYTES });
  const outbox = dir.get(ARCHIVE_FILES.outbox);
  if (!outbox) throw new ZipError("no outbox.json in the zip file");
  for (const name of [ARCHIVE_FILES.outbox, ARCHIVE_FILES.likes, ARCHIVE_FILES.bookmarks]) {
    if ((dir.get(name)?.size ?? 0) > ARCHIVE_JSON_MAX_BYTES) throw new ZipError(`${name} is too large`);
  }
  const actorEntry = dir.get(ARCHIVE_FILES.actor);
  if (actorEntry) {
    const actor = await readActor(src, actorEntry);
    if (typeof actor.id === "string") return actor.id;
  } else if (takeProfile) throw new ZipError("no actor.json in the zip file to take the profile from");
  return firstActor(await openEntry(src, outbox), outbox.size);
}

export async function readActor(src: RandomAccess, e: ZipEntryInfo): Promise<Record<string, unknown>> {
  if (e.size > ACTOR_MAX_BYTES) throw new ZipError("actor.json is too large");
  try {
    const doc = JSON.parse(new TextDecoder().decode(await readEntry(src, e))) as unknown;
    if (doc && typeof doc === "object" && !Array.isArray(doc)) return doc as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ZipError) throw err;
  }
  throw new ZipError("actor.json is not a JSON object");
}

/** The actor of the collection's first activity, reading no further than that activity. */
async function firstActor(stream: ReadableStream<Uint8Array>, size: number): Promise<string | null> {
  if (size > ARCHIVE_JSON_MAX_BYTES) throw new ZipError("outbox.json is too large");
  const splitter = new CollectionItemSplitter({ maxItemChars: 4 * 1024 * 1024, maxItems: Number.MAX_SAFE_INTEGER });
  const reader = stream.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const [first] = splitter.push(value);
      if (first !== undefined) {
        let doc: unknown;
        try {
          doc = JSON.parse(first);
        } catch {
          throw new JsonItemsError("the first item of outbox.json is not JSON");
        }
        return normalizeActivity(doc)?.actor ?? null;
      }
    }
    splitter.end();
    return null;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The archive is this account's own (a Tern archive read back), or of an alias it declared (the account moved from). */
async function isSelfOrAlias(db: DB, me: AccountRow, actorUri: string): Promise<boolean> {
  if (actorUri === me.uri) return true;
  const [hit] = await db.all<{ n: number }>(sql`SELECT 1 AS n FROM account_aliases WHERE account_id = ${padId(me.id)} AND uri = ${actorUri} LIMIT 1`);
  return !!hit || (me.alsoKnownAs ?? []).includes(actorUri);
}

export async function archiveImportsOf(db: DB, accountId: string, limit = 20): Promise<ArchiveImportRow[]> {
  return db.select().from(archiveImports).where(eq(archiveImports.accountId, accountId)).orderBy(desc(archiveImports.id)).limit(limit);
}

export async function archiveImportOf(db: DB, accountId: string, id: string): Promise<ArchiveImportRow> {
  return ownRow(db, archiveImports, id, accountId);
}

/** A failed import starts again from where it stopped (its cursor and keys: nothing is imported twice). */
export async function resumeArchiveImport(db: DB, fx: Effects, accountId: string, id: string): Promise<ArchiveImportRow> {
  const row = await archiveImportOf(db, accountId, id);
  if (row.state !== "failed" || row.phase === "done") throw validationFailed("Only a failed import can be resumed");
  await commit(db, fx, [db.update(archiveImports).set({ state: "in_progress", attempts: 0, error: null }).where(eq(archiveImports.id, row.id))], (fx) =>
    fx.add({ type: "import_archive", importId: row.id, origin: fx.origin }),
  );
  return { ...row, state: "in_progress", attempts: 0, error: null };
}
