// CSV cells a spreadsheet would read as a formula (OWASP "CSV Injection"): Excel, LibreOffice and Google Sheets take
// a cell starting with =, +, -, @, tab or CR as one, so an export opened in them could run a list title such as
// `=HYPERLINK(…)`. Such a cell is written with a leading single quote (a spreadsheet's "this is text" mark, not
// shown) and quoted; the import takes that one quote off again, so Tern reads its own exports back as they were.
// Cells that already start with quotes before such a character get one more, so the round trip is exact for them too
// (`'=x` is written `''=x` and read back `'=x`).

const FORMULA_START = /^'*[=+\-@\t\r]/;

/** The cell as the export writes it: a formula-looking cell gets a leading `'`; `quote` then quotes it for CSV. */
export function escapeFormula(cell: string): { text: string; quote: boolean } {
  return FORMULA_START.test(cell) ? { text: `'${cell}`, quote: true } : { text: cell, quote: false };
}

/** The cell as it was before escapeFormula: one leading `'` taken off when a formula character follows the quotes. */
export function unescapeFormula(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell) ? cell.slice(1) : cell;
}
