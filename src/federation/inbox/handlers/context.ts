// What every inbound activity handler receives, and the lookups most of them need.
import { and, sql } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { AheadRead, DB, FinishingBatch, Statement } from "../../../db/client";
import { accounts } from "../../../db/schema/index";
import type { Config, Env } from "../../../env";
import type { AccountRow } from "../../../db/schema/index";
import type { Effects } from "../../../effects/collector";
import { notifyReadsAhead } from "../../../effects/notify-reads";
import type { NotifyEffect } from "../../../effects/types";
import type { NormalizedActivity, NormalizedNote } from "../../remote/normalize";
import type { Resolution } from "../../remote/resolution";
import { accountRows } from "../../../db/table-rows";

export interface InboxContext {
  db: DB;
  env: Env;
  cfg: Config;
  /** The verified sender; always the activity's actor (checked by inbox-verify). */
  signer: AccountRow;
  activity: NormalizedActivity;
  json: Record<string, unknown>;
  /** Fetch budget for this activity and its effects collector (`fx` is `r.fx`), sent once it has been handled. */
  r: Resolution;
  fx: Effects;
  /**
   * What the processor runs once the activity is handled (mark it seen, delete the inbox item). A handler whose last
   * step is one batch of writes may run them in that batch (`withFinish`), saving the processor its own round trip.
   * `readAhead`: the activity's effects run in this invocation next, so that batch also reads what its notifications'
   * `notify` effects will read (src/effects/notify-reads.ts), and what the handler's other effects ask it to (a remote
   * status's media rows to cache), saving each its round trip.
   */
  finish?: { stmts: Statement[]; done: boolean; readAhead?: boolean };
  /** The handler's first reads, made early (see EarlyReads); taken once, by the handler they were made for. */
  early?: EarlyReads;
}

/**
 * A handler's first reads (an incoming Create's, Like's or Announce's), made in the batch of the POST that stored the
 * item, when the item is processed in that invocation right after its 202 (src/federation/inbox/early-reads.ts): the
 * handler then starts from their results instead of a round trip of its own. `type`: the activity type they were
 * made for; `note`: a Create's object as normalized to make them.
 */
export interface EarlyReads {
  type: string;
  results: unknown[];
  note?: NormalizedNote;
}

/** The early reads made for `type` (once), or null: the handler reads for itself. */
export function takeEarly(ctx: InboxContext, type: string): EarlyReads | null {
  const e = ctx.early;
  if (!e || e.type !== type) return null;
  ctx.early = undefined;
  return e;
}

/**
 * A handler's first batch of reads: the results the POST read early for `type`, else `build`'s statements read now
 * (built only then). Null when `build` has none to make (the activity is dropped): the early reads were made by the
 * same builder for the same activity, so they exist only where it makes statements.
 */
export async function firstReads<U extends BatchItem<"sqlite">, T extends Readonly<[U, ...U[]]>>(
  ctx: InboxContext,
  type: string,
  build: () => T | null,
): Promise<BatchResponse<T> | null> {
  const early = takeEarly(ctx, type);
  if (early) return early.results as BatchResponse<T>;
  const stmts = build();
  return stmts && ctx.db.batch(stmts);
}

/**
 * `stmts` plus the processor's finishing statements (and, when reads are made ahead, those of the notifications
 * recorded so far and of `notify`, the notify effects of this batch, which the handler records once it committed, and
 * `ahead`, the handler's other effects' reads), and a callback to call once that batch has committed. When the batch
 * fails (a unique violation the handler treats as "already done"), the processor finishes on its own.
 */
export function withFinish(ctx: InboxContext, stmts: Statement[], notify: readonly NotifyEffect[] = [], ahead: readonly AheadRead[] = []): FinishingBatch {
  const f = ctx.finish;
  if (!f || f.done) return { stmts, committed: () => {} };
  const reads: AheadRead[] = [];
  if (f.readAhead) {
    const n = notifyReadsAhead(ctx.db, ctx.fx, notify);
    if (n) reads.push(n);
    reads.push(...ahead);
  }
  const all = [...stmts, ...f.stmts];
  const placed = reads.map((r) => ({ r, at: all.push(...r.stmts) - r.stmts.length }));
  return {
    stmts: all,
    committed: (results) => {
      f.done = true;
      if (!results) return;
      for (const { r, at } of placed) r.keep(results.slice(at, at + r.stmts.length));
    },
  };
}

/** An activity we refuse or cannot use: logged and dropped (the sender already has its 202). */
export class DropActivity extends Error {}

export const drop = (why: string): never => {
  throw new DropActivity(why);
};

/** A local account by its ActivityPub id (or profile URL), not suspended. */
export async function localAccountByUri(db: DB, uri: string | null): Promise<AccountRow | null> {
  if (!uri) return null;
  const [row] = await accountRows(db, { where: and(sql`${accounts.domain} IS NULL`, sql`(${accounts.uri} = ${uri} OR ${accounts.url} = ${uri})`), limit: 1 });
  return row && !row.suspendedAt ? row : null;
}

/** A string property of an embedded object, as an IRI. */
export function prop(o: Record<string, unknown> | null, key: string): string | null {
  const v = o?.[key];
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return prop({ x: v[0] }, "x");
  const id = v && typeof v === "object" ? (v as Record<string, unknown>).id : undefined;
  return typeof id === "string" ? id : null;
}

export function typeOf(o: Record<string, unknown> | null): string | null {
  const t = o?.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t) && typeof t[0] === "string") return t[0];
  return null;
}
