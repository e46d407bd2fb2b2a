// The admin pages under /admin (mounted by src/web/routes.tsx). Every route needs a staff session
// (requireStaffSession: the sign-in pages' cookie, CSRF on every POST) and its section's permission, the same as the
// API's. A GET renders the section; a POST reads the form, calls the service the API uses, and redirects back with a
// flash message (POST-redirect-GET). Refused input (a service's 4xx) renders the section again with the error and
// the submitted values, with that status, so nothing typed is lost.
import { routeGroup } from "../../route-group";
import type { Ctx } from "../../context";
import { ApiError } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import type { Params } from "../../lib/http/params";
import { hasPermission } from "../../lib/security/permissions";
import { accountAction, approveAccount, getAdminAccount, rejectAccount } from "../../services/admin/accounts";
import { copyCustomEmoji, createCustomEmoji, deleteCustomEmoji, getCustomEmoji, updateCustomEmoji } from "../../services/admin/custom-emojis";
import { createDomainAllow, deleteDomainAllow, getDomainAllow } from "../../services/admin/blocks/domain-allows";
import { createDomainBlock, DomainBlockConflict, deleteDomainBlock, getDomainBlock, updateDomainBlock } from "../../services/admin/blocks/domain-blocks";
import { assignReportToSelf, getReport, reopenReport, resolveReport, unassignReport } from "../../services/admin/reports";
import { createRole, updateRole } from "../../services/admin/roles";
import { createRule, deleteRule, getRule, updateRule } from "../../services/admin/rules";
import { removeThumbnail, setThumbnail, updateSettings } from "../../services/admin/settings";
import { createAnnouncement, deleteAnnouncement, getAnnouncement, publishAnnouncement, updateAnnouncement } from "../../services/instance/announcements";
import { addRelay, disableRelay, enableRelay, getRelay, removeRelay } from "../../services/admin/relays";
import { showAnnouncements } from "./server/announcements";
import { type AskFirst, confirmationPage, confirmFirst, isAskFirst } from "./confirm";
import * as ask from "./questions";
import { showDashboard } from "./dashboard";
import { showDomains } from "./moderation/domains";
import { showEmojis } from "./server/emojis";
import { type AdminSession, adminOf, refuse, requirePermission, requireStaffSession } from "./guard";
import { setFlash, takeFlash } from "../flash";
import { showHome } from "./home";
import type { View } from "./kit";
import { showLog } from "./moderation/log";
import { showPending } from "./moderation/pending";
import { showRelays } from "./server/relays";
import { showReports } from "./moderation/reports";
import { showRoles } from "./server/roles";
import { showRules } from "./server/rules";
import { showSettings } from "./server/settings";

const r = routeGroup();
r.use("*", requireStaffSession);

type Show = (c: Ctx, view: View) => Response | Promise<Response>;

/** What an action answers: the flash, and where to go back to (its section by default). */
type Done = string | { notice: string; back: string };

const text = (f: Params, name: string): string | undefined => (typeof f[name] === "string" ? (f[name] as string) : undefined);
const checked = (f: Params, name: string) => ["1", "on", "true"].includes(text(f, name) ?? "");
const id = (c: Ctx, name = "id") => parseId(c.req.param(name)) ?? "0";

function formValues(f: Params): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) if (typeof v === "string" && k !== "csrf") out[k] = v;
  return out;
}

/**
 * A section: its GET, and a POST helper whose actions come back to it. An action wrapped in `confirmFirst` answers its
 * confirmation page until the form comes back confirmed.
 */
function section(path: string, permission: Parameters<typeof requirePermission>[0], show: Show) {
  const guard = requirePermission(permission);
  r.get(path, guard, (c) => show(c, { notice: takeFlash(c) }));
  return (sub: string, run: (c: Ctx, f: Params, a: AdminSession) => Promise<Done | AskFirst>, again: Show = show) => {
    r.post(`${path}${sub}`, guard, async (c) => {
      const a = adminOf(c);
      try {
        const done = await run(c, a.form, a);
        if (isAskFirst(done)) return confirmationPage(c, `/admin${path}`, `/admin${path}`, done.confirm, a.form);
        setFlash(c, typeof done === "string" ? done : done.notice);
        return c.redirect(`/admin${typeof done === "string" ? path : done.back}`, 303);
      } catch (e) {
        if (e instanceof DomainBlockConflict) return again(c, { error: e.message, values: formValues(a.form), status: 422 });
        if (!(e instanceof ApiError) || e.status >= 500) throw e;
        const status = e.status === 403 || e.status === 404 || e.status === 400 ? e.status : 422;
        return again(c, { error: e.message, values: formValues(a.form), status });
      }
    });
  };
}

