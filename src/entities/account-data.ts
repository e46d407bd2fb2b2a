// Tern's own JSON for an account's data (/api/tern/exports/archive, /api/tern/imports) and the settings pages that
// show the same: an archive's state and an import's progress.
import type { BackupRow, BulkImportRow } from "../db/schema";

/** What the API and the settings page show of an archive. */
export function renderArchive(b: BackupRow) {
  return {
    id: b.id,
    state: b.state,
    created_at: new Date(b.createdAt).toISOString(),
    finished_at: b.finishedAt ? new Date(b.finishedAt).toISOString() : null,
    size: b.fileSize,
  };
}

/** What the API and the settings page show of an import. */
export function renderImport(i: BulkImportRow) {
  return {
    id: i.id,
    type: i.type,
    mode: i.overwrite ? "overwrite" : "merge",
    state: i.state,
    original_filename: i.originalFilename,
    total_items: i.totalItems,
    processed_items: i.processedItems,
    imported_items: i.importedItems,
    failed_items: i.failedItems,
    created_at: new Date(i.createdAt).toISOString(),
    finished_at: i.finishedAt ? new Date(i.finishedAt).toISOString() : null,
  };
}
