// The distinct domains accounts are stored on, as a recursive CTE `known(d)` that walks `accounts_domain` from one
// domain to the next (a seek each: SQLite has no skip-scan to do it for us). Rows read follow the servers known, not
// their accounts, which is the difference between the peers list or a domain block's round reading a few hundred
// rows and reading every remote account.
import { sql, type SQL } from "drizzle-orm";

/** `WITH RECURSIVE known(d) AS (…)`: one row per distinct non-NULL `accounts.domain`, ascending, then a final NULL. */
export const knownDomainsCte: SQL = sql`WITH RECURSIVE known(d) AS (
    SELECT min(ka.domain) FROM accounts ka
    UNION ALL SELECT (SELECT min(kb.domain) FROM accounts kb WHERE kb.domain > known.d) FROM known WHERE known.d IS NOT NULL)`;