r.get("/", (c) => showHome(c, { notice: takeFlash(c) }));

section("/dashboard", "view_dashboard", showDashboard);

// ---- pending sign-ups ----
const pending = section("/pending", "manage_users", showPending);
pending("/:id/approve", async (c, _f, a) => {
  const row = await approveAccount(c.get("db"), a.moderator, id(c));
  return `Approved @${row.account.username}.`;
});
pending(
  "/:id/reject",
  confirmFirst(
    async (c) => ask.rejectSignUpQuestion((await getAdminAccount(c.get("db"), id(c))).account.username),
    async (c, _f, a) => {
      const row = await getAdminAccount(c.get("db"), id(c));
      await rejectAccount(c.get("db"), a.moderator, row.account.id);
      return `Rejected @${row.account.username}.`;
    },
  ),
);

// ---- reports ----
const reports = section("/reports", "manage_reports", showReports);
const reportBack = (resolved: boolean, notice: string): Done => ({ notice, back: resolved ? "/reports?resolved=1" : "/reports" });
reports("/:id/assign_to_self", async (c, _f, a) => {
  const rep = await assignReportToSelf(c.get("db"), a.moderator, id(c));
  return reportBack(rep.actionTakenAt != null, `Report #${rep.id} is assigned to you.`);
});
reports("/:id/unassign", async (c, _f, a) => {
  const rep = await unassignReport(c.get("db"), a.moderator, id(c));
  return reportBack(rep.actionTakenAt != null, `Report #${rep.id} is no longer assigned.`);
});
reports("/:id/resolve", async (c, _f, a) => {
  const rep = await resolveReport(c.get("db"), a.moderator, id(c));
  return `Report #${rep.id} is resolved.`;
});
reports("/:id/reopen", async (c, _f, a) => {
  const rep = await reopenReport(c.get("db"), a.moderator, id(c));
  return `Report #${rep.id} is open again.`;
});
// An action on the reported account is an accounts action: the API's permission (manage_users) is needed too.
const mayActOnAccounts = (a: AdminSession) => {
  if (!hasPermission(a.role?.permissions, "manage_users")) throw new ApiError(403, "Acting on accounts needs the manage users permission.");
};
reports(
  "/:id/action",
  confirmFirst(
    async (c, f, a) => {
      mayActOnAccounts(a);
      const rep = await getReport(c.get("db"), id(c));
      const target = (await getAdminAccount(c.get("db"), rep.targetAccountId)).account;
      const acct = `@${target.username}${target.domain ? `@${target.domain}` : ""}`;
      return ask.accountActionQuestion(text(f, "type") ?? "", acct, !target.domain);
    },
    async (c, f, a) => {
      mayActOnAccounts(a);
      const db = c.get("db");
      const rep = await getReport(db, id(c));
      const type = text(f, "type");
      if (type === "none") throw new ApiError(422, "Choose an action (use Resolve to resolve without one).");
      await accountAction(db, c.get("fx"), a.moderator, rep.targetAccountId, { type, reportId: rep.id });
      return `Applied "${type}" and resolved report #${rep.id}.`;
    },
  ),
);

// ---- domain blocks and allows ----
const domains = section("/domains", "manage_federation", showDomains);
const blockInput = (f: Params) => ({
  domain: text(f, "domain"),
  severity: text(f, "severity"),
  rejectMedia: checked(f, "reject_media"),
  rejectReports: checked(f, "reject_reports"),
  obfuscate: checked(f, "obfuscate"),
  privateComment: text(f, "private_comment") ?? "",
  publicComment: text(f, "public_comment") ?? "",
});
const staffOf = (a: AdminSession) => ({ accountId: a.moderator.accountId });
domains(
  "/blocks",
  confirmFirst(
    (_c, f) => (text(f, "severity") === "suspend" ? ask.suspendDomainQuestion((text(f, "domain") ?? "").trim().toLowerCase()) : null),
    async (c, f, a) => {
      const b = await createDomainBlock(c.get("db"), c.get("fx"), staffOf(a), blockInput(f));
      return `Blocked ${b.domain} (${b.severity}).`;
    },
  ),
);
domains(
  "/blocks/:id",
  confirmFirst(
    async (c, f) => {
      const b = await getDomainBlock(c.get("db"), id(c));
      return text(f, "severity") === "suspend" && b.severity !== "suspend" ? ask.suspendDomainQuestion(b.domain) : null;
    },
    async (c, f, a) => {
      const { domain: _ignored, ...input } = blockInput(f);
      const b = await updateDomainBlock(c.get("db"), c.get("fx"), staffOf(a), id(c), input);
      return `Updated the block of ${b.domain}.`;
    },
  ),
);
domains(
  "/blocks/:id/delete",
  confirmFirst(
    async (c) => ask.unblockDomainQuestion(await getDomainBlock(c.get("db"), id(c))),
    async (c, _f, a) => {
      const b = await getDomainBlock(c.get("db"), id(c));
      await deleteDomainBlock(c.get("db"), c.get("fx"), staffOf(a), b.id);
      return `Unblocked ${b.domain}.`;
    },
  ),
);
domains("/allows", async (c, f, a) => {
  const row = await createDomainAllow(c.get("db"), staffOf(a), text(f, "domain"));
  return `Allowed ${row.domain}.`;
});
domains(
  "/allows/:id/delete",
  confirmFirst(
    async (c) => ask.removeAllowQuestion((await getDomainAllow(c.get("db"), id(c))).domain),
    async (c, _f, a) => {
      const row = await getDomainAllow(c.get("db"), id(c));
      await deleteDomainAllow(c.get("db"), staffOf(a), row.id);
      return `Removed ${row.domain} from the allowed domains.`;
    },
  ),
);

