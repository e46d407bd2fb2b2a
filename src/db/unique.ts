/** Whether a D1 error (or one it wraps) is a UNIQUE constraint failure, on `table` when given: a parallel write won. */
export function isUniqueViolation(err: unknown, table?: string): boolean {
  for (let e: unknown = err, i = 0; e && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const m = String((e as { message?: unknown }).message ?? e);
    if (m.includes("UNIQUE constraint failed") && (!table || m.includes(`${table}.`))) return true;
  }
  return false;
}
