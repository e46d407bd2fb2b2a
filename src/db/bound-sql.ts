import { sql, type SQL } from "drizzle-orm";

/**
 * Raw SQL text with `$name` placeholders, every value BOUND. Statements built as text (the feed rules in
 * timelines/) must never splice values in: a new SQL text per status or per millisecond defeats the runtime's
 * prepared-statement cache (locally it even crashed workerd under load) and invites injection.
 */
export function boundSql(text: string, params: Record<string, string | number | null>): SQL {
  const chunks: SQL[] = [];
  let last = 0;
  for (const m of text.matchAll(/\$([a-z][a-z0-9_]*)\b/g)) {
    const name = m[1] ?? ""; // the group always participates
    if (!(name in params)) throw new Error(`boundSql: no value for $${name}`);
    chunks.push(sql.raw(text.slice(last, m.index)), sql`${params[name]}`);
    last = m.index! + m[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  return sql.join(chunks);
}
