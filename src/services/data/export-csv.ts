// CSV exports of an account's relations, in Mastodon's formats (app/models/export.rb): following with its header
// (`Account address,Show boosts,Notify on new posts,Languages`), mutes with theirs (`Account address,Hide
// notifications`), and one column without a header for blocks, domain blocks and bookmarks (status URIs); lists as
// `list title,account address` rows without a header. Followers (one column, no header) is Tern's own addition.
// Local accounts are written `username@domain`. Cells that start like a formula (=, +, -, @, tab, CR: a list title)
// are written `'`-prefixed and quoted, as OWASP advises; the import reads them back. Rows come newest first, read in keyset pages of PAGE rows while the
// response streams, so a large account never sits in memory whole.
import { and, desc, eq, gt, isNull, lt, or, type SQL } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";
import type { SelectResultFields } from "drizzle-orm/query-builders/select.types";
import type { SQLiteColumn, SQLiteSelect } from "drizzle-orm/sqlite-core";
import type { DB } from "../../db/client";
import { accountDomainBlocks, accounts, blocks, bookmarks, follows, listAccounts, lists, mutes, statuses } from "../../db/schema";
import type { Config } from "../../env";
import { escapeFormula } from "../../lib/security/csv-formula";

export const EXPORT_KINDS = ["follows", "followers", "lists", "blocks", "mutes", "domain_blocks", "bookmarks"] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const isExportKind = (v: string): v is ExportKind => (EXPORT_KINDS as readonly string[]).includes(v);

const PAGE = 1000;

type Field = string | boolean | null | undefined;

/**
 * One CSV record (RFC 4180, as Ruby's CSV writes it: fields quoted only when they must be). A field a spreadsheet
 * would take for a formula is written with a leading `'` and quoted (src/lib/security/csv-formula.ts; the import strips it).
 */
export function csvLine(fields: readonly Field[]): string {
  return `${fields
    .map((f) => {
      const { text, quote } = escapeFormula(f === null || f === undefined ? "" : String(f));
      return quote || /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(",")}\n`;
}

const HEADERS: Partial<Record<ExportKind, string>> = {
  follows: csvLine(["Account address", "Show boosts", "Notify on new posts", "Languages"]),
  mutes: csvLine(["Account address", "Hide notifications"]),
};

type Page = { id: string; line: string }[];
const acct = (cfg: Config, a: { username: string; domain: string | null }) => `${a.username}@${a.domain ?? cfg.domain}`;
const who = lazy(() => ({ username: accounts.username, domain: accounts.domain }));

/** A page of the export: the account's rows (`owned`), newest first by row `id`, older than the cursor `before`. */
async function newestPage<Q extends SQLiteSelect & PromiseLike<{ id: string }[]>>(
  q: Q,
  id: SQLiteColumn,
  owned: SQL | undefined,
  before: string | null,
  fields: (r: Awaited<Q>[number]) => Field[],
): Promise<Page> {
  const rows: Awaited<Q> = await q
    .where(and(owned, before ? lt(id, before) : undefined))
    .orderBy(desc(id))
    .limit(PAGE);
  return rows.map((r) => ({ id: r.id, line: csvLine(fields(r)) }));
}

/**
 * An account's relation rows to other accounts (follows, blocks, mutes): the rows it made, or with `theirs` the rows
 * others made towards it (followers); `extra` columns of the row become the line's `fields` after the address.
 */
type Relation<E extends Record<string, SQLiteColumn>> = {
  table: typeof follows | typeof blocks | typeof mutes;
  theirs?: boolean;
  extra?: E;
  fields?: (r: SelectResultFields<E>) => Field[];
  where?: SQL;
};

