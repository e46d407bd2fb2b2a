// Finding a remote status by URI: a known one, or the object fetched from its origin, checked and handed to
// ingestNote (remote-statuses.ts). A fetched object is trusted only at its own id, on the host of its attributedTo
// (security invariants 1–2, C10–C12), and every fetch comes out of a small per-activity budget with loop detection
// (C24): the Resolution every handler of one activity shares (resolution.ts).
import type { DB } from "../../db/client";
import type { AccountRow } from "../../db/schema/index";
import type { StatusRow } from "../../entities/statuses/status";
import type { Config } from "../../env";
import type { Effects } from "../../effects/collector";
import { signedFetchOptions } from "./fetch-options";
import { normalizeNote, sameHost } from "./normalize";
import { isDomainSuspended, resolveActor } from "./remote-accounts";
import { ingestNote } from "./remote-statuses";
import { fetchActivityJson } from "../../net/safe-fetch";
import { FETCH_BUDGET, isLocalUri, isTombstoned, MAX_REPLY_DEPTH, type Resolution, statusByUri } from "./resolution";

/** A resolution for one activity (or one lookup): the full fetch budget, nothing seen yet. */
export function newResolution(db: DB, cfg: Config, fx: Effects): Resolution {
  return { db, cfg, budget: FETCH_BUDGET, seen: new Set(), fx, resolveStatus };
}

/** Fetches an object document, trusting it only at its own id (re-fetched from there, same host). */
export async function fetchObject(r: Resolution, uri: string): Promise<Record<string, unknown> | null> {
  if (r.budget <= 0) return null;
  r.budget--;
  const opts = await signedFetchOptions(r.db, r.cfg);
  let { json } = await fetchActivityJson(uri, opts);
  const id = typeof json.id === "string" ? json.id : null;
  if (id === uri) {
    r.docs?.set(id, json);
    return json;
  }
  if (!id || !sameHost(id, uri) || r.budget <= 0) return null;
  r.budget--;
  ({ json } = await fetchActivityJson(id, opts));
  if (json.id !== id) return null;
  r.docs?.set(id, json);
  return json;
}

/**
 * The status at `uri`: a known one, or the remote object fetched, checked and ingested. Null when it cannot be had
 * (local and unknown, deleted, blocked, over budget, in a loop, not a status, forged).
 */
export async function resolveStatus(r: Resolution, uri: string, depth = 0): Promise<StatusRow | null> {
  const known = await statusByUri(r.db, uri);
  if (known) return known;
  if (isLocalUri(r.cfg, uri) || r.seen.has(uri) || depth > MAX_REPLY_DEPTH) return null;
  r.seen.add(uri);
  let host: string;
  try {
    host = new URL(uri).host;
  } catch {
    return null;
  }
  if ((await isDomainSuspended(r.db, host, r.cfg)) || (await isTombstoned(r.db, uri))) return null;
  let doc: Record<string, unknown> | null;
  try {
    doc = await fetchObject(r, uri);
  } catch (e) {
    console.warn("status fetch failed", uri.slice(0, 200), e instanceof Error ? e.message : e);
    return null;
  }
  const note = doc ? normalizeNote(doc) : null;
  if (!note || !sameHost(note.id, uri) || !sameHost(note.attributedTo, note.id)) return null;
  if (note.id !== uri) {
    const again = await statusByUri(r.db, note.id);
    if (again) return again;
  }
  let author: AccountRow;
  try {
    author = await resolveActor(r.db, r.cfg, note.attributedTo);
  } catch {
    return null;
  }
  return ingestNote(r, note, author, depth);
}
