// Reading an uploaded CSV as Mastodon's Form::Import does: a header row when the first field is one Mastodon writes
// (`Account address`, `#domain`, `#uri`, `List name`), else the type's default columns (the one-column legacy files
// and header-less lists). Values converted as Mastodon's CSV converters do (booleans, languages split on commas, a
// leading @ dropped from addresses, domains lower-cased); the `'` Tern's exports put before a cell that starts like a
// formula is taken off (src/lib/security/csv-formula.ts). Everything is checked before anything is stored: a file
// that is not UTF-8, empty, of another type's columns, over the row limit or with an over-long value is refused whole.
import { unescapeFormula } from "../../lib/security/csv-formula";
import { ApiError, validationFailed } from "../../lib/http/errors";

export const IMPORT_TYPES = ["following", "blocking", "muting", "domain_blocking", "bookmarks", "lists"] as const;
export type ImportType = (typeof IMPORT_TYPES)[number];

/** Mastodon's limits (Form::Import FILE_SIZE_LIMIT and ROWS_PROCESSING_LIMIT). */
export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 20_000;
const MAX_FIELD = 2048;

export interface ImportRowData {
  acct?: string;
  show_reblogs?: boolean | null;
  notify?: boolean | null;
  languages?: string[] | null;
  hide_notifications?: boolean | null;
  domain?: string;
  uri?: string;
  list_name?: string;
}

export interface ParsedRow {
  /** The record's number in the file, the header's counted (as a spreadsheet numbers its rows). */
  row: number;
  key: string;
  data: ImportRowData;
}

const EXPECTED: Record<ImportType, string[]> = {
  following: ["Account address", "Show boosts", "Notify on new posts", "Languages"],
  blocking: ["Account address"],
  muting: ["Account address", "Hide notifications"],
  domain_blocking: ["#domain"],
  bookmarks: ["#uri"],
  lists: ["List name", "Account address"],
};
const DEFAULT_HEADERS: Record<ImportType, string[]> = {
  following: ["Account address"],
  blocking: ["Account address"],
  muting: ["Account address"],
  domain_blocking: ["#domain"],
  bookmarks: ["#uri"],
  lists: ["List name", "Account address"],
};
const KNOWN_FIRST = new Set(Object.values(EXPECTED).map((h) => h[0]));

/**
 * RFC 4180 records: quoted fields may hold commas, quotes ("") and line breaks; blank lines are skipped. Malformed
 * input is refused whole, as Ruby's CSV (Mastodon's parser) refuses it: a quote inside an unquoted field, anything but a
 * comma or a line break after a closing quote, and a quoted field never closed.
 */
export function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  let rec: string[] = [];
  let field = "";
  let i = 0;
  let line = 1;
  let quoted = false;
  /** The line where the open quoted field started. */
  let quoteLine = 0;
  /** A quoted field just closed: only a comma or a line break may follow. */
  let closed = false;
  let any = false;
  const malformed = (what: string) => validationFailed(`Data is not a valid CSV file (${what})`);
  const endField = () => {
    rec.push(field);
    field = "";
    closed = false;
  };
  const endRecord = () => {
    endField();
    if (any || rec.length > 1 || (rec[0] ?? "") !== "") out.push(rec);
    rec = [];
    any = false;
  };
  while (i < text.length) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        closed = true;
      } else {
        if (ch === "\n" || (ch === "\r" && text[i + 1] !== "\n")) line++;
        field += ch;
      }
      i++;
      continue;
    }
    if (ch === ",") endField();
    else if (ch === "\n" || ch === "\r") {
      endRecord();
      if (ch === "\r" && text[i + 1] === "\n") i++;
      line++;
    } else if (closed) throw malformed(`text after a closing quote on line ${line}`);
    else if (ch === '"') {
      if (field !== "") throw malformed(`a quote inside an unquoted field on line ${line}`);
      quoted = true;
      quoteLine = line;
      any = true;
    } else field += ch;
    i++;
  }
  if (quoted) throw malformed(`the quote opened on line ${quoteLine} is never closed`);
  if (field !== "" || rec.length || closed) endRecord();
  return out;
}

/** ActiveModel::Type::Boolean on a downcased field: blank is nil, "0/f/false/off" false, anything else true. */
function bool(v: string | undefined): boolean | null {
  if (v === undefined) return null;
  const s = v.trim().toLowerCase();
  if (s === "") return null;
  return !["0", "f", "false", "off"].includes(s);
}

/** The row's subject as the overwrite mode compares it (acct without our own domain, lower-cased). */
export function accountKey(acct: string, localDomain: string): string {
  const a = acct.toLowerCase();
  const suffix = `@${localDomain.toLowerCase()}`;
  return a.endsWith(suffix) ? a.slice(0, -suffix.length) : a;
}

export function parseImport(bytes: Uint8Array, type: ImportType, localDomain: string): ParsedRow[] {
  if (bytes.length > IMPORT_MAX_BYTES) throw new ApiError(413, `Validation failed: Data is too large (the limit is ${IMPORT_MAX_BYTES / 1024 / 1024} MB)`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw validationFailed("Data is not a valid UTF-8 CSV file");
  }
  const records = parseCsv(text);
  if (!records.length) throw validationFailed("Data is empty");
  const first = (records[0]?.[0] ?? "").trim();
  let headers: string[];
  let body: string[][];
  let firstRow = 1;
  if (KNOWN_FIRST.has(first)) {
    headers = (records[0] ?? []).map((h) => h.trim());
    body = records.slice(1);
    firstRow = 2;
  } else {
    headers = DEFAULT_HEADERS[type];
    body = records;
  }
  if (!DEFAULT_HEADERS[type].every((h) => headers.includes(h))) {
    throw validationFailed(`Data does not have the columns of a ${type} file (expected ${EXPECTED[type].join(", ")})`);
  }
  if (body.length > IMPORT_MAX_ROWS) throw validationFailed(`Data has more than ${IMPORT_MAX_ROWS} rows`);
  if (!body.length) throw validationFailed("Data has no rows");
  const col = (name: string) => headers.indexOf(name);
  const at = (r: string[], name: string) => {
    const i = col(name);
    const v = i < 0 ? undefined : r[i];
    // Tern's exports prefix cells that look like formulas with a `'` (export-csv.ts): read them as they were.
    return v === undefined ? undefined : unescapeFormula(v);
  };
  return body.map((r, n) => {
    const row = firstRow + n;
    for (const f of r) if (f.length > MAX_FIELD) throw validationFailed(`Data row ${row} has a value over ${MAX_FIELD} characters`);
    const data: ImportRowData = {};
    let key: string;
    if (type === "domain_blocking") {
      data.domain = (at(r, "#domain") ?? "").trim().toLowerCase();
      key = data.domain;
    } else if (type === "bookmarks") {
      data.uri = (at(r, "#uri") ?? "").trim();
      key = data.uri;
    } else {
      data.acct = (at(r, "Account address") ?? "").trim().replace(/^@/, "");
      key = accountKey(data.acct, localDomain);
      if (type === "following") {
        data.show_reblogs = bool(at(r, "Show boosts"));
        data.notify = bool(at(r, "Notify on new posts"));
        const langs = (at(r, "Languages") ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
        data.languages = langs.length ? langs : null;
      } else if (type === "muting") data.hide_notifications = bool(at(r, "Hide notifications"));
      else if (type === "lists") {
        data.list_name = (at(r, "List name") ?? "").trim();
        key = `${data.list_name}\n${key}`;
      }
    }
    return { row, key, data };
  });
}