// ---- relays ----
const relaysSection = section("/relays", "manage_federation", showRelays);
relaysSection("", async (c, f, a) => {
  const row = await addRelay(c.get("db"), c.get("fx"), c.get("config"), staffOf(a), text(f, "inbox_url"));
  return `Added ${row.inboxUrl}: waiting for the relay's approval.`;
});
relaysSection("/:id/enable", async (c, _f, a) => {
  const row = await enableRelay(c.get("db"), c.get("fx"), c.get("config"), staffOf(a), id(c));
  return `Asked ${row.inboxUrl} again.`;
});
relaysSection("/:id/disable", async (c, _f, a) => {
  const row = await disableRelay(c.get("db"), c.get("fx"), staffOf(a), id(c));
  return `Disabled ${row.inboxUrl}.`;
});
relaysSection(
  "/:id/delete",
  confirmFirst(
    async (c) => ask.removeRelayQuestion((await getRelay(c.get("db"), id(c))).inboxUrl),
    async (c, _f, a) => {
      const row = await getRelay(c.get("db"), id(c));
      await removeRelay(c.get("db"), c.get("fx"), staffOf(a), row.id);
      return `Removed ${row.inboxUrl}.`;
    },
  ),
);

// ---- custom emojis ----
const emojis = section("/emojis", "manage_custom_emojis", showEmojis);
const emojiBack = (domain: string | null, notice: string): Done => ({ notice, back: domain ? "/emojis?remote=1" : "/emojis" });
emojis("", async (c, f, a) => {
  const image = f.image instanceof File ? f.image : null;
  const e = await createCustomEmoji(c.get("db"), c.env, staffOf(a), { shortcode: text(f, "shortcode"), category: text(f, "category"), image });
  return `Added :${e.shortcode}:.`;
});
emojis("/:id", async (c, f, a) => {
  const flag = (name: string) => (text(f, name) === undefined ? undefined : checked(f, name));
  const e = await updateCustomEmoji(c.get("db"), staffOf(a), id(c), {
    category: text(f, "category"),
    disabled: flag("disabled"),
    visibleInPicker: flag("visible_in_picker"),
  });
  return emojiBack(e.domain, `Updated :${e.shortcode}:${e.disabled ? " (disabled)" : ""}.`);
});
emojis("/:id/copy", async (c, _f, a) => {
  const e = await copyCustomEmoji(c.get("db"), c.env, c.get("config"), staffOf(a), id(c));
  return emojiBack(null, `Copied :${e.shortcode}: to the local emojis.`);
});
emojis(
  "/:id/delete",
  confirmFirst(
    async (c) => ask.deleteEmojiQuestion(await getCustomEmoji(c.get("db"), id(c))),
    async (c, _f, a) => {
      const e = await getCustomEmoji(c.get("db"), id(c));
      await deleteCustomEmoji(c.get("db"), c.env, staffOf(a), e.id);
      return emojiBack(e.domain, `Deleted :${e.shortcode}:.`);
    },
  ),
);

