// The account archive (Mastodon's BackupService): a zip of actor.json, outbox.json (the account's statuses as Create
// and Announce activities), likes.json and bookmarks.json (status URIs), the avatar and header, and the statuses'
// media under media_attachments/, with the attachment URLs in outbox.json pointing at those paths, as Mastodon writes
// them. Built in the background by the `export_archive` effect in bounded rounds: OUTBOX_PAGE statuses or URI_PAGE
// URIs per round, each round's items written to R2 as one JSON part; a last round streams the parts and the media
// from R2 into one zip object (src/lib/text/zip.ts) without holding it in memory. The download streams that object.
import { and, asc, desc, eq, gt, isNotNull, lt, ne } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, backups, bookmarks, favourites, mediaAttachments, statuses } from "../../db/schema";
import type { AccountRow, BackupParts, BackupRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import { loadStatusBundle } from "../../entities/statuses/status";
import type { Config, Env } from "../../env";
import { announceActivity, createActivity } from "../../federation/outbound/activities";
import { renderActor } from "../../federation/outbound/actor-doc";
import { AS } from "../../federation/outbound/context";
import { renderNote } from "../../federation/outbound/note-doc";
import { randomToken } from "../../lib/security/crypto";
import { validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import { type ZipEntry, writeZip, ZIP_MAX_BYTES, zipSize } from "../../lib/text/zip";
import { accountRows } from "../../db/table-rows";

export const OUTBOX_PAGE = 200;
export const URI_PAGE = 2000;
/** Media files per archive, newest first: each is one R2 read in the assembling round (subrequest limits). */
export const ARCHIVE_MEDIA_LIMIT = 500;
/** Mastodon's BackupPolicy: one archive per 6 days. */
export const ARCHIVE_MIN_INTERVAL_MS = 6 * 24 * 3600 * 1000;

type Phase = "outbox" | "likes" | "bookmarks";
const NEXT: Record<string, string> = { outbox: "likes", likes: "bookmarks", bookmarks: "assemble" };
const enc = new TextEncoder();
const partsPrefix = (id: string) => `backups/${id}/parts/`;

export async function requestArchive(db: DB, fx: Effects, accountId: string, now = Date.now()): Promise<BackupRow> {
  const [recent] = await db
    .select({ id: backups.id })
    .from(backups)
    .where(and(eq(backups.accountId, accountId), ne(backups.state, "failed"), gt(backups.createdAt, now - ARCHIVE_MIN_INTERVAL_MS)))
    .limit(1);
  if (recent) throw validationFailed("You can request an archive once every 6 days");
  const row: BackupRow = {
    id: snowflake(now),
    accountId,
    state: "pending",
    phase: "outbox",
    cursor: null,
    parts: {},
    fileKey: null,
    fileSize: null,
    error: null,
    createdAt: now,
    finishedAt: null,
  };
  await commit(db, fx, [db.insert(backups).values(row)], (fx) => fx.add({ type: "export_archive", backupId: row.id, origin: fx.origin }));
  return row;
}

export async function latestArchive(db: DB, accountId: string): Promise<BackupRow | null> {
  const [row] = await db.select().from(backups).where(eq(backups.accountId, accountId)).orderBy(desc(backups.id)).limit(1);
  return row ?? null;
}

/** One round of an archive; records the next while work is left. */
export async function runArchiveRound(db: DB, env: Pick<Env, "MEDIA">, fx: Effects, cfg: Config, backupId: string): Promise<void> {
  const [b] = await db.select().from(backups).where(eq(backups.id, backupId)).limit(1);
  if (b?.state !== "pending") return;
  const [account] = await accountRows(db, { where: eq(accounts.id, b.accountId), limit: 1 });
  if (!account) {
    await db.update(backups).set({ state: "failed", error: "account gone" }).where(eq(backups.id, b.id));
    return;
  }
  if (b.phase === "assemble") {
    await assemble(db, env, cfg, b, account);
    return;
  }
  const phase = b.phase as Phase;
  const { items, next } = await readItems(db, cfg, account, phase, b.cursor);
  const parts: BackupParts = { ...b.parts };
  const had = parts[phase] ?? { parts: 0, items: 0 };
  if (items.length) {
    await env.MEDIA.put(`${partsPrefix(b.id)}${phase}-${String(had.parts).padStart(6, "0")}.json`, items.join(","), {
      httpMetadata: { contentType: "application/json" },
    });
    parts[phase] = { parts: had.parts + 1, items: had.items + items.length };
  }
  await db
    .update(backups)
    .set({ parts, cursor: next, phase: next ? phase : (NEXT[phase] ?? "assemble") })
    .where(eq(backups.id, b.id));
  fx.add({ type: "export_archive", backupId: b.id, origin: fx.origin });
}

/** One round's items (JSON texts) and the cursor to continue from (null: the phase is done). */
async function readItems(db: DB, cfg: Config, account: AccountRow, phase: Phase, cursor: string | null): Promise<{ items: string[]; next: string | null }> {
  if (phase === "outbox") {
    const rows = await db
      .select({ id: statuses.id })
      .from(statuses)
      .where(and(eq(statuses.accountId, account.id), cursor ? gt(statuses.id, cursor) : undefined))
      .orderBy(asc(statuses.id))
      .limit(OUTBOX_PAGE);
    const ids = rows.map((r) => r.id);
    const bundle = ids.length ? await loadStatusBundle(db, ids, account.id) : null;
    const items: string[] = [];
    for (const id of ids) {
      const s = bundle?.statuses.get(id);
      if (!s || !bundle) continue;
      let activity: Record<string, unknown> | null = null;
      if (s.reblogOfId) {
        const target = bundle.statuses.get(s.reblogOfId);
        const author = target ? bundle.accounts.get(target.accountId) : undefined;
        if (target && author && account.followersUrl)
          activity = announceActivity(account.uri, s.uri, target.uri, account.followersUrl, author.uri, s.createdAt, s.visibility);
      } else {
        const note = renderNote(cfg, bundle, id);
        if (note) activity = createActivity(localMediaPaths(cfg, note));
      }
      if (!activity) continue;
      const { "@context": _, ...item } = activity;
      items.push(JSON.stringify(item));
    }
    return { items, next: ids.length === OUTBOX_PAGE ? (ids[ids.length - 1] ?? null) : null };
  }
  const table = phase === "likes" ? favourites : bookmarks;
  const rows = await db
    .select({ id: table.id, uri: statuses.uri })
    .from(table)
    .innerJoin(statuses, eq(statuses.id, table.statusId))
    .where(and(eq(table.accountId, account.id), cursor ? gt(table.id, cursor) : undefined))
    .orderBy(asc(table.id))
    .limit(URI_PAGE);
  return { items: rows.map((r) => JSON.stringify(r.uri)), next: rows.length === URI_PAGE ? (rows[rows.length - 1]?.id ?? null) : null };
}

/** Attachment URLs on this server become the archive's own paths (Mastodon strips them to the file's path). */
function localMediaPaths(cfg: Config, note: Record<string, unknown>): Record<string, unknown> {
  const prefix = `${cfg.origin}/media/`;
  const att = note.attachment as { url?: unknown }[] | undefined;
  if (!Array.isArray(att)) return note;
  return {
    ...note,
    attachment: att.map((a) => (typeof a.url === "string" && a.url.startsWith(prefix) ? { ...a, url: `media_attachments/${a.url.slice(prefix.length)}` } : a)),
  };
}

const ext = (key: string) => (/\.([a-z0-9]{1,5})$/i.exec(key)?.[1] ?? "bin").toLowerCase();

/** A stream of byte pieces and R2 objects, one after the other. */
function concat(pieces: (Uint8Array | (() => Promise<ReadableStream<Uint8Array>>))[]): ReadableStream<Uint8Array> {
  let i = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      for (;;) {
        if (reader) {
          const { done, value } = await reader.read();
          if (!done) return c.enqueue(value);
          reader = null;
        }
        const p = pieces[i++];
        if (p === undefined) return c.close();
        if (p instanceof Uint8Array) return c.enqueue(p);
        reader = (await p()).getReader();
      }
    },
  });
}

