import { sql, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it, vi } from "vitest";
import { accountDomainBlocks, accounts, blocks, mutes, statuses } from "../../src/db/schema";
import { padId } from "../../src/lib/text/ids";
import { hiddenAuthorFor } from "../../src/policy/visibility";

// The condition as it was written with drizzle's table and column references: hiddenAuthorFor now writes their names
// as text and must send the same statement (same text, same values), or the runtime's statement cache would see a
// new statement and the rows read could change.
function reference(v: string, authorCol: SQL | typeof statuses.accountId, now: number): SQL {
  const pv = padId(v);
  return sql`(EXISTS (SELECT 1 FROM ${blocks} WHERE (${blocks.accountId} = ${pv} AND ${blocks.targetAccountId} = ${authorCol}) OR (${blocks.accountId} = ${authorCol} AND ${blocks.targetAccountId} = ${pv}))
    OR EXISTS (SELECT 1 FROM ${mutes} WHERE ${mutes.accountId} = ${pv} AND ${mutes.targetAccountId} = ${authorCol} AND (${mutes.expiresAt} IS NULL OR ${mutes.expiresAt} > ${now}))
    OR EXISTS (SELECT 1 FROM ${accountDomainBlocks} CROSS JOIN ${accounts} da ON da.id = ${authorCol} WHERE ${accountDomainBlocks.accountId} = ${pv} AND ${accountDomainBlocks.domain} = da.domain))`;
}

describe("hiddenAuthorFor", () => {
  it("writes the statement drizzle's references wrote, text and values, for a column and for raw SQL", () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    try {
      const dialect = new SQLiteSyncDialect();
      for (const col of [statuses.accountId, sql.raw("h.author_id"), sql.raw("(SELECT ro.account_id FROM statuses ro WHERE ro.id = h.reblog_of_id)")]) {
        const mine = dialect.sqlToQuery(hiddenAuthorFor("12345", col));
        expect(mine).toEqual(dialect.sqlToQuery(reference("12345", col, Date.now())));
        expect(mine.params).toContain(padId("12345"));
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
