import { customType, integer } from "drizzle-orm/sqlite-core";
import { padId, unpadId } from "../../lib/text/ids";

/** A 64-bit id stored as 20-digit zero-padded TEXT (see lib/text/ids.ts); the app sees plain decimal strings. */
export const id = customType<{ data: string; driverData: string }>({
  dataType: () => "text",
  toDriver: (v: string) => padId(v),
  fromDriver: (v: string) => unpadId(String(v)),
});

/** Milliseconds since the epoch. */
export const ms = (name: string) => integer(name, { mode: "number" });
export const bool = (name: string) => integer(name, { mode: "boolean" });

/** JSON kept in a TEXT column. */
export const json = <T>() =>
  customType<{ data: T; driverData: string }>({
    dataType: () => "text",
    toDriver: (v: T) => JSON.stringify(v),
    fromDriver: (v: string) => (v == null ? (null as T) : (JSON.parse(v) as T)),
  });