// ---- announcements ----
const announcements = section("/announcements", "manage_announcements", showAnnouncements);
/** A datetime-local value (UTC, as the form says) or an ISO time; blank is none. */
function time(raw: string | undefined, name: string): number | null {
  const s = raw?.trim() ?? "";
  if (!s) return null;
  const t = /^\d{4}-\d{2}-\d{2}/.test(s) ? Date.parse(/T\d{2}:\d{2}(:\d{2})?$/.test(s) ? `${s}Z` : s) : Number.NaN;
  if (Number.isNaN(t)) throw new ApiError(422, `Validation failed: ${name} is not a valid time`);
  return t;
}
const announcementInput = (f: Params) => ({
  text: text(f, "text") ?? "",
  startsAt: time(text(f, "starts_at"), "Starts at"),
  endsAt: time(text(f, "ends_at"), "Ends at"),
  allDay: checked(f, "all_day"),
});
announcements("", async (c, f, a) => {
  const row = await createAnnouncement(c.get("db"), c.get("fx"), c.get("config"), staffOf(a), { ...announcementInput(f), published: checked(f, "published") });
  return row.published ? "The announcement is published." : "The announcement is saved (not published).";
});
announcements("/:id", async (c, f, a) => {
  await updateAnnouncement(c.get("db"), c.get("fx"), c.get("config"), staffOf(a), id(c), announcementInput(f));
  return "The announcement is updated.";
});
for (const [sub, publish] of [
  ["/:id/publish", true],
  ["/:id/unpublish", false],
] as const) {
  announcements(sub, async (c, _f, a) => {
    await publishAnnouncement(c.get("db"), c.get("fx"), c.get("config"), staffOf(a), id(c), publish);
    return publish ? "The announcement is published." : "The announcement is unpublished.";
  });
}
announcements(
  "/:id/delete",
  confirmFirst(
    async (c) => ask.deleteAnnouncementQuestion((await getAnnouncement(c.get("db"), id(c))).text),
    async (c, _f, a) => {
      await deleteAnnouncement(c.get("db"), c.get("fx"), staffOf(a), id(c));
      return "The announcement is deleted.";
    },
  ),
);

// ---- rules ----
const rules = section("/rules", "manage_rules", showRules);
const ruleInput = (f: Params) => ({ text: text(f, "text") ?? "", hint: text(f, "hint") ?? "", priority: text(f, "priority") });
rules("", async (c, f, a) => {
  await createRule(c.get("db"), staffOf(a), ruleInput(f));
  return "The rule is added.";
});
rules("/:id", async (c, f, a) => {
  await updateRule(c.get("db"), staffOf(a), id(c), ruleInput(f));
  return "The rule is updated.";
});
rules(
  "/:id/delete",
  confirmFirst(
    async (c) => ask.deleteRuleQuestion((await getRule(c.get("db"), id(c))).text),
    async (c, _f, a) => {
      await deleteRule(c.get("db"), staffOf(a), id(c));
      return "The rule is deleted.";
    },
  ),
);

// ---- server settings ----
const settings = section("/settings", "manage_settings", showSettings);
settings("", async (c, f, a) => {
  await updateSettings(c.get("db"), staffOf(a), {
    title: text(f, "title"),
    short_description: text(f, "short_description"),
    description: text(f, "description"),
    contact_email: text(f, "contact_email"),
    registrations_mode: text(f, "registrations_mode"),
    registrations_message: text(f, "registrations_message"),
    trendable_by_default: text(f, "trendable_by_default"),
  });
  return "The settings are saved.";
});
settings("/thumbnail", async (c, f, a) => {
  await setThumbnail(c.get("db"), c.env, staffOf(a), f.thumbnail instanceof File ? f.thumbnail : null);
  return "The thumbnail is saved.";
});
settings(
  "/thumbnail/delete",
  confirmFirst(
    () => ask.removeThumbnailQuestion,
    async (c, _f, a) => {
      await removeThumbnail(c.get("db"), c.env, staffOf(a));
      return "The thumbnail is removed.";
    },
  ),
);

// ---- roles ----
/** The permissions[] checkboxes; undefined when the form had no permission fields. */
function permissionsOf(f: Params): string[] | undefined {
  if (!checked(f, "permissions_given")) return undefined;
  const raw = f.permissions;
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.filter((x): x is string => typeof x === "string").slice(0, 64);
}
const roleInput = (f: Params) => ({
  name: text(f, "name"),
  color: text(f, "color"),
  position: text(f, "position"),
  highlighted: checked(f, "highlighted"),
  permissions: permissionsOf(f),
});
const rolesAgain: Show = (c, view) => showRoles(c, view, new Set(permissionsOf(adminOf(c).form) ?? []));
const roles = section("/roles", "manage_roles", showRoles);
roles(
  "",
  async (c, f, a) => {
    const role = await createRole(c.get("db"), a.moderator, roleInput(f));
    return `The role ${role.name} is created.`;
  },
  rolesAgain,
);
roles(
  "/:id",
  async (c, f, a) => {
    const role = await updateRole(c.get("db"), a.moderator, id(c), roleInput(f));
    return `The role ${role.name} is saved.`;
  },
  rolesAgain,
);

section("/log", "view_audit_log", showLog);

// Anything else under /admin: a 404 page for staff.
r.all("*", (c) => refuse(c, "not_found", 404));

export default r;