async function r2Body(env: Pick<Env, "MEDIA">, key: string): Promise<ReadableStream<Uint8Array>> {
  const o = await env.MEDIA.get(key);
  if (!o) throw new Error(`archive: R2 object ${key} is gone`);
  return o.body;
}

async function listAll(bucket: R2Bucket, prefix: string): Promise<R2Object[]> {
  const out: R2Object[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor });
    out.push(...page.objects);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return out;
}

/** A JSON collection entry built from the phase's parts: prefix, the parts joined by commas, suffix. */
function collectionEntry(env: Pick<Env, "MEDIA">, name: string, head: Record<string, unknown>, items: number, parts: R2Object[]): ZipEntry {
  const open = enc.encode(
    `${JSON.stringify({ "@context": AS, id: name, type: "OrderedCollection", totalItems: items, ...head }).slice(0, -1)},"orderedItems":[`,
  );
  const close = enc.encode("]}");
  const comma = enc.encode(",");
  const pieces: (Uint8Array | (() => Promise<ReadableStream<Uint8Array>>))[] = [open];
  parts.forEach((p, n) => {
    if (n) pieces.push(comma);
    pieces.push(() => r2Body(env, p.key));
  });
  pieces.push(close);
  const size = open.length + close.length + parts.reduce((s, p) => s + p.size, 0) + Math.max(0, parts.length - 1);
  return { name, size, open: async () => concat(pieces) };
}

