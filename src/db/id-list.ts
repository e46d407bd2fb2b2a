import { sql, type SQL } from "drizzle-orm";
import { padId } from "../lib/text/ids";

/**
 * A subquery yielding the given ids, bound as ONE JSON parameter. D1 allows 100 bound parameters per statement;
 * this keeps `IN (...)` lists of any length legal (security A18) and lets batched hydration queries stay fixed.
 */
export function idList(ids: readonly string[]): SQL {
  return jsonValues(idsJson(ids));
}

/** Ids as the one JSON value idList binds (padded, as stored): what a frozen statement's `boundList` is given. */
export function idsJson(ids: readonly string[]): string {
  return JSON.stringify(ids.map(padId));
}

/** `(SELECT value FROM json_each(?))` over the placeholder `name`: a list bound as one JSON value in a frozen statement. */
export function boundList(name: string): SQL {
  return jsonValues(sql.placeholder(name));
}

/** `(SELECT value FROM json_each(?))`: the values of a JSON array bound as one parameter (or a placeholder for one). */
export function jsonValues(json: unknown): SQL {
  return sql`(SELECT value FROM json_each(${json}))`;
}

/** `(SELECT value FROM json_each(?))` over any values (names, domains, stored ids), bound as ONE JSON parameter. */
export function valueList(values: readonly unknown[]): SQL {
  return jsonValues(JSON.stringify(values));
}
