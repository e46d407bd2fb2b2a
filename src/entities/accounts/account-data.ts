// Tern's own JSON for an account's data (/api/tern/exports/archive, /api/tern/imports) and the settings pages that
// show the same: an archive's state and an import's progress.
import type { ArchiveImportRow, BackupRow, BulkImportRow } from "../../db/schema/index";

/** Tern's own entities (no Mastodon counterpart to check them against). */
export interface TernArchive {
  id: string;
  state: BackupRow["state"];
  created_at: string;
  finished_at: string | null;
  size: BackupRow["fileSize"];
}

export interface TernImport {
  id: string;
  type: BulkImportRow["type"];
  mode: "overwrite" | "merge";
  state: BulkImportRow["state"];
  original_filename: BulkImportRow["originalFilename"];
  total_items: number;
  processed_items: number;
  imported_items: number;
  failed_items: number;
  created_at: string;
  finished_at: string | null;
}

/** What the API and the settings page show of an archive. */
export function renderArchive(b: BackupRow): TernArchive {
  return {
    id: b.id,
    state: b.state,
    created_at: new Date(b.createdAt).toISOString(),
    finished_at: b.finishedAt ? new Date(b.finishedAt).toISOString() : null,
    size: b.fileSize,
  };
}

/** What the API and the settings page show of an import. */
export function renderImport(i: BulkImportRow): TernImport {
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

export interface TernArchiveImport {
  id: string;
  state: ArchiveImportRow["state"];
  phase: ArchiveImportRow["phase"];
  kind: ArchiveImportRow["kind"];
  original_filename: ArchiveImportRow["originalFilename"];
  actor: ArchiveImportRow["actorUri"];
  take_profile: boolean;
  total_items: number;
  processed_items: number;
  imported_items: number;
  skipped_items: number;
  failed_items: number;
  rows_written: number;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

/** What the API and the settings page show of an archive import. */
export function renderArchiveImport(i: ArchiveImportRow): TernArchiveImport {
  return {
    id: i.id,
    state: i.state,
    phase: i.phase,
    kind: i.kind,
    original_filename: i.originalFilename,
    actor: i.actorUri,
    take_profile: i.takeProfile,
    total_items: i.totalItems,
    processed_items: i.processedItems,
    imported_items: i.importedItems,
    skipped_items: i.skippedItems,
    failed_items: i.failedItems,
    rows_written: i.rowsWritten,
    error: i.error,
    created_at: new Date(i.createdAt).toISOString(),
    finished_at: i.finishedAt ? new Date(i.finishedAt).toISOString() : null,
  };
}
