import { sql, type SQL } from "drizzle-orm";

type Value = string | number | null;

/** SQL text split at its `$name` placeholders, once: the literal parts around them and the names in order. */
export interface BoundText {
  parts: string[];
  names: string[];
}

/**
 * Parses text with `$name` placeholders. A statement whose text never changes parses it once (`lazy(() =>
 * boundText(…))`) and binds it per call with bindText: drizzle then sends the text as it is instead of building it
 * again from its pieces (a few hundred chunks for the status statement: most of a page's query-building time and
 * garbage).
 */
export function boundText(text: string): BoundText {
  const parts: string[] = [];
  const names: string[] = [];
  let last = 0;
  for (const m of text.matchAll(/\$([a-z][a-z0-9_]*)\b/g)) {
    parts.push(text.slice(last, m.index));
    names.push(m[1] ?? ""); // the group always participates
    last = m.index! + m[0].length;
  }
  parts.push(text.slice(last));
  return { parts, names };
}

/** The parsed text with every placeholder BOUND to its value (never spliced into the text). */
export function bindText(t: BoundText, params: Record<string, Value>): SQL {
  const values = t.names.map((name) => {
    if (!(name in params)) throw new Error(`boundSql: no value for $${name}`);
    return params[name];
  });
  // sql`` takes its literal parts as an array: one chunk per part, each value a bound parameter.
  return sql(t.parts as unknown as TemplateStringsArray, ...values);
}

/**
 * Raw SQL text with `$name` placeholders, every value BOUND. Statements built as text (the feed rules in
 * timelines/) must never splice values in: a new SQL text per status or per millisecond defeats the runtime's
 * prepared-statement cache (locally it even crashed workerd under load) and invites injection.
 */
export function boundSql(text: string, params: Record<string, Value>): SQL {
  return bindText(boundText(text), params);
}
