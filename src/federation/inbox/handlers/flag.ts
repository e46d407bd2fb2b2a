// Flag: a remote server reports local accounts (and their statuses) to our moderators (Mastodon's Activity::Flag).
import { and, eq, isNotNull, sql } from "drizzle-orm";
import { runBatch, type Statement } from "../../../db/client";
import { accounts, domainBlocks, reports, statuses, userRoles, users } from "../../../db/schema/index";
import { domainAndParents } from "../../../lib/text/domain-name";
import { snowflake } from "../../../lib/text/ids";
import { hasPermission } from "../../../lib/security/permissions";
import { notificationWrite } from "../../../services/notifications/notifications";
import type { NotifyEffect } from "../../../effects/types";
import { asArray, iri } from "../../remote/normalize";
import { htmlToText } from "../../remote/sanitize";
import { drop, type InboxContext } from "./context";
import { accountRows } from "../../../db/table-rows";
import { valueList } from "../../../db/id-list";

const MAX_OBJECTS = 100;
const MAX_COMMENT = 5000;

export async function handleFlag(ctx: InboxContext): Promise<void> {
  const { db, signer, json } = ctx;
  const uris = [
    ...new Set(
      asArray(json.object, MAX_OBJECTS)
        .map(iri)
        .filter((u): u is string => !!u),
    ),
  ];
  if (!uris.length) return drop("flag without objects");
  const list = JSON.stringify(uris);
  const [blocked, targets, listed, staff] = await db.batch([
    // Mastodon's DomainBlock.rule_for: the block on the signer's domain or its nearest blocked parent decides.
    db
      .select({ domain: domainBlocks.domain, rejectReports: domainBlocks.rejectReports })
      .from(domainBlocks)
      .where(sql`${domainBlocks.domain} IN ${valueList(domainAndParents(signer.domain ?? ""))}`),
    accountRows(db, {
      // By uri or url (accounts_uri, accounts_url), then local: `+` keeps the planner off the domain index, which would
      // read every local account.
      where: sql`+${accounts.domain} IS NULL AND ${accounts.suspendedAt} IS NULL AND (${accounts.uri} IN (SELECT value FROM json_each(${list})) OR ${accounts.url} IN (SELECT value FROM json_each(${list})))`,
    }),
    db
      .select({ id: statuses.id, accountId: statuses.accountId })
      .from(statuses)
      .where(sql`${statuses.local} = 1 AND ${statuses.uri} IN (SELECT value FROM json_each(${list}))`),
    db
      .select({ accountId: users.accountId, permissions: userRoles.permissions })
      .from(users)
      .innerJoin(userRoles, eq(userRoles.id, users.roleId))
      .where(and(isNotNull(users.roleId), eq(users.disabled, false), sql`${userRoles.permissions} <> 0`)),
  ]);
  if (blocked.sort((a, b) => b.domain.length - a.domain.length)[0]?.rejectReports) return drop("reports from this domain are rejected");
  if (!targets.length) return drop("flag of no local account");
  const comment = (await htmlToText(typeof json.content === "string" ? json.content : "")).slice(0, MAX_COMMENT);
  const moderators = staff.filter((s) => hasPermission(s.permissions, "manage_reports"));
  const now = Date.now();
  const writes: Statement[] = [];
  const notify: NotifyEffect[] = [];
  const reportIds: string[] = [];
  for (const target of targets) {
    const id = snowflake(now);
    reportIds.push(id);
    writes.push(
      db.insert(reports).values({
        id,
        accountId: signer.id,
        targetAccountId: target.id,
        statusIds: listed.filter((s) => s.accountId === target.id).map((s) => s.id),
        ruleIds: [],
        comment,
        category: "other",
        forward: false,
        uri: ctx.activity.id,
        createdAt: now,
        updatedAt: now,
      }),
    );
    for (const m of moderators) {
      if (m.accountId === target.id) continue;
      const note = notificationWrite(db, { recipientId: m.accountId, fromAccountId: signer.id, type: "admin.report", reportId: id, activityId: id });
      writes.push(note.statement);
      notify.push(note.effect);
    }
  }
  await runBatch(db, writes);
  ctx.fx.add(...notify);
  // Mastodon's AdminMailer#new_report for a report from another server too (src/mail/staff-notices.ts).
  for (const reportId of reportIds) ctx.fx.add({ type: "mail_staff", origin: ctx.fx.origin, notice: { kind: "report", reportId } });
}
