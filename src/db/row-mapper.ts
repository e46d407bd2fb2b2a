// Rows of a frozen select (db/frozen.ts) mapped as drizzle's own select maps them (drizzle 0.45's mapResultRow: each
// value through its field's decoder, nested by its path, a left-joined table whose columns all came back null as
// null), with the work per field done once per statement instead of once per value: drizzle walks each field's path
// with an iterator and a fresh [index, chunk] pair, a few objects per column per row (45 columns for an account), the
// largest source of garbage left in the replayed day's row handling. test/integration/frozen-statements.test.ts
// compares the two.
import { Column, getTableName, is, SQL, Subquery } from "drizzle-orm";

/** A selected field as drizzle's prepared query lists it: where it goes in the row object, and what it is. */
interface SelectedField {
  path: string[];
  field: unknown;
}

interface Decoder {
  mapFromDriverValue(v: unknown): unknown;
}

interface Slot {
  path: string[];
  last: string;
  decoder: Decoder;
  /** For a column of a joined table (path [table, column]): the table's name, to null a join that found nothing. */
  table: string | null;
}

// An SQL's decoder is drizzle-internal (not in its types).
type WithDecoder = { decoder: Decoder };

function decoderOf(field: unknown): Decoder {
  if (is(field, Column)) return field;
  if (is(field, SQL)) return (field as unknown as WithDecoder).decoder;
  if (is(field, Subquery)) return (field as unknown as { _: { sql: WithDecoder } })._.sql.decoder;
  return (field as { sql: WithDecoder }).sql.decoder;
}

/** The mapper of a statement's rows (arrays, in the order of its fields). */
export function rowMapper(fields: readonly SelectedField[], joins: Record<string, boolean> | undefined): (rows: unknown[][]) => unknown[] {
  const slots: Slot[] = fields.map(({ path, field }) => ({
    path,
    last: path[path.length - 1] ?? "",
    decoder: decoderOf(field),
    table: joins && is(field, Column) && path.length === 2 ? getTableName(field.table) : null,
  }));
  const one = (row: unknown[]): Record<string, unknown> => {
    const result: Record<string, unknown> = {};
    let nullify: Record<string, string | false> | null = null;
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]!;
      let node = result;
      for (let j = 0; j < s.path.length - 1; j++) {
        const key = s.path[j]!;
        node[key] ??= {};
        node = node[key] as Record<string, unknown>;
      }
      const raw = row[i];
      const value = raw === null ? null : s.decoder.mapFromDriverValue(raw);
      node[s.last] = value;
      if (s.table !== null) {
        nullify ??= {};
        const name = s.path[0]!;
        const seen = nullify[name];
        if (seen === undefined) nullify[name] = value === null ? s.table : false;
        else if (typeof seen === "string" && seen !== s.table) nullify[name] = false;
      }
    }
    if (nullify && joins) for (const name in nullify) if (typeof nullify[name] === "string" && !joins[nullify[name]]) result[name] = null;
    return result;
  };
  return (rows) => rows.map(one);
}
