import { sql, type SQL } from "drizzle-orm";
import { padId } from "../lib/ids";

/**
 * A subquery yielding the given ids, bound as ONE JSON parameter. D1 allows 100 bound parameters per statement;
 * this keeps `IN (...)` lists of any length legal (security A18) and lets batched hydration queries stay fixed.
 */
export function idList(ids: readonly string[]): SQL {
  return jsonValues(JSON.stringify(ids.map(padId)));
}

/** `(SELECT value FROM json_each(?))`: the values of a JSON array bound as one parameter (or a placeholder for one). */
export function jsonValues(json: unknown): SQL {
  return sql`(SELECT value FROM json_each(${json}))`;
}
