// Staff moderation of accounts (Mastodon's Admin::AccountsController, Admin::AccountAction, AccountFilter and the
// User/Account policies): listing with filters, approving and rejecting pending sign-ups, disabling, silencing and
// suspending. Every action and its admin_action_logs row are written in one batch.
import { and, eq, inArray, isNotNull, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { idList, type Statement } from "../../db/client";
import {
  accountKeys,
  accountNotes,
  accountPins,
  accounts,
  blocks,
  feedStates,
  followRequests,
  follows,
  listAccounts,
  mutes,
  notifications,
  oauthAccessGrants,
  oauthAccessTokens,
  reports,
  userRoles,
  users,
  webSessions,
} from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import { INSTANCE_ACTOR_USERNAME } from "../../federation/outbound/instance-actor";
import { forbidden, notFound, validationFailed } from "../../lib/http/errors";
import { padId } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { PERMISSIONS, hasPermission } from "../../lib/security/permissions";
import type { AccountRow, RoleRow, UserRow } from "../../db/schema";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { adminLogStatement } from "./log";
import { notificationWrites, retractNotificationsStatement } from "../notifications/notifications";
import { likeSql, likeText } from "../../db/like";
import type { AdminAccountRow } from "../../db/schema";

/** The acting staff member: their account and role (for Mastodon's "role overrides target role" rule). */
export interface Moderator {
  accountId: string;
  role: RoleRow | null;
}

export const ACCOUNT_STATUSES = ["active", "pending", "disabled", "silenced", "suspended", "sensitized"] as const;
export type AccountStatusFilter = (typeof ACCOUNT_STATUSES)[number];

export interface AdminAccountFilter {
  origin?: "local" | "remote";
  status?: AccountStatusFilter;
  /** Staff: users whose role can manage reports (Mastodon's `UserRole.that_can(:manage_reports)`). */
  staff?: boolean;
  /** Users holding one of these roles; an empty list matches nobody. */
  roleIds?: string[];
  username?: string;
  displayName?: string;
  byDomain?: string;
  email?: string;
  ip?: string;
}

const like = likeSql;
const prefix = (raw: string) => `${likeText(raw.trim().toLowerCase(), 1)}%`;

const STAFF_MASK = sql.raw(String(PERMISSIONS.administrator | PERMISSIONS.manage_reports));

function filterConditions(f: AdminAccountFilter): SQL[] {
  const conds: SQL[] = [
    // The instance actor is an accounts row, not a person to moderate.
    or(isNotNull(accounts.domain), ne(accounts.username, INSTANCE_ACTOR_USERNAME))!,
  ];
  if (f.origin === "local") conds.push(isNull(accounts.domain));
  if (f.origin === "remote") conds.push(isNotNull(accounts.domain));
  switch (f.status) {
    case "active":
      conds.push(isNull(accounts.suspendedAt));
      break;
    case "pending":
      conds.push(eq(users.approved, false));
      break;
    case "disabled":
      conds.push(and(eq(users.disabled, true), isNull(accounts.suspendedAt))!);
      break;
    case "silenced":
      conds.push(isNotNull(accounts.silencedAt));
      break;
    case "suspended":
      conds.push(isNotNull(accounts.suspendedAt));
      break;
    case "sensitized":
      conds.push(isNotNull(accounts.sensitizedAt));
      break;
  }
  if (f.staff) conds.push(sql`${users.roleId} IN (SELECT id FROM ${userRoles} WHERE (${userRoles.permissions} & ${STAFF_MASK}) <> 0)`);
  else if (f.roleIds) conds.push(f.roleIds.length ? inArray(users.roleId, idList(f.roleIds)) : sql`0`);
  if (f.username?.trim()) conds.push(like(sql`lower(${accounts.username})`, prefix(f.username)));
  if (f.displayName?.trim()) conds.push(like(sql`lower(${accounts.displayName})`, prefix(f.displayName)));
  if (f.byDomain?.trim()) conds.push(sql`lower(${accounts.domain}) = ${f.byDomain.trim().toLowerCase()}`);
  if (f.email?.trim()) conds.push(like(sql`lower(${users.email})`, prefix(f.email)));
  if (f.ip !== undefined && f.ip.trim() !== "") conds.push(eq(users.signUpIp, f.ip.trim()));
  return conds;
}

function selectAdminAccounts(db: DB) {
  return db
    .select({ account: accounts, user: users, role: userRoles })
    .from(accounts)
    .leftJoin(users, eq(users.accountId, accounts.id))
    .leftJoin(userRoles, eq(userRoles.id, users.roleId));
}

/** One page of accounts matching `f`, newest account first, cursored by account id. */
export async function adminAccountsPage(db: DB, f: AdminAccountFilter, page: Page): Promise<AdminAccountRow[]> {
  const rows = await selectAdminAccounts(db)
    .where(and(...filterConditions(f), cursorWhere(accounts.id, page)))
    .orderBy(cursorOrder(accounts.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}

export async function getAdminAccount(db: DB, id: string): Promise<AdminAccountRow> {
  const rows = await selectAdminAccounts(db).where(eq(accounts.id, id)).limit(1);
  const row = rows[0];
  if (!row || (!row.account.domain && row.account.username === INSTANCE_ACTOR_USERNAME)) throw notFound();
  return row;
}

// ---- policies ----

/** Mastodon's UserRole#overrides?: no role (everyone) is overridden by any role; otherwise a higher position wins. */
function overrides(actor: Moderator, target: RoleRow | null): boolean {
  if (!target) return true;
  return !!actor.role && actor.role.position > target.position;
}

function requireLocalUser(row: AdminAccountRow): asserts row is AdminAccountRow & { user: UserRow } {
  if (row.account.domain || !row.user) throw forbidden();
}

/** The log row of a moderator's action (as `adminLogStatement`). */
export const logStatement = adminLogStatement;

/** One change to the local user's row and its log row in one batch; the account as it now is. */
async function changeUser(db: DB, actor: Moderator, row: AdminAccountRow & { user: UserRow }, action: string, change: Partial<UserRow>) {
  const set = { ...change, updatedAt: Date.now() };
  await db.batch([db.update(users).set(set).where(eq(users.id, row.user.id)), logStatement(db, actor, action, "User", row.user.id, set.updatedAt)]);
  return { ...row, user: { ...row.user, ...set } };
}

/** One change to the account's row and its log row in one batch; the account as it now is. */
async function changeAccount(
  db: DB,
  actor: Moderator,
  row: AdminAccountRow,
  action: string,
  change: Partial<AccountRow>,
  effects?: { fx: Effects; record: (fx: Effects) => void },
): Promise<AdminAccountRow> {
  const set = { ...change, updatedAt: Date.now() };
  const stmts = [
    db.update(accounts).set(set).where(eq(accounts.id, row.account.id)),
    logStatement(db, actor, action, "Account", row.account.id, set.updatedAt),
  ];
  if (effects) await commit(db, effects.fx, stmts, effects.record);
  else await db.batch(stmts as [(typeof stmts)[number], ...(typeof stmts)[number][]]);
  return { ...row, account: { ...row.account, ...set } };
}

// ---- pending sign-ups ----

export async function approveAccount(db: DB, actor: Moderator, id: string): Promise<AdminAccountRow> {
  const row = await getAdminAccount(db, id);
  requireLocalUser(row);
  if (row.user.approved) throw forbidden();
  return changeUser(db, actor, row, "approve", { approved: true });
}

/** Deletes a pending user and its account (Mastodon's DeleteAccountService without reserving the name or e-mail). */
export async function rejectAccount(db: DB, actor: Moderator, id: string): Promise<void> {
  const row = await getAdminAccount(db, id);
  requireLocalUser(row);
  if (row.user.approved) throw forbidden();
  const a = row.account.id;
  const u = row.user.id;
  const now = Date.now();
  // A pending user cannot act (the guard refuses its tokens), so only rows others or the sign-up made can exist.
  await db.batch([
    // First, so that it names the user (read from the rows deleted below).
    logStatement(db, actor, "reject", "User", u, now),
    // Its notifications, and the admin.sign_up ones it caused (the only ones a pending account can be the sender of):
    // each by its index (notifications_account; notifications_activity probed once per local user), not a scan of every
    // notification for `from_account_id`, which rejecting each of a wave of spam sign-ups would repeat.
    db.delete(notifications).where(eq(notifications.accountId, a)),
    retractNotificationsStatement(db, "admin.sign_up", sql`SELECT u.account_id AS recipient, ${padId(a)} AS activity FROM users u`),
    db.delete(follows).where(or(eq(follows.accountId, a), eq(follows.targetAccountId, a))),
    db.delete(followRequests).where(or(eq(followRequests.accountId, a), eq(followRequests.targetAccountId, a))),
    db.delete(blocks).where(or(eq(blocks.accountId, a), eq(blocks.targetAccountId, a))),
    db.delete(mutes).where(or(eq(mutes.accountId, a), eq(mutes.targetAccountId, a))),
    db.delete(accountNotes).where(or(eq(accountNotes.accountId, a), eq(accountNotes.targetAccountId, a))),
    db.delete(accountPins).where(or(eq(accountPins.accountId, a), eq(accountPins.targetAccountId, a))),
    db.delete(listAccounts).where(eq(listAccounts.accountId, a)),
    db.delete(feedStates).where(eq(feedStates.accountId, a)),
    db.delete(oauthAccessTokens).where(eq(oauthAccessTokens.userId, u)),
    db.delete(oauthAccessGrants).where(eq(oauthAccessGrants.userId, u)),
    db.delete(webSessions).where(eq(webSessions.userId, u)),
    db.delete(accountKeys).where(eq(accountKeys.accountId, a)),
    db.delete(users).where(eq(users.id, u)),
    db.delete(accounts).where(eq(accounts.id, a)),
  ]);
}

// ---- moderation actions ----

export const ACTION_TYPES = ["none", "sensitive", "disable", "silence", "suspend"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** The account actions that mark the account: the column holding when, and what else they set. */
const ACCOUNT_MARKS = {
  silence: { column: "silencedAt", extra: {} },
  // Staff suspensions are marked local, so no activity from the account's own server can lift them.
  suspend: { column: "suspendedAt", extra: { suspensionOrigin: "local" } },
  sensitive: { column: "sensitizedAt", extra: {} },
} as const satisfies Record<Exclude<ActionType, "none" | "disable">, { column: keyof typeof accounts.$inferSelect; extra: Partial<AccountRow> }>;

export interface AccountActionInput {
  type: string | undefined;
  reportId?: string | null;
  /** Accepted as Mastodon does; Tern sends no e-mail, so it changes nothing. */
  sendEmailNotification?: boolean;
}

/**
 * POST /api/v1/admin/accounts/:id/action. `none` only resolves the named report; other types resolve every open
 * report about the account. `sensitive` marks every status of the account with media sensitive until lifted.
 */
export async function accountAction(db: DB, fx: Effects, actor: Moderator, id: string, input: AccountActionInput): Promise<void> {
  const type = input.type?.trim() ?? "";
  if (!type) throw validationFailed("Type can't be blank");
  if (!(ACTION_TYPES as readonly string[]).includes(type)) throw validationFailed("Type is not included in the list");
  const row = await getAdminAccount(db, id);
  const t = type as ActionType;
  if (t !== "none" && !overrides(actor, row.role)) throw forbidden();
  if (t === "disable") requireLocalUser(row);

  let report: { id: string } | undefined;
  if (input.reportId) {
    [report] = await db
      .select({ id: reports.id })
      .from(reports)
      .where(and(eq(reports.id, input.reportId), eq(reports.targetAccountId, row.account.id)))
      .limit(1);
    if (!report) throw notFound();
  }
  const open =
    t === "none"
      ? report
        ? [report]
        : []
      : await db
          .select({ id: reports.id })
          .from(reports)
          .where(and(eq(reports.targetAccountId, row.account.id), isNull(reports.actionTakenAt)));

  const now = Date.now();
  const a = row.account.id;
  const stmts: Statement[] = [];
  if (t === "disable") {
    stmts.push(db.update(users).set({ disabled: true, updatedAt: now }).where(eq(users.id, row.user!.id)));
    stmts.push(logStatement(db, actor, "disable", "User", row.user!.id, now));
  } else if (t !== "none") {
    const { column, extra } = ACCOUNT_MARKS[t];
    // The first time is kept when the account is already marked.
    stmts.push(
      db
        .update(accounts)
        .set({ [column]: sql`coalesce(${accounts[column]}, ${now})`, ...extra, updatedAt: now })
        .where(eq(accounts.id, a)),
    );
    stmts.push(logStatement(db, actor, t, "Account", a, now));
  }
  // The report named and (for a real action) every other open one about the account are resolved by this moderator.
  for (const r of open) {
    stmts.push(db.update(reports).set({ actionTakenAt: now, actionTakenByAccountId: actor.accountId, updatedAt: now }).where(eq(reports.id, r.id)));
    stmts.push(logStatement(db, actor, "resolve", "Report", r.id, now));
  }
  await commit(db, fx, stmts, (fx) => {
    // Mastodon (SuspendAccountService) tells followers' and followed accounts' servers with an Update{Person} carrying
    // `suspended: true`, so the suspension stays reversible there; Delete{Actor} would mean a permanent deletion.
    if (t === "suspend" && !row.account.domain && !row.account.suspendedAt) fx.federate({ kind: "update_actor", accountId: a });
    // A disabled or suspended local account's open streams close now (their tokens no longer authenticate).
    if ((t === "disable" || t === "suspend") && !row.account.domain) fx.add({ type: "disconnect_streams", accountId: a, tokenId: null });
  });
}

/** Re-enables a disabled local user (logged only when something changed, as Mastodon does). */
export async function enableAccount(db: DB, actor: Moderator, id: string): Promise<AdminAccountRow> {
  const row = await getAdminAccount(db, id);
  requireLocalUser(row);
  if (!row.user.disabled) return row;
  return changeUser(db, actor, row, "enable", { disabled: false });
}

export async function unsilenceAccount(db: DB, actor: Moderator, id: string): Promise<AdminAccountRow> {
  const row = await getAdminAccount(db, id);
  if (!row.account.silencedAt) return row;
  return changeAccount(db, actor, row, "unsilence", { silencedAt: null });
}

/** Only a suspended account can be unsuspended (Mastodon's policy refuses otherwise). */
export async function unsuspendAccount(db: DB, fx: Effects, actor: Moderator, id: string): Promise<AdminAccountRow> {
  const row = await getAdminAccount(db, id);
  if (!row.account.suspendedAt) throw forbidden();
  // Remote servers that took the earlier Delete{Actor} as a suspension restore the account on this Update.
  const lifted = await changeAccount(
    db,
    actor,
    row,
    "unsuspend",
    { suspendedAt: null, suspensionOrigin: null },
    {
      fx,
      record: (fx) => {
        if (!row.account.domain) fx.federate({ kind: "update_actor", accountId: row.account.id });
      },
    },
  );
  return lifted;
}

/** Lifts "mark media as sensitive" (logged only when something changed). */
export async function unsensitiveAccount(db: DB, actor: Moderator, id: string): Promise<AdminAccountRow> {
  const row = await getAdminAccount(db, id);
  if (!row.account.sensitizedAt) return row;
  return changeAccount(db, actor, row, "unsensitive", { sensitizedAt: null });
}

// ---- staff notifications ----

/** admin.sign_up notifications for every active staff member who can manage users (Mastodon notifies them all). */
export async function notifyStaffOfSignUp(db: DB, fx: Effects, newAccountId: string): Promise<void> {
  const staff = await db
    .select({ accountId: users.accountId, permissions: userRoles.permissions })
    .from(users)
    .innerJoin(userRoles, eq(userRoles.id, users.roleId))
    .where(and(eq(users.disabled, false), sql`${userRoles.permissions} <> 0`));
  const recipients = staff.filter((s) => hasPermission(s.permissions, "manage_users") && s.accountId !== newAccountId);
  if (!recipients.length) return;
  const notes = notificationWrites(
    db,
    recipients.map((s) => ({ recipientId: s.accountId, fromAccountId: newAccountId, type: "admin.sign_up" as const, activityId: newAccountId })),
  );
  await commit(db, fx, notes.stmts, (fx) => fx.add(...notes.notify));
}
