import { type Query, SQL, StringChunk, type QueryWithTypings, type SQLChunk } from "drizzle-orm";
import { BoundedMap } from "../lib/limits/bounded-map";
import { type DB, internals } from "./client";

type Value = string | number | null;

/**
 * An SQL whose text is already made: drizzle asks a statement for its query (`sqlToQuery` → `toQuery`) once per
 * call, and would join the text again from its chunks, tens of KiB of garbage a call for the long statements (the
 * status statement's ~7 KB head, fan-out, notifications). This one answers with the text made once and this call's
 * values. Inside another sql`` it reads as its chunks, like any SQL, so it can still be embedded.
 */
export class PrebuiltSql extends SQL {
  constructor(
    chunks: SQLChunk[],
    private readonly text: string,
    private readonly values: unknown[],
  ) {
    super(chunks);
  }
  override toQuery(): QueryWithTypings {
    return { sql: this.text, params: this.values };
  }
  override append(): this {
    throw new Error("PrebuiltSql: its text is made; build a new statement instead of appending");
  }
}

/**
 * Text with `?` where its values go, split once: `parts` are the literal pieces around them (as chunks, immutable and
 * shared by every call) and `text` the whole. Its values are bound per call with `prebuilt`.
 */
export interface Prebuilt {
  chunks: StringChunk[];
  text: string;
}

export function prebuiltText(parts: readonly string[]): Prebuilt {
  for (const p of parts) if (p.includes("?")) throw new Error("prebuilt SQL: a `?` in the text's literals would be read as a parameter");
  return { chunks: parts.map((p) => new StringChunk(p)), text: parts.join("?") };
}

/**
 * A query text drizzle (or a hole) wrote, with `?` for each of its `params` parameters, split once. Every `?` must be
 * a parameter: one inside the text's own literals would shift every value after it, so it is refused here.
 */
export function prebuiltQuery(text: string, params: number, who: string): Prebuilt {
  const parts = text.split("?");
  if (parts.length - 1 !== params) throw new Error(`${who}: a \`?\` in the statement's text is not a parameter`);
  return prebuiltText(parts);
}

/** The statement of `t` with `values` bound, in order (as many as `t` has `?`). */
export function prebuilt(t: Prebuilt, values: unknown[]): SQL {
  const chunks: SQLChunk[] = [t.chunks[0]!];
  for (let i = 0; i < values.length; i++) chunks.push(values[i] as SQLChunk, t.chunks[i + 1]!);
  return new PrebuiltSql(chunks, t.text, values);
}

/** Whole texts kept per parsed text (bindTextWith): one per shape of its holes, a few per statement. */
const MAX_TAILS = 64;

/** SQL text split at its `$name` placeholders, once: the literal parts around them and the names in order. */
export interface BoundText {
  parts: string[];
  names: string[];
  made: Prebuilt;
  /** The whole text for each set of holes it was bound with (bindTextWith), by the holes' texts. */
  tails: BoundedMap<string, Prebuilt>;
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
  return { parts, names, made: prebuiltText(parts), tails: new BoundedMap(MAX_TAILS) };
}

/** The values of `t`'s placeholders in order; a placeholder filled by a hole (bindTextWith) gives the hole's values. */
function valuesOf(t: BoundText, params: Record<string, Value>, holes: readonly (Query | null)[] = []): unknown[] {
  const values: unknown[] = [];
  t.names.forEach((name, i) => {
    const hole = holes[i];
    if (hole) values.push(...hole.params);
    else if (name in params) values.push(params[name]);
    else throw new Error(`boundSql: no value for $${name}`);
  });
  return values;
}

/** The parsed text with every placeholder BOUND to its value (never spliced into the text). */
export function bindText(t: BoundText, params: Record<string, Value>): SQL {
  return prebuilt(t.made, valuesOf(t, params));
}

/**
 * The parsed text with its values bound and its `holes` (placeholders named in `holes`: a page's id list, a WHERE)
 * spliced in as SQL built per call (small). The whole text is kept per distinct text of the holes (their values are
 * bound, so a statement has a few: one per shape of its conditions), so a long statement is neither joined nor
 * copied again on every call.
 */
export function bindTextWith(db: DB, t: BoundText, params: Record<string, Value>, holes: Record<string, SQL>): SQL {
  const dialect = internals(db).dialect;
  const built = t.names.map((name) => (name in holes ? dialect.sqlToQuery(holes[name]!) : null));
  const key = built.map((q) => q?.sql ?? "").join("\u0000");
  let made = t.tails.get(key);
  if (!made) {
    let text = t.parts[0]!;
    let count = 0;
    t.names.forEach((_, i) => {
      const q = built[i];
      text += (q ? q.sql : "?") + t.parts[i + 1]!;
      count += q ? q.params.length : 1;
    });
    made = prebuiltQuery(text, count, "bindTextWith");
    t.tails.set(key, made);
  }
  return prebuilt(made, valuesOf(t, params, built));
}

/**
 * Raw SQL text with `$name` placeholders, every value BOUND. Statements built as text (the feed rules in
 * timelines/) must never splice values in: a new SQL text per status or per millisecond defeats the runtime's
 * prepared-statement cache (locally it even crashed workerd under load) and invites injection.
 */
export function boundSql(text: string, params: Record<string, Value>): SQL {
  return bindText(boundText(text), params);
}
