// CSV exports of an account's relations, in Mastodon's formats (app/models/export.rb): following with its header
// (`Account address,Show boosts,Notify on new posts,Languages`), mutes with theirs (`Account address,Hide
// notifications`), and one column without a header for blocks, domain blocks and bookmarks (status URIs); lists as
// `list title,account address` rows without a header. Followers (one column, no header) is Tern's own addition.
// Local accounts are written `username@domain`. Rows come newest first, read in keyset pages of PAGE rows while the
// response streams, so a large account never sits in memory whole.
import { and, desc, eq, gt, isNull, lt, or } from "drizzle-orm";
import type { DB } from "../db/client";
import { accountDomainBlocks, accounts, blocks, bookmarks, follows, listAccounts, lists, mutes, statuses } from "../db/schema";
import type { Config } from "../env";

export const EXPORT_KINDS = ["follows", "followers", "lists", "blocks", "mutes", "domain_blocks", "bookmarks"] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const isExportKind = (v: string): v is ExportKind => (EXPORT_KINDS as readonly string[]).includes(v);

const PAGE = 1000;

/** One CSV record (RFC 4180, as Ruby's CSV writes it: fields quoted only when they must be). */
export function csvLine(fields: readonly (string | boolean | null | undefined)[]): string {
  return `${fields
    .map((f) => {
      const s = f === null || f === undefined ? "" : String(f);
      return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    })
    .join(",")}\n`;
}

const HEADERS: Partial<Record<ExportKind, string>> = {
  follows: csvLine(["Account address", "Show boosts", "Notify on new posts", "Languages"]),
  mutes: csvLine(["Account address", "Hide notifications"]),
};

type Page = { id: string; line: string }[];
const acct = (cfg: Config, a: { username: string; domain: string | null }) => `${a.username}@${a.domain ?? cfg.domain}`;
const who = { username: accounts.username, domain: accounts.domain };

function readPage(db: DB, cfg: Config, accountId: string, kind: ExportKind, before: string | null): Promise<Page> {
  switch (kind) {
    case "follows":
      return db
        .select({ id: follows.id, ...who, reblogs: follows.showReblogs, notify: follows.notify, languages: follows.languages })
        .from(follows)
        .innerJoin(accounts, eq(accounts.id, follows.targetAccountId))
        .where(and(eq(follows.accountId, accountId), before ? lt(follows.id, before) : undefined))
        .orderBy(desc(follows.id))
        .limit(PAGE)
        .then((rows) => rows.map((r) => ({ id: r.id, line: csvLine([acct(cfg, r), r.reblogs, r.notify, r.languages?.join(", ") ?? ""]) })));
    case "followers":
      return db
        .select({ id: follows.id, ...who })
        .from(follows)
        .innerJoin(accounts, eq(accounts.id, follows.accountId))
        .where(and(eq(follows.targetAccountId, accountId), before ? lt(follows.id, before) : undefined))
        .orderBy(desc(follows.id))
        .limit(PAGE)
        .then((rows) => rows.map((r) => ({ id: r.id, line: csvLine([acct(cfg, r)]) })));
    case "blocks":
      return db
        .select({ id: blocks.id, ...who })
        .from(blocks)
        .innerJoin(accounts, eq(accounts.id, blocks.targetAccountId))
        .where(and(eq(blocks.accountId, accountId), before ? lt(blocks.id, before) : undefined))
        .orderBy(desc(blocks.id))
        .limit(PAGE)
        .then((rows) => rows.map((r) => ({ id: r.id, line: csvLine([acct(cfg, r)]) })));
    case "mutes":
      return db
        .select({ id: mutes.id, ...who, hide: mutes.hideNotifications })
        .from(mutes)
        .innerJoin(accounts, eq(accounts.id, mutes.targetAccountId))
        .where(and(eq(mutes.accountId, accountId), or(isNull(mutes.expiresAt), gt(mutes.expiresAt, Date.now())), before ? lt(mutes.id, before) : undefined))
        .orderBy(desc(mutes.id))
        .limit(PAGE)
        .then((rows) => rows.map((r) => ({ id: r.id, line: csvLine([acct(cfg, r), r.hide]) })));
    case "domain_blocks":
      return db
        .select({ id: accountDomainBlocks.id, domain: accountDomainBlocks.domain })
        .from(accountDomainBlocks)
        .where(and(eq(accountDomainBlocks.accountId, accountId), before ? lt(accountDomainBlocks.id, before) : undefined))
        .orderBy(desc(accountDomainBlocks.id))
        .limit(PAGE)
        .then((rows) => rows.map((r) => ({ id: r.id, line: csvLine([r.domain]) })));
    case "bookmarks":
      return db
        .select({ id: bookmarks.id, uri: statuses.uri })
        .from(bookmarks)
        .innerJoin(statuses, eq(statuses.id, bookmarks.statusId))
        .where(and(eq(bookmarks.accountId, accountId), before ? lt(bookmarks.id, before) : undefined))
        .orderBy(desc(bookmarks.id))
        .limit(PAGE)
        .then((rows) => rows.map((r) => ({ id: r.id, line: csvLine([r.uri]) })));
    case "lists":
      return db
        .select({ id: listAccounts.id, title: lists.title, ...who })
        .from(listAccounts)
        .innerJoin(lists, eq(lists.id, listAccounts.listId))
        .innerJoin(accounts, eq(accounts.id, listAccounts.accountId))
        .where(and(eq(lists.accountId, accountId), before ? lt(listAccounts.id, before) : undefined))
        .orderBy(desc(listAccounts.id))
        .limit(PAGE)
        .then((rows) => rows.map((r) => ({ id: r.id, line: csvLine([r.title, acct(cfg, r)]) })));
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
