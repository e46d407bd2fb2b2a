// Bulk imports (Mastodon's BulkImport + BulkImportService + Import::RowService): an uploaded CSV is checked whole and
// stored with its rows in ONE batch (nothing half-applied), then worked through by the `import_rows` effect in bounded
// rounds: with `overwrite`, first the existing relations the file does not name are undone (PRUNE_PAGE a round), then
// at most ROWS_PER_JOB rows a round, each applied through the same service as its REST action (follow, block, mute,
// domain block, bookmark, list add), so the effects (federation, feeds, streams) are the REST ones. Unknown remote
// accounts and statuses are fetched through the resolver (WebFinger / the status resolver with its fetch budget), one
// row after the other, and a round stops early once ROUND_BUDGET_MS is spent, so a remote server sees at most a few
// requests a round. A row that cannot be applied (unknown account, refused follow …) counts as failed and stays stored
// with its reason (`importFailures` reads them for the settings page); an applied row is deleted.
import { and, asc, eq, gt, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { ownRow } from "../../db/owned";
import { accountDomainBlocks, accounts, blocks, bookmarks, bulkImportRows, bulkImports, follows, listAccounts, lists, mutes, statuses } from "../../db/schema";
import type { AccountRow, BulkImportRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { Config } from "../../env";
import { resolveRemoteAccount } from "../../federation/remote/resolve";
import { statusByUri } from "../../federation/remote/resolution";
import { newResolution, resolveStatus } from "../../federation/remote/resolve-status";
import { ApiError, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { block, unblock } from "../relationships/blocks";
import { bookmark, unbookmark } from "../interactions/bookmarks";
import { blockDomain, normalizeDomain, unblockDomain } from "../relationships/domain-blocks-user";
import { follow, unfollow } from "../relationships/follows";
import { type ImportRowData, type ImportType, accountKey, parseImport } from "./import-csv";
import { addListAccounts, createList, deleteList, removeListAccounts } from "../relationships/lists";
import { mute, unmute } from "../relationships/mutes";
import { accountRows } from "../../db/table-rows";
import { valueList } from "../../db/id-list";

export const ROWS_PER_JOB = 20;
export const PRUNE_PAGE = 50;
const ROUND_BUDGET_MS = 20_000;
/** Rows are stored in chunks of this much JSON per statement (D1 caps a value at 2 MB). */
const CHUNK_BYTES = 400_000;

export interface NewImport {
  type: ImportType;
  overwrite: boolean;
  filename: string | null;
  bytes: Uint8Array;
}

/** Checks and stores an import with its rows in one batch, and starts its processing. */
export async function createImport(db: DB, fx: Effects, cfg: Config, accountId: string, input: NewImport): Promise<BulkImportRow> {
  const rows = parseImport(input.bytes, input.type, cfg.domain);
  const now = Date.now();
  const id = snowflake(now);
  const row: BulkImportRow = {
    id,
    accountId,
    type: input.type,
    overwrite: input.overwrite,
    state: "in_progress",
    phase: input.overwrite ? "prune" : "rows",
    cursor: null,
    originalFilename: input.filename?.slice(0, 255) ?? null,
    totalItems: rows.length,
    processedItems: 0,
    importedItems: 0,
    failedItems: 0,
    createdAt: now,
    finishedAt: null,
  };
  const chunks: string[] = [];
  let current: unknown[] = [];
  let size = 0;
  // A row's seq is its row in the file: the page names a failed row by it.
  for (const r of rows) {
    const item = [r.row, r.key, JSON.stringify(r.data)];
    const s = JSON.stringify(item).length;
    if (size + s > CHUNK_BYTES && current.length) {
      chunks.push(JSON.stringify(current));
      current = [];
      size = 0;
    }
    current.push(item);
    size += s;
  }
  if (current.length) chunks.push(JSON.stringify(current));
  const pid = padId(id);
  await commit(
    db,
    fx,
    [
      db.insert(bulkImports).values(row),
      ...chunks.map((c) =>
        db.run(sql`INSERT INTO bulk_import_rows (import_id, seq, key, data)
        SELECT ${pid}, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(${c})`),
      ),
    ],
    (fx) => fx.add({ type: "import_rows", importId: id, origin: fx.origin }),
  );
  return row;
}

export async function importsOf(db: DB, accountId: string, limit = 20): Promise<BulkImportRow[]> {
  return db.select().from(bulkImports).where(eq(bulkImports.accountId, accountId)).orderBy(sql`${bulkImports.id} DESC`).limit(limit);
}

export async function importOf(db: DB, accountId: string, id: string): Promise<BulkImportRow> {
  return ownRow(db, bulkImports, id, accountId);
}

/** One round of an import (the `import_rows` effect); records the next round while work is left. */
export async function runImportRound(db: DB, fx: Effects, cfg: Config, importId: string): Promise<void> {
  const [imp] = await db.select().from(bulkImports).where(eq(bulkImports.id, importId)).limit(1);
  if (!imp || imp.state === "finished") return;
  const [owner] = await accountRows(db, { where: eq(accounts.id, imp.accountId), limit: 1 });
  if (!owner || owner.suspendedAt) {
    await finish(db, imp.id);
    return;
  }
  const more = imp.phase === "prune" ? await pruneRound(db, fx, cfg, imp) : await rowsRound(db, fx, cfg, imp, owner);
  if (more) fx.add({ type: "import_rows", importId, origin: fx.origin });
}

const finish = (db: DB, id: string) => db.update(bulkImports).set({ state: "finished", finishedAt: Date.now() }).where(eq(bulkImports.id, id));

// ---- overwrite: undo what the file does not name ----

/** The keys of `keys` that the import's rows name. */
async function keysInFile(db: DB, importId: string, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const rows = await db
    .select({ key: bulkImportRows.key })
    .from(bulkImportRows)
    .where(and(eq(bulkImportRows.importId, importId), inArray(bulkImportRows.key, valueList(keys))));
  return new Set(rows.map((r) => r.key));
}

const relKey = (cfg: Config, a: { username: string; domain: string | null }) => accountKey(a.domain ? `${a.username}@${a.domain}` : a.username, cfg.domain);

/** One page of existing relations past the cursor; those absent from the file are undone. Returns "more to do". */
async function pruneRound(db: DB, fx: Effects, cfg: Config, imp: BulkImportRow): Promise<boolean> {
  const me = imp.accountId;
  if (imp.type === "lists") {
    await pruneLists(db, imp);
  } else {
    const page = await existingPage(db, cfg, imp);
    const present = await keysInFile(
      db,
      imp.id,
      page.map((p) => p.key),
    );
    for (const p of page) {
      if (present.has(p.key)) continue;
      try {
        if (imp.type === "following") await unfollow(db, fx, me, p.target);
        else if (imp.type === "blocking") await unblock(db, fx, me, p.target);
        else if (imp.type === "muting") await unmute(db, fx, me, p.target);
        else if (imp.type === "domain_blocking") await unblockDomain(db, fx, me, p.target);
        else if (imp.type === "bookmarks") await unbookmark(db, cfg, p.target, me);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
      }
    }
    const last = page[page.length - 1];
    if (page.length === PRUNE_PAGE && last) {
      await db.update(bulkImports).set({ cursor: last.id }).where(eq(bulkImports.id, imp.id));
      return true;
    }
  }
  await db.update(bulkImports).set({ phase: "rows", cursor: null }).where(eq(bulkImports.id, imp.id));
  return true;
}

/** The account-to-account relation each of these import types replaces. */
const ACCOUNT_RELATIONS = { following: follows, blocking: blocks, muting: mutes };

/** Existing relations of the import's kind after its cursor, oldest first: row id, subject key, target. */
async function existingPage(db: DB, cfg: Config, imp: BulkImportRow): Promise<{ id: string; key: string; target: string }[]> {
  const me = imp.accountId;
  const after = imp.cursor;
  const who = { username: accounts.username, domain: accounts.domain };
  switch (imp.type) {
    case "following":
    case "blocking":
    case "muting": {
      const rel = ACCOUNT_RELATIONS[imp.type];
      const rows = await db
        .select({ id: rel.id, target: rel.targetAccountId, ...who })
        .from(rel)
        .innerJoin(accounts, eq(accounts.id, rel.targetAccountId))
        .where(and(eq(rel.accountId, me), after ? gt(rel.id, after) : undefined))
        .orderBy(asc(rel.id))
        .limit(PRUNE_PAGE);
      return rows.map((r) => ({ id: r.id, key: relKey(cfg, r), target: r.target }));
    }
    case "domain_blocking": {
      const rows = await db
        .select({ id: accountDomainBlocks.id, domain: accountDomainBlocks.domain })
        .from(accountDomainBlocks)
        .where(and(eq(accountDomainBlocks.accountId, me), after ? gt(accountDomainBlocks.id, after) : undefined))
        .orderBy(asc(accountDomainBlocks.id))
        .limit(PRUNE_PAGE);
      return rows.map((r) => ({ id: r.id, key: r.domain, target: r.domain }));
    }
    case "bookmarks": {
      const rows = await db
        .select({ id: bookmarks.id, statusId: bookmarks.statusId, uri: statuses.uri })
        .from(bookmarks)
        .innerJoin(statuses, eq(statuses.id, bookmarks.statusId))
        .where(and(eq(bookmarks.accountId, me), after ? gt(bookmarks.id, after) : undefined))
        .orderBy(asc(bookmarks.id))
        .limit(PRUNE_PAGE);
      return rows.map((r) => ({ id: r.id, key: r.uri, target: r.statusId }));
    }
    default:
      return [];
  }
}

/** Lists (Mastodon: lists the file does not name are deleted, the others emptied; at most 50 lists). */
async function pruneLists(db: DB, imp: BulkImportRow): Promise<void> {
  const [owned, named] = await db.batch([
    db.select({ id: lists.id, title: lists.title }).from(lists).where(eq(lists.accountId, imp.accountId)),
    db
      .selectDistinct({ title: sql<string>`substr(${bulkImportRows.key}, 1, instr(${bulkImportRows.key}, char(10)) - 1)` })
      .from(bulkImportRows)
      .where(eq(bulkImportRows.importId, imp.id)),
  ]);
  const titles = new Set(named.map((n) => n.title));
  for (const l of owned) {
    if (!titles.has(l.title)) await deleteList(db, imp.accountId, l.id).catch(ignoreApiError);
    else {
      const members = await db.select({ id: listAccounts.accountId }).from(listAccounts).where(eq(listAccounts.listId, l.id));
      const ids = members.map((m) => m.id);
      if (ids.length) await removeListAccounts(db, imp.accountId, l.id, ids).catch(ignoreApiError);
    }
  }
}

const ignoreApiError = (e: unknown) => {
  if (!(e instanceof ApiError)) throw e;
};

// ---- rows ----

/**
 * Up to ROWS_PER_JOB rows after the cursor (the last row done), applied one after the other. An applied row is deleted;
 * a failed one stays with its reason for the settings page.
 */
async function rowsRound(db: DB, fx: Effects, cfg: Config, imp: BulkImportRow, owner: AccountRow): Promise<boolean> {
  const after = imp.cursor === null ? null : Number(imp.cursor);
  const rows = await db
    .select({ seq: bulkImportRows.seq, data: bulkImportRows.data })
    .from(bulkImportRows)
    .where(and(eq(bulkImportRows.importId, imp.id), after === null ? undefined : gt(bulkImportRows.seq, after)))
    .orderBy(asc(bulkImportRows.seq))
    .limit(ROWS_PER_JOB);
  const deadline = Date.now() + ROUND_BUDGET_MS;
  const applied: number[] = [];
  const failures: { seq: number; error: string }[] = [];
  const listIds = new Map<string, string>();
  let last = after;
  for (const r of rows) {
    if (last !== after && Date.now() > deadline) break; // the rest waits for the next round
    last = r.seq;
    try {
      await applyRow(db, fx, cfg, imp.type as ImportType, owner, JSON.parse(r.data) as ImportRowData, listIds);
      applied.push(r.seq);
    } catch (e) {
      if (!(e instanceof ApiError) && !(e instanceof RowFailure)) console.warn("import row failed", imp.type, e instanceof Error ? e.message : e);
      failures.push({ seq: r.seq, error: failureReason(e) });
    }
  }
  const done = applied.length + failures.length;
  const left = rows.length > done || rows.length === ROWS_PER_JOB;
  const pid = padId(imp.id);
  await db.batch([
    db.run(sql`DELETE FROM bulk_import_rows WHERE import_id = ${pid} AND seq IN ${valueList(applied)}`),
    ...failures.map((f) =>
      db
        .update(bulkImportRows)
        .set({ error: f.error })
        .where(and(eq(bulkImportRows.importId, imp.id), eq(bulkImportRows.seq, f.seq))),
    ),
    db
      .update(bulkImports)
      .set({
        cursor: last === null ? null : String(last),
        processedItems: sql`${bulkImports.processedItems} + ${done}`,
        importedItems: sql`${bulkImports.importedItems} + ${applied.length}`,
        failedItems: sql`${bulkImports.failedItems} + ${failures.length}`,
        ...(left ? {} : { state: "finished", finishedAt: Date.now() }),
      })
      .where(eq(bulkImports.id, imp.id)),
  ]);
  return left;
}

/** Why a row failed, as the settings page shows it. */
function failureReason(e: unknown): string {
  if (e instanceof RowFailure) return e.message;
  if (e instanceof ApiError) return e.message.replace(/^Validation failed: /, "").slice(0, 300);
  return "it could not be applied (server error)";
}

export interface ImportFailure {
  importId: string;
  /** The row in the file (the header counted). */
  row: number;
  /** What the row named: an address, a domain, a post's URI, a list and an address. */
  subject: string;
  error: string;
}

/** What a row names, for the page. */
function subjectOf(data: string): string {
  const d = JSON.parse(data) as ImportRowData;
  if (d.list_name !== undefined) return `${d.list_name}: ${d.acct ?? ""}`;
  return d.acct ?? d.domain ?? d.uri ?? "";
}

/** The failed rows of each of `imports` that has some, at most `limit` each, in file order (one D1 batch). */
export async function importFailures(db: DB, imports: BulkImportRow[], limit = 100): Promise<Map<string, ImportFailure[]>> {
  const failing = imports.filter((i) => i.failedItems > 0);
  const out = new Map<string, ImportFailure[]>();
  if (!failing.length) return out;
  const reads = failing.map((i) =>
    db
      .select({ importId: bulkImportRows.importId, seq: bulkImportRows.seq, data: bulkImportRows.data, error: bulkImportRows.error })
      .from(bulkImportRows)
      .where(and(eq(bulkImportRows.importId, i.id), isNotNull(bulkImportRows.error)))
      .orderBy(asc(bulkImportRows.seq))
      .limit(limit),
  );
  const results = await db.batch(reads as unknown as [(typeof reads)[number], ...(typeof reads)[number][]]);
  for (const rows of results) {
    for (const r of rows) {
      const list = out.get(r.importId) ?? [];
      list.push({ importId: r.importId, row: r.seq, subject: subjectOf(r.data), error: r.error ?? "" });
      out.set(r.importId, list);
    }
  }
  return out;
}

class RowFailure extends Error {}

/** The account an address names: ours by username, a known remote one, or one fetched through the resolver. */
async function accountFor(db: DB, cfg: Config, acct: string | undefined): Promise<AccountRow> {
  const m = /^([A-Za-z0-9_.-]{1,64})(?:@([A-Za-z0-9.-]{1,253}(?::\d{1,5})?))?$/.exec(acct ?? "");
  if (!m) throw new RowFailure("not an account address (user@domain)");
  const username = m[1] as string;
  const domain = m[2]?.toLowerCase();
  const local = !domain || domain === cfg.domain.toLowerCase() || domain === new URL(cfg.origin).host.toLowerCase();
  const [known] = await accountRows(db, {
    where: and(sql`lower(${accounts.username}) = ${username.toLowerCase()}`, local ? isNull(accounts.domain) : eq(accounts.domain, domain ?? "")),
    limit: 1,
  });
  const a = known ?? (local ? null : await resolveRemoteAccount(db, cfg, { kind: "acct", username, domain: domain ?? "" }).catch(() => null));
  if (!a || a.suspendedAt) throw new RowFailure(local ? "no such account on this server" : "the account was not found on its server");
  return a;
}

async function applyRow(db: DB, fx: Effects, cfg: Config, type: ImportType, owner: AccountRow, d: ImportRowData, listIds: Map<string, string>) {
  const me = owner.id;
  switch (type) {
    case "following": {
      const t = await accountFor(db, cfg, d.acct);
      await follow(db, fx, me, t.id, {
        reblogs: d.show_reblogs ?? undefined,
        notify: d.notify ?? undefined,
        languages: d.languages ?? undefined,
      });
      return;
    }
    case "blocking":
      await block(db, fx, me, (await accountFor(db, cfg, d.acct)).id);
      return;
    case "muting":
      // Mastodon's MuteService: notifications hidden unless the file says otherwise.
      await mute(db, fx, me, (await accountFor(db, cfg, d.acct)).id, { notifications: d.hide_notifications ?? true, duration: 0 });
      return;
    case "domain_blocking": {
      const domain = normalizeDomain(d.domain ?? "");
      if (domain === cfg.domain.toLowerCase()) throw validationFailed("Domain is this server");
      await blockDomain(db, fx, me, domain);
      return;
    }
    case "bookmarks": {
      const uri = d.uri ?? "";
      if (!/^https?:\/\//i.test(uri)) throw new RowFailure("not the address of a post (https://...)");
      const s = (await statusByUri(db, uri)) ?? (await resolveStatus(newResolution(db, cfg, fx), uri).catch(() => null));
      if (!s) throw new RowFailure("the post was not found");
      await bookmark(db, cfg, s.id, me);
      return;
    }
    case "lists": {
      const title = d.list_name ?? "";
      const t = await accountFor(db, cfg, d.acct);
      let listId = listIds.get(title);
      if (!listId) {
        const [found] = await db
          .select({ id: lists.id })
          .from(lists)
          .where(and(eq(lists.accountId, me), eq(lists.title, title)))
          .limit(1);
        listId = found?.id ?? (await createList(db, me, { title })).id;
        listIds.set(title, listId);
      }
      // Import::RowService: the account is followed first (a list holds followed accounts only).
      if (t.id !== me) await follow(db, fx, me, t.id, {});
      await addListAccounts(db, fx, me, listId, [t.id]);
      return;
    }
  }
}
