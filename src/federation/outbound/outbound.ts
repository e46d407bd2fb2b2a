// Builds and delivers the activity for a local action (JOBS message "federate"). Each kind loads what it needs,
// picks the inboxes (src/federation/outbound/recipients.ts) and hands the activity to deliverActivity; when no remote party
// is involved it returns without storing anything. Rows an action removed (a deleted status, an undone follow)
// travel in the action itself.
import { and, asc, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { runBatch } from "../../db/client";
import { accounts, favourites, polls, pollVotes, reports, statuses } from "../../db/schema/index";
import { loadStatusBundle, type StatusRow } from "../../entities/statuses/status";
import type { Env } from "../../env";
import { readConfig } from "../../env";
import { padId } from "../../lib/text/ids";
import type { AccountRow } from "../../db/schema/index";
import type { FederateAction } from "../../effects/types";
import {
  acceptActivity,
  addFeaturedActivity,
  announceActivity,
  blockActivity,
  createActivity,
  deleteActorActivity,
  deleteNoteActivity,
  flagActivity,
  followActivity,
  likeActivity,
  rejectActivity,
  undoActivity,
  updateActorActivity,
  updateNoteActivity,
} from "./activities";
import { renderActor } from "./actor-doc";
import { ensureActorKeys } from "../signing/actor-keys";
import { moveFollowersRound, movedToUri } from "../../services/accounts/account-migration";
import { AS } from "./context";
import { pollAudienceInboxes, voteActivity } from "../remote/poll-votes";
import { type Effects, newActivityUri } from "../../effects/collector";
import { instanceActorAccount } from "./instance-actor";
import { runQuoteFederate } from "./quote-outbound";
import { runCollectionFederate } from "./collections-outbound";
import { relayInboxes, relayInboxesStatement, runRelayFederate } from "./relays";
import { audience, renderNote } from "./note-doc";
import { accountsById, isLocal, isRemote, type Run, send, toAccount } from "./outbound-send";
import {
  accountsByUris,
  followerInboxes,
  followerInboxesStatement,
  followingInboxes,
  interactedInboxesStatement,
  personalInbox,
  preferredInbox,
  remoteInboxes,
} from "./recipients";
import { accountRows, statusRows } from "../../db/table-rows";

async function pair(r: Run, localId: string, remoteId: string) {
  const m = await accountsById(r.db, [localId, remoteId]);
  return [m.get(localId), m.get(remoteId)] as const;
}

// ---- statuses ----

async function createOrUpdate(r: Run, statusId: string, update: boolean) {
  // The status and the inbox lists that follow from its author and id alone, in one batch: its followers', the relays'
  // and (for an edit) those of servers holding a copy through a boost, favourite or reply. Unused when it is not local.
  const author = sql`(SELECT account_id FROM statuses WHERE id = ${padId(statusId)})`;
  const [rows, followers, relayRows, interacted] = (await runBatch(r.db, [
    statusRows(r.db, { where: eq(statuses.id, statusId), limit: 1 }),
    followerInboxesStatement(r.db, author),
    relayInboxesStatement(r.db),
    ...(update ? [interactedInboxesStatement(r.db, statusId)] : []),
  ])) as [StatusRow[], { inbox: string }[], { inbox: string }[], { inbox: string }[] | undefined];
  const [s] = rows;
  if (!s?.local || s.reblogOfId) return;
  const b = await loadStatusBundle(r.db, s.inReplyToId ? [s.id, s.inReplyToId] : [s.id], null);
  const authorRow = b.accounts.get(s.accountId);
  if (!isLocal(authorRow)) return;
  const note = renderNote(r.cfg, b, s.id);
  if (!note) return;
  const inboxes: string[] = remoteInboxes(b.mentions.get(s.id) ?? []);
  if (s.visibility !== "direct") inboxes.push(...followers.map((f) => f.inbox));
  const parent = s.inReplyToId ? b.statuses.get(s.inReplyToId) : undefined;
  if (parent && (s.visibility === "public" || s.visibility === "unlisted")) {
    inboxes.push(...remoteInboxes([b.accounts.get(parent.accountId)]));
  }
  const quote = b.quotes.get(s.id);
  if (quote?.quotedAccountId && (s.visibility === "public" || s.visibility === "unlisted"))
    inboxes.push(...remoteInboxes([b.accounts.get(quote.quotedAccountId)]));
  if (interacted && s.visibility !== "direct") inboxes.push(...interacted.map((i) => i.inbox).filter(Boolean));
  // Relays we follow carry every public status (Mastodon's StatusReachFinder#relay_inboxes).
  if (s.visibility === "public") inboxes.push(...relayRows.map((x) => x.inbox));
  const activity = update ? updateNoteActivity(note, s.editedAt ?? Date.now()) : createActivity(note);
  await send(r, authorRow.id, activity, inboxes);
}

async function deleteStatus(r: Run, a: Extract<FederateAction, { kind: "delete_status" }>) {
  const [author] = (await accountsById(r.db, [a.accountId])).values();
  if (!isLocal(author) || !author.followersUrl) return;
  const mentioned = await accountsByUris(r.db, a.mentionUris);
  const inboxes = remoteInboxes(mentioned);
  if (a.visibility !== "direct") inboxes.push(...(await followerInboxes(r.db, author.id)), ...(a.reachedInboxes ?? []));
  if (a.visibility === "public") inboxes.push(...(await relayInboxes(r.db)));
  const { to, cc } = audience(a.visibility, author.followersUrl, a.mentionUris);
  await send(r, author.id, deleteNoteActivity(author.uri, a.uri, to, cc), inboxes);
}

async function announce(r: Run, reblogId: string) {
  // The boost, the boosted status, both authors and the booster's follower inboxes: ONE batch (the others are found
  // through the boost's row in SQL); unused when it is not a local boost.
  const id = padId(reblogId);
  const booster = sql`(SELECT account_id FROM statuses WHERE id = ${id})`;
  const boosted = sql`(SELECT reblog_of_id FROM statuses WHERE id = ${id})`;
  const [reblogs, targets, authors, followers] = (await runBatch(r.db, [
    statusRows(r.db, { where: eq(statuses.id, reblogId), limit: 1 }),
    statusRows(r.db, { where: sql`${statuses.id} = ${boosted}`, limit: 1 }),
    accountRows(r.db, { where: sql`${accounts.id} IN (${booster}, (SELECT account_id FROM statuses WHERE id = ${boosted}))` }),
    followerInboxesStatement(r.db, booster),
  ])) as [StatusRow[], StatusRow[], AccountRow[], { inbox: string }[]];
  const [reblog] = reblogs;
  if (!reblog?.reblogOfId || !reblog.local) return;
  const [target] = targets;
  if (!target || target.visibility === "direct") return;
  const actor = authors.find((a) => a.id === reblog.accountId);
  const original = authors.find((a) => a.id === target.accountId);
  if (!isLocal(actor) || !original || !actor.followersUrl) return;
  const inboxes = [...followers.map((f) => f.inbox), ...remoteInboxes([original])];
  const activity = announceActivity(actor.uri, reblog.uri, target.uri, actor.followersUrl, original.uri, reblog.createdAt, reblog.visibility);
  // A boost of one's own followers-only post stays followers-only: no Public in cc.
  if (reblog.visibility === "private") activity.cc = [original.uri];
  await send(r, actor.id, activity, inboxes);
}

async function undoAnnounce(r: Run, a: Extract<FederateAction, { kind: "undo_announce" }>) {
  const m = await accountsById(r.db, [a.accountId, a.objectAuthorId]);
  const actor = m.get(a.accountId);
  const original = m.get(a.objectAuthorId);
  if (!isLocal(actor) || !actor.followersUrl) return;
  const inboxes = [...(await followerInboxes(r.db, actor.id)), ...remoteInboxes([original])];
  const inner = announceActivity(actor.uri, a.reblogUri, a.objectUri, actor.followersUrl, original?.uri ?? a.objectUri, Date.now(), "public");
  const undo = undoActivity(actor.uri, { ...inner, published: undefined });
  await send(r, actor.id, { ...undo, to: inner.to, cc: inner.cc }, inboxes);
}

const likeUri = (actor: AccountRow, favouriteId: string) => `${actor.uri}#likes/${favouriteId}`;

async function like(r: Run, a: Extract<FederateAction, { kind: "like" | "undo_like" }>, undo: boolean) {
  // The status and both accounts (its author found through its row): ONE batch.
  const authorOf = sql`(SELECT account_id FROM statuses WHERE id = ${padId(a.statusId)})`;
  const [found, people] = (await runBatch(r.db, [
    r.db.select({ uri: statuses.uri, accountId: statuses.accountId }).from(statuses).where(eq(statuses.id, a.statusId)).limit(1),
    accountRows(r.db, { where: sql`${accounts.id} IN (${padId(a.accountId)}, ${authorOf})` }),
  ])) as [{ uri: string; accountId: string }[], AccountRow[]];
  const [s] = found;
  if (!s) return;
  const actor = people.find((p) => p.id === a.accountId);
  const author = people.find((p) => p.id === s.accountId);
  if (!isLocal(actor) || !isRemote(author)) return;
  const id = likeUri(actor, a.favouriteId);
  if (!undo) await r.db.update(favourites).set({ uri: id }).where(eq(favourites.id, a.favouriteId));
  const activity = likeActivity(id, actor.uri, s.uri);
  await toAccount(r, actor, author, () => (undo ? undoActivity(actor.uri, activity) : activity));
}

// ---- relationships ----

/** A Follow without a stored id (made before federation) still needs a stable one for its Undo. */
const followId = (actor: AccountRow, targetId: string, uri: string) => uri || `${actor.uri}#follows/${targetId}`;

async function relationship(r: Run, a: FederateAction) {
  switch (a.kind) {
    case "follow":
    case "undo_follow": {
      const [actor, target] = await pair(r, a.accountId, a.targetAccountId);
      return toAccount(r, actor, target, (l, t) => {
        const f = followActivity(followId(l, t.id, a.followUri), l.uri, t.uri);
        return a.kind === "follow" ? f : undoActivity(l.uri, f);
      });
    }
    case "accept_follow":
    case "reject_follow": {
      const [local, follower] = await pair(r, a.accountId, a.followerId);
      return toAccount(r, local, follower, (l, f) => {
        const follow = { id: a.followUri || `${f.uri}#follows/${l.id}`, type: "Follow", actor: f.uri, object: l.uri };
        return a.kind === "accept_follow" ? acceptActivity(l.uri, follow) : rejectActivity(l.uri, follow);
      });
    }
    case "block":
    case "undo_block": {
      const [actor, target] = await pair(r, a.accountId, a.targetAccountId);
      return toAccount(r, actor, target, (l, t) => {
        const b = blockActivity(a.blockUri || `${l.uri}#blocks/${t.id}`, l.uri, t.uri);
        return a.kind === "block" ? b : undoActivity(l.uri, b);
      });
    }
  }
}

// ---- account-level ----

async function updateActor(r: Run, accountId: string) {
  const [actor] = (await accountsById(r.db, [accountId])).values();
  if (!isLocal(actor)) return;
  // Followers and followed accounts' servers: a suspension (or its reversal) travels in this Update too.
  const inboxes = [...new Set([...(await followerInboxes(r.db, actor.id)), ...(await followingInboxes(r.db, actor.id))])];
  if (!inboxes.length) return;
  const keys = await ensureActorKeys(r.db, actor.id);
  await send(r, actor.id, updateActorActivity(renderActor(r.cfg, actor, keys.publicKeyPem, await movedToUri(r.db, actor)), Date.now()), inboxes);
}

async function pin(r: Run, a: Extract<FederateAction, { kind: "pin" }>) {
  const [s] = await statusRows(r.db, { where: eq(statuses.id, a.statusId), limit: 1 });
  if (!s || s.accountId !== a.accountId || s.visibility === "direct") return;
  const [actor] = (await accountsById(r.db, [a.accountId])).values();
  if (!isLocal(actor) || !actor.featuredUrl) return;
  await send(r, actor.id, addFeaturedActivity(actor.uri, actor.featuredUrl, s.uri, a.remove), await followerInboxes(r.db, actor.id));
}

async function flag(r: Run, reportId: string) {
  const [report] = await r.db.select().from(reports).where(eq(reports.id, reportId)).limit(1);
  if (!report?.forward) return;
  const [target] = (await accountsById(r.db, [report.targetAccountId])).values();
  if (!isRemote(target)) return;
  const inbox = preferredInbox(target);
  if (!inbox) return;
  // The statuses it names, and the reported account's collections it names (by their ids on its server), in one read.
  const named = (ids: string[]) => sql`(SELECT value FROM json_each(${JSON.stringify(ids.map(padId))}))`;
  const uris =
    report.statusIds.length || report.collectionIds.length
      ? (
          await r.db.all<{ uri: string }>(sql`SELECT uri FROM statuses WHERE id IN ${named(report.statusIds)}
            UNION ALL SELECT uri FROM collections WHERE id IN ${named(report.collectionIds)} AND uri IS NOT NULL`)
        ).map((x) => x.uri)
      : [];
  const id = report.uri ?? newActivityUri(r.cfg.origin);
  if (!report.uri) await r.db.update(reports).set({ uri: id }).where(eq(reports.id, report.id));
  // Signed by the instance actor, so the other server never learns who reported (Mastodon does the same).
  const actor = await instanceActorAccount(r.db, r.cfg);
  await send(r, actor.id, flagActivity(id, actor.uri, [target.uri, ...uris], report.comment), [inbox]);
}

async function deleteActor(r: Run, accountId: string, known?: string[]) {
  const [actor] = (await accountsById(r.db, [accountId])).values();
  if (!isLocal(actor)) return;
  const inboxes = known ?? [...(await followerInboxes(r.db, actor.id)), ...(await followingInboxes(r.db, actor.id))];
  await send(r, actor.id, deleteActorActivity(actor.uri), inboxes);
}

// ---- account migration ----

/** Move {actor: old, object: old, target: new} to the followers' servers (Mastodon's MoveDistributionWorker). */
async function move(r: Run, a: Extract<FederateAction, { kind: "move" }>) {
  const m = await accountsById(r.db, [a.accountId, a.targetAccountId]);
  const actor = m.get(a.accountId);
  const target = m.get(a.targetAccountId);
  if (!isLocal(actor) || !target) return;
  const activity = { "@context": AS, id: `${actor.uri}#moves/${a.migrationId}`, type: "Move", actor: actor.uri, object: actor.uri, target: target.uri };
  await send(r, actor.id, activity, await followerInboxes(r.db, actor.id));
}

/** A round of moving an account's local followers; its effects (and the next round) are recorded on the job's `fx`. */
async function moveFollowers(r: Run, a: Extract<FederateAction, { kind: "move_followers" }>, fx: Effects) {
  await moveFollowersRound(r.db, fx, a.sourceAccountId, a.targetAccountId, a.cursor);
}

// ---- polls ----

/** A local voter's votes on a remote poll: one Create{Note} per choice, to the poll's author (VoteService#deliver_votes!). */
async function vote(r: Run, a: Extract<FederateAction, { kind: "vote" }>) {
  const [rows, votes] = await r.db.batch([
    r.db.select({ poll: polls, uri: statuses.uri }).from(polls).innerJoin(statuses, eq(statuses.id, polls.statusId)).where(eq(polls.id, a.pollId)).limit(1),
    r.db
      .select({ id: pollVotes.id, choice: pollVotes.choice })
      .from(pollVotes)
      .where(and(eq(pollVotes.pollId, a.pollId), eq(pollVotes.accountId, a.accountId)))
      .orderBy(asc(pollVotes.id)),
  ]);
  const row = rows[0];
  if (!row || !votes.length) return;
  const [voter, author] = await pair(r, a.accountId, row.poll.accountId);
  if (!isLocal(voter) || !isRemote(author)) return;
  const inbox = personalInbox(author);
  if (!inbox) return;
  for (const v of votes) {
    const name = row.poll.options[v.choice];
    if (name !== undefined) await send(r, voter.id, voteActivity(voter.uri, v.id, name, row.uri, author.uri), [inbox]);
  }
}

/** Seconds an update_poll waits, so that the votes of those minutes travel in one Update (Mastodon waits 3 minutes). */
const pollUpdateDelay = (env: Env) => {
  const n = Number(env.POLL_UPDATE_DELAY_SECONDS ?? "");
  return env.POLL_UPDATE_DELAY_SECONDS != null && env.POLL_UPDATE_DELAY_SECONDS !== "" && Number.isFinite(n) && n >= 0 ? Math.min(n, 43_200) : 180;
};

/**
 * The counts of a local poll after votes, as Update{Question} (DistributePollUpdateWorker): to the remote voters,
 * boosters and mentioned accounts, and to followers unless the status is direct. Runs once per queued update: the
 * first run only waits (the job comes back after the delay), the second frees the poll's slot and sends what the
 * counts are by then. A `final` one (the cron, once the poll ended, as Mastodon's PollExpirationNotifyWorker) goes at
 * once, closed and with its final counts even when totals were hidden, so the voters' servers close their copy.
 */
async function updatePoll(r: Run, a: Extract<FederateAction, { kind: "update_poll" }>, fx: Effects) {
  const delay = pollUpdateDelay(r.env);
  if (!a.delayed && !a.final && delay > 0) {
    fx.later(delay, { type: "federate", origin: fx.origin, action: { ...a, delayed: true } });
    return;
  }
  await r.db.update(polls).set({ updateQueuedAt: null }).where(eq(polls.statusId, a.statusId));
  const b = await loadStatusBundle(r.db, [a.statusId], null);
  const s = b.statuses.get(a.statusId);
  const poll = b.polls.get(a.statusId);
  if (!s?.local || !poll || (poll.hideTotals && !a.final)) return;
  const author = b.accounts.get(s.accountId);
  if (!isLocal(author)) return;
  const note = renderNote(r.cfg, b, s.id);
  if (!note) return;
  const inboxes = [...remoteInboxes(b.mentions.get(s.id) ?? []), ...(await pollAudienceInboxes(r.db, poll))];
  if (s.visibility !== "direct") inboxes.push(...(await followerInboxes(r.db, author.id)));
  await send(r, author.id, updateNoteActivity(note, poll.updatedAt), inboxes);
}

type FederateKind = FederateAction["kind"];
/** Each kind's action, as a map (so that a handler looked up by a kind is known to take that kind's action). */
type ActionOf = { [K in FederateKind]: Extract<FederateAction, { kind: K }> };
/** Every kind's handler: a kind without one does not compile. */
const HANDLERS: { [K in FederateKind]: (r: Run, a: ActionOf[K], fx: Effects) => Promise<void> } = {
  create: (r, a) => createOrUpdate(r, a.statusId, false),
  update_status: (r, a) => createOrUpdate(r, a.statusId, true),
  delete_status: deleteStatus,
  announce: (r, a) => announce(r, a.reblogId),
  undo_announce: undoAnnounce,
  like: (r, a) => like(r, a, false),
  undo_like: (r, a) => like(r, a, true),
  follow: relationship,
  undo_follow: relationship,
  accept_follow: relationship,
  reject_follow: relationship,
  block: relationship,
  undo_block: relationship,
  update_actor: (r, a) => updateActor(r, a.accountId),
  pin,
  flag: (r, a) => flag(r, a.reportId),
  delete_actor: (r, a) => deleteActor(r, a.accountId, a.inboxes),
  vote,
  update_poll: updatePoll,
  move,
  move_followers: moveFollowers,
  quote_request: runQuoteFederate,
  accept_quote_request: runQuoteFederate,
  reject_quote_request: runQuoteFederate,
  revoke_quote: runQuoteFederate,
  collection_add: runCollectionFederate,
  collection_update: runCollectionFederate,
  collection_remove: runCollectionFederate,
  collection_item_add: runCollectionFederate,
  collection_item_remove: runCollectionFederate,
  feature_request: runCollectionFederate,
  feature_answer: runCollectionFederate,
  feature_revoke: runCollectionFederate,
  relay_follow: runRelayFederate,
  relay_undo: runRelayFederate,
};

/**
 * The kind and its action as one type parameter, so that TypeScript checks the handler call (on the plain union it
 * cannot tie the handler to the action). A kind this build does not know (a job queued by an older one) does nothing.
 */
function dispatch<K extends FederateKind>(r: Run, kind: K, action: ActionOf[K], fx: Effects): Promise<void> {
  if (!Object.hasOwn(HANDLERS, kind)) return Promise.resolve();
  return HANDLERS[kind](r, action, fx);
}

/** Builds and sends the activity of `action`; what follows from it (a next round, a delayed update) is recorded on `fx`. */
export async function runFederate(db: DB, env: Env, origin: string, action: FederateAction, fx: Effects): Promise<void> {
  return dispatch({ db, env, cfg: readConfig(env, origin) }, action.kind, action, fx);
}