async function assemble(db: DB, env: Pick<Env, "MEDIA">, cfg: Config, b: BackupRow, account: AccountRow): Promise<void> {
  const stored = (await listAll(env.MEDIA, partsPrefix(b.id))).sort((x, y) => (x.key < y.key ? -1 : 1));
  const partsOf = (phase: Phase) => stored.filter((o) => o.key.slice(partsPrefix(b.id).length).startsWith(`${phase}-`));
  const media = await db
    .select({ key: mediaAttachments.fileKey, size: mediaAttachments.fileSize })
    .from(mediaAttachments)
    .where(and(eq(mediaAttachments.accountId, account.id), isNotNull(mediaAttachments.statusId), isNotNull(mediaAttachments.fileKey)))
    // The newest statuses' media, along media_account_status.
    .orderBy(desc(mediaAttachments.statusId))
    .limit(ARCHIVE_MEDIA_LIMIT);
  const entries: ZipEntry[] = [];
  for (const m of media) {
    const key = m.key as string;
    const size = m.size ?? (await env.MEDIA.head(key))?.size;
    if (size === undefined) continue; // the object is gone: the archive does without it
    entries.push({ name: `media_attachments/${key}`, size, open: () => r2Body(env, key) });
  }
  entries.push(collectionEntry(env, "outbox.json", {}, b.parts.outbox?.items ?? 0, partsOf("outbox")));
  entries.push(collectionEntry(env, "likes.json", {}, b.parts.likes?.items ?? 0, partsOf("likes")));
  entries.push(collectionEntry(env, "bookmarks.json", {}, b.parts.bookmarks?.items ?? 0, partsOf("bookmarks")));
  const actor = renderActor(cfg, account, account.publicKeyPem ?? "");
  actor.outbox = "outbox.json";
  actor.likes = "likes.json";
  actor.bookmarks = "bookmarks.json";
  for (const [field, key, base] of [
    ["icon", account.avatarKey, "avatar"],
    ["image", account.headerKey, "header"],
  ] as const) {
    if (!key) continue;
    const head = await env.MEDIA.head(key);
    if (!head) continue;
    const name = `${base}.${ext(key)}`;
    actor[field] = { ...(actor[field] as Record<string, unknown>), url: name };
    entries.push({ name, size: head.size, open: () => r2Body(env, key) });
  }
  const actorJson = enc.encode(JSON.stringify(actor));
  entries.push({ name: "actor.json", size: actorJson.length, open: async () => actorJson });

  const total = zipSize(entries);
  if (total > ZIP_MAX_BYTES) {
    await db.update(backups).set({ state: "failed", error: "archive larger than 4 GiB" }).where(eq(backups.id, b.id));
    return;
  }
  const key = `backups/${b.id}/archive-${randomToken(16)}.zip`;
  const { readable, writable } = new FixedLengthStream(total);
  await Promise.all([env.MEDIA.put(key, readable, { httpMetadata: { contentType: "application/zip" } }), writeZip(writable, entries, new Date(b.createdAt))]);
  // Older archives of the account go: only the newest is kept.
  const older = await db
    .select({ id: backups.id, fileKey: backups.fileKey })
    .from(backups)
    .where(and(eq(backups.accountId, account.id), ne(backups.id, b.id), lt(backups.id, b.id)));
  const drop = [...stored.map((o) => o.key), ...older.flatMap((o) => (o.fileKey ? [o.fileKey] : []))];
  for (let i = 0; i < drop.length; i += 1000) await env.MEDIA.delete(drop.slice(i, i + 1000));
  await db.batch([
    db.update(backups).set({ state: "ready", phase: "done", fileKey: key, fileSize: total, finishedAt: Date.now() }).where(eq(backups.id, b.id)),
    db
      .update(backups)
      .set({ state: "expired", fileKey: null })
      .where(and(eq(backups.accountId, account.id), ne(backups.id, b.id), lt(backups.id, b.id))),
  ]);
}

/** The ready archive's object, streamed from R2 (null while it is being built or when there is none). */
export async function openArchive(env: Pick<Env, "MEDIA">, b: BackupRow | null): Promise<R2ObjectBody | null> {
  if (b?.state !== "ready" || !b.fileKey) return null;
  return env.MEDIA.get(b.fileKey);
}