/** One page of a relation, newest first: each line is the other account's address, then the relation's fields. */
function relationPage<E extends Record<string, SQLiteColumn>>(db: DB, cfg: Config, accountId: string, before: string | null, rel: Relation<E>): Promise<Page> {
  const { table } = rel;
  const [owner, other] = rel.theirs ? [table.targetAccountId, table.accountId] : [table.accountId, table.targetAccountId];
  const extra: Record<string, SQLiteColumn> = rel.extra ?? {};
  const q = db
    .select({ ...extra, id: table.id, ...who() })
    .from(table)
    .innerJoin(accounts, eq(accounts.id, other))
    .$dynamic();
  return newestPage(q, table.id, and(eq(owner, accountId), rel.where), before, (r) => [acct(cfg, r), ...(rel.fields?.(r as SelectResultFields<E>) ?? [])]);
}

function readPage(db: DB, cfg: Config, accountId: string, kind: ExportKind, before: string | null): Promise<Page> {
  // Rows of a table the account owns through its accountId column, one line each.
  const ownPage = <Q extends SQLiteSelect & PromiseLike<{ id: string }[]>>(
    q: Q,
    table: { id: SQLiteColumn; accountId: SQLiteColumn },
    fields: (r: Awaited<Q>[number]) => Field[],
  ) => newestPage(q, table.id, eq(table.accountId, accountId), before, fields);
  switch (kind) {
    case "follows":
      return relationPage(db, cfg, accountId, before, {
        table: follows,
        extra: { reblogs: follows.showReblogs, notify: follows.notify, languages: follows.languages },
        fields: (r) => [r.reblogs, r.notify, r.languages?.join(", ") ?? ""],
      });
    case "followers":
      return relationPage(db, cfg, accountId, before, { table: follows, theirs: true });
    case "blocks":
      return relationPage(db, cfg, accountId, before, { table: blocks });
    case "mutes":
      return relationPage(db, cfg, accountId, before, {
        table: mutes,
        extra: { hide: mutes.hideNotifications },
        fields: (r) => [r.hide],
        where: or(isNull(mutes.expiresAt), gt(mutes.expiresAt, Date.now())),
      });
    case "domain_blocks": {
      const q = db.select({ id: accountDomainBlocks.id, domain: accountDomainBlocks.domain }).from(accountDomainBlocks).$dynamic();
      return ownPage(q, accountDomainBlocks, (r) => [r.domain]);
    }
    case "bookmarks": {
      const q = db.select({ id: bookmarks.id, uri: statuses.uri }).from(bookmarks).innerJoin(statuses, eq(statuses.id, bookmarks.statusId)).$dynamic();
      return ownPage(q, bookmarks, (r) => [r.uri]);
    }
    case "lists":
      return newestPage(
        db
          .select({ id: listAccounts.id, title: lists.title, ...who() })
          .from(listAccounts)
          .innerJoin(lists, eq(lists.id, listAccounts.listId))
          .innerJoin(accounts, eq(accounts.id, listAccounts.accountId))
          .$dynamic(),
        listAccounts.id,
        eq(lists.accountId, accountId),
        before,
        (r) => [r.title, acct(cfg, r)],
      );
  }
}

/** The CSV as a stream: the header (when the format has one), then the rows, one D1 read per PAGE rows. */
export function exportCsv(db: DB, cfg: Config, accountId: string, kind: ExportKind): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let before: string | null = null;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = "";
      if (!started) {
        started = true;
        text += HEADERS[kind] ?? "";
      }
      const rows = await readPage(db, cfg, accountId, kind, before);
      for (const r of rows) text += r.line;
      if (text) controller.enqueue(enc.encode(text));
      const last = rows[rows.length - 1];
      if (rows.length < PAGE || !last) controller.close();
      else before = last.id;
    },
  });
}

/** Mastodon's file names (`following_accounts.csv` …), which its import page also uses to guess the type. */
export const EXPORT_FILENAMES: Record<ExportKind, string> = {
  follows: "following_accounts.csv",
  followers: "followers.csv",
  lists: "lists.csv",
  blocks: "blocked_accounts.csv",
  mutes: "muted_accounts.csv",
  domain_blocks: "blocked_domains.csv",
  bookmarks: "bookmarks.csv",
};
