// Three indexes of `statuses` hold only the rows whose column is set (migrations/0033, 0035): a NULL entry was a D1 row
// written with every status and read by nothing. SQLite uses such an index only where the query implies the column
// IS NOT NULL, which every lookup of these shapes does by naming a value. If one of these plans turns into a SCAN,
// a query shape changed and the index no longer serves it.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";

const plan = async (q: string) => (await env.DB.prepare(`EXPLAIN QUERY PLAN ${q}`).all<{ detail: string }>()).results.map((r) => r.detail).join("\n");

describe("partial indexes of statuses", () => {
  it("are used by the lookups that name a boosted status, a parent or a conversation", async () => {
    // Has the viewer boosted it (the status entity's `reblogged`, the boost's own duplicate check).
    expect(await plan("SELECT EXISTS (SELECT 1 FROM statuses xr WHERE xr.reblog_of_id = '1' AND xr.account_id = '2')")).toMatch(
      /SEARCH xr USING COVERING INDEX statuses_reblog_of \(reblog_of_id=\? AND account_id=\?\)/,
    );
    // The boosts of a deleted status, and of an account's statuses (account deletion, Move).
    expect(await plan("SELECT id FROM statuses WHERE reblog_of_id = '1'")).toMatch(/USING (COVERING )?INDEX statuses_reblog_of \(reblog_of_id=\?\)/);
    expect(await plan("SELECT id FROM statuses WHERE reblog_of_id IN (SELECT id FROM statuses WHERE account_id = '2')")).toMatch(
      /SEARCH statuses USING (COVERING )?INDEX statuses_reblog_of \(reblog_of_id=\?\)/,
    );
    expect(await plan("SELECT id FROM statuses WHERE in_reply_to_id = '1'")).toMatch(/statuses_in_reply_to \(in_reply_to_id=\?\)/);
    expect(await plan("SELECT id FROM statuses WHERE conversation_id = '1'")).toMatch(/statuses_conversation \(conversation_id=\?\)/);
  });

  it("have no entry for a status without the column set", async () => {
    const idx = await env.DB.prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ('statuses_reblog_of', 'statuses_in_reply_to', 'statuses_conversation') ORDER BY name",
    ).all<{ name: string; sql: string }>();
    expect(idx.results.map((r) => [r.name, /WHERE \w+ IS NOT NULL$/.test(r.sql)])).toEqual([
      ["statuses_conversation", true],
      ["statuses_in_reply_to", true],
      ["statuses_reblog_of", true],
    ]);
  });
});
