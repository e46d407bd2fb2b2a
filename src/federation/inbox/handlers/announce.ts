// Announce (boost), Like, and their Undo.
import { and, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { accounts, statuses } from "../../../db/schema/index";
import type { StatusRow } from "../../../entities/statuses/status";
import { padId, snowflake } from "../../../lib/text/ids";
import { applyFavourite, favouriteChange, unfavouriteStatements } from "../../../services/interactions/favourites";
import { removeStatus } from "../../../services/statuses/delete-status";
import { applyReblog, reblogChange } from "../../../services/interactions/reblogs";
import { accountCanRead, statusReadableBy } from "../../../policy/visibility";
import { normalizeNote, sameHost, visibilityFromAudience } from "../../remote/normalize";
import { accountDomainSql, frozenDomainSuspended, isDomainSuspended } from "../../remote/remote-accounts";
import { isUniqueViolation } from "../../../db/unique";
import { ingestNote } from "../../remote/remote-statuses";
import { firstChunk } from "../../remote/first-chunk";
import { statusByUri } from "../../remote/resolution";
import { resolveStatus } from "../../remote/resolve-status";
import { drop, firstReads, withFinish, type InboxContext } from "./context";
import type { DB } from "../../../db/client";
import type { AccountRow } from "../../../db/schema/index";
import type { Config } from "../../../env";
import type { NormalizedActivity } from "../../remote/normalize";
import { accountRows, statusRowByUri, statusRows } from "../../../db/table-rows";
import { frozenSelect } from "../../../db/frozen";

/** The original an Announce points at. An embedded copy is used only when the signer wrote it (C13). */
async function announcedStatus(ctx: InboxContext): Promise<StatusRow | null> {
  const { activity, signer } = ctx;
  const uri = activity.objectId;
  if (!uri) return null;
  const known = await statusByUri(ctx.db, uri);
  if (known) return known;
  const embedded = activity.object ? normalizeNote(activity.object) : null;
  if (embedded && embedded.id === uri && embedded.attributedTo === signer.uri && sameHost(uri, signer.uri)) {
    return ingestNote(ctx.r, embedded, signer);
  }
  return resolveStatus(ctx.r, uri);
}

// The reads of every incoming Announce and Like, built once per isolate (frozen.ts). Values: `uri` (the object),
// `act` (the activity's id), `signer` (padded).
const p = (name: string) => sql.placeholder(name);
const target$ = () => sql`(SELECT t.id FROM statuses t WHERE t.uri = ${p("uri")})`;
const author$ = () => sql`(SELECT t.account_id FROM statuses t WHERE t.uri = ${p("uri")})`;
const announceTaken = frozenSelect((db) =>
  db
    .select({ id: statuses.id })
    .from(statuses)
    .where(eq(statuses.uri, p("act")))
    .limit(1),
);
const announcedReadable = frozenSelect((db) =>
  db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(sql`${statuses.id} = ${target$()}`, statusReadableBy(p("signer"))))
    .limit(1),
);
const announcedAuthor = frozenSelect((db) => db.select().from(accounts).where(sql`${accounts.id} = ${author$()}`).limit(1));
const announcedAuthorSuspended = frozenDomainSuspended(() => accountDomainSql(author$()));
const signersBoost = frozenSelect((db) =>
  db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, p("signer")), sql`${statuses.reblogOfId} = ${target$()}`))
    .limit(1),
);
const likedReadable = frozenSelect((db) =>
  db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.uri, p("uri")), statusReadableBy(p("signer"))))
    .limit(1),
);

/**
 * An incoming Announce's first reads, one batch: the boost (already taken?), the original when known, whether the
 * signer may read it, its author with the author's domain suspension, and the signer's own boost of it. Made by the
 * handler, or early by the POST that stored the item (EarlyReads). Null: an Announce without an id, dropped.
 */
export function announceReads(db: DB, cfg: Config, activity: NormalizedActivity, signer: AccountRow) {
  if (!activity.id) return null;
  const values = { act: activity.id, uri: activity.objectId ?? "", signer: padId(signer.id) };
  return [
    announceTaken(db, values),
    statusRowByUri(db, values.uri),
    announcedReadable(db, values),
    announcedAuthor(db, values),
    announcedAuthorSuspended(db, cfg, values),
    signersBoost(db, values),
  ] as const;
}

export async function handleAnnounce(ctx: InboxContext): Promise<void> {
  const { db, signer, activity } = ctx;
  const reads = await firstReads(ctx, "Announce", () => announceReads(db, ctx.cfg, activity, signer));
  if (!reads || !activity.id) return drop("announce without id");
  const [taken, known, readable, authors, authorDomain, mineRows] = reads;
  if (taken[0]) return;
  const pre = known[0];
  const target = pre ?? (await announcedStatus(ctx));
  if (!target) return drop("announced object unavailable");
  if (target.reblogOfId) return drop("announce of a boost");
  if (target.visibility !== "public" && target.visibility !== "unlisted") return drop("announce of a non-public status");
  // Read with the batch when the original was known; else (fetched just now) as before.
  const canRead = pre ? readable[0]?.id === target.id : await accountCanRead(db, signer.id, target.id);
  if (!canRead) return drop("announce of a status the actor may not see");
  const author = pre ? authors[0] : (await accountRows(db, { where: eq(accounts.id, target.accountId), limit: 1 }))[0];
  const authorSuspended = pre ? !!authorDomain[0]?.suspended : !!author?.domain && (await isDomainSuspended(db, author.domain, ctx.cfg));
  // C19: boosts of suspended accounts' posts (old ones included) are dropped.
  if (!author || author.suspendedAt || (author.domain && authorSuspended)) return drop("announce of a suspended account's status");
  const mine = pre
    ? mineRows[0]
    : (
        await db
          .select({ id: statuses.id })
          .from(statuses)
          .where(and(eq(statuses.accountId, signer.id), eq(statuses.reblogOfId, target.id)))
          .limit(1)
      )[0];
  if (mine) return;
  const now = Date.now();
  const createdAt = Math.min(activity.published ?? now, now);
  // The same boost as a local one (services/interactions/reblogs.ts): same row, notification and fan-out; the inbox item's
  // finishing statements go in its batch (withFinish).
  const id = snowflake(createdAt);
  const change = reblogChange(db, {
    id,
    uri: activity.id,
    accountId: signer.id,
    local: false,
    reblogOfId: target.id,
    targetAccountId: target.accountId,
    visibility: visibilityFromAudience(activity.to, activity.cc, signer.followersUrl) as StatusRow["visibility"],
    applicationId: null,
    createdAt,
    updatedAt: now,
  });
  // Its first fan-out chunk in the same batch, as an incoming Create's (the chunk finds no row when the boost is not
  // written: the account had boosted the status already).
  const chunk = firstChunk(db, ctx.cfg, id);
  const fanFrom = change.stmts.length;
  const w = withFinish(ctx, [...change.stmts, ...(chunk?.stmts ?? [])], change.notify, chunk?.ahead ? [chunk.ahead] : []);
  let applied: Awaited<ReturnType<typeof applyReblog>>;
  try {
    applied = await applyReblog(db, change, w.stmts);
  } catch (e) {
    if (isUniqueViolation(e, "statuses")) return;
    throw e;
  }
  w.committed(applied.results);
  if (!applied.written) return;
  if (!chunk) return change.effects(ctx.fx);
  change.effectsBesideFanOut(ctx.fx);
  await chunk.record(ctx.fx, applied.results, fanFrom);
}

/**
 * An incoming Like's reads, one batch: the status and whether the actor may read it (accountCanRead's condition). Made
 * by the handler, or early by the POST that stored the item (EarlyReads). Null: a Like of nothing, dropped.
 */
export function likeReads(db: DB, activity: NormalizedActivity, signer: AccountRow) {
  const uri = activity.objectId;
  if (!uri) return null;
  return [statusRowByUri(db, uri), likedReadable(db, { uri, signer: padId(signer.id) })] as const;
}

export async function handleLike(ctx: InboxContext): Promise<void> {
  const { db, signer, activity } = ctx;
  const reads = await firstReads(ctx, "Like", () => likeReads(db, activity, signer));
  if (!reads) return drop("like of an unknown status");
  const [found, readable] = reads;
  const target = found[0];
  if (!target || target.reblogOfId) return drop("like of an unknown status");
  if (readable[0]?.id !== target.id) return drop("like of a status the actor may not see");
  // The same favourite as a local one (services/interactions/favourites.ts): same rows, notification and effects; the inbox item's
  // finishing statements go in its batch.
  const change = favouriteChange(db, signer.id, target, activity.id, false);
  const w = withFinish(ctx, change.stmts, change.notify);
  const results = await applyFavourite(db, ctx.fx, { ...change, stmts: w.stmts });
  if (results) w.committed(results);
}

export async function undoLike(ctx: InboxContext, likeUri: string | null, statusUri: string | null, last = false): Promise<boolean> {
  const { db, signer } = ctx;
  const ps = padId(signer.id);
  const byUri = likeUri ? sql`uri = ${likeUri}` : sql`0`;
  const byStatus = statusUri ? sql`status_id = (SELECT id FROM statuses WHERE uri = ${statusUri})` : sql`0`;
  const stmts = unfavouriteStatements(db, sql`(SELECT id FROM favourites WHERE account_id = ${ps} AND (${byUri} OR ${byStatus}))`);
  // `last`: nothing is written after this batch, so the inbox item's finishing statements may join it.
  const w = last ? withFinish(ctx, [...stmts]) : { stmts: [...stmts], committed: () => {} };
  const res = (await db.batch(w.stmts as [BatchItem<"sqlite">])) as unknown[];
  w.committed();
  return ((res[1] as unknown[] | undefined) ?? []).length > 0;
}

export async function undoAnnounce(ctx: InboxContext, announceUri: string | null): Promise<boolean> {
  const { db, signer } = ctx;
  if (!announceUri) return false;
  const [s] = await statusRows(db, { where: and(eq(statuses.uri, announceUri), eq(statuses.accountId, signer.id)), limit: 1 });
  if (!s?.reblogOfId) return false;
  // The boost goes the way any status goes: feeds, notifications, open streams (a delete event) and fan-out.
  await removeStatus(db, ctx.fx, s);
  return true;
}
