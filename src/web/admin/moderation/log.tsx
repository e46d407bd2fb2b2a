// The audit log (view_audit_log): every staff action, newest first, 50 a page (src/queries/instance/admin-action-logs.ts), in
// words: what was done ("suspended", "created") and to what, named as it was then (an account by its handle, a domain,
// a rule by its text, the server settings) rather than by table and id.
import type { Ctx } from "../../../context";
import { parseId } from "../../../lib/text/ids";
import { type ActionLogEntry, actionLogPage } from "../../../queries/instance/admin-action-logs";
import { sectionPage, Older, when, type View } from "../kit";
import { Card, Table } from "../../form-parts";

const LIMIT = 50;

/** What each target type is called on the page. */
const KINDS: Record<string, string> = {
  Account: "account",
  User: "account",
  Report: "report",
  Status: "post",
  DomainBlock: "domain block",
  DomainAllow: "allowed domain",
  EmailDomainBlock: "e-mail domain block",
  CanonicalEmailBlock: "e-mail address block",
  IpBlock: "IP rule",
  CustomEmoji: "custom emoji",
  Announcement: "announcement",
  Rule: "rule",
  UserRole: "role",
  Tag: "hashtag",
  PreviewCard: "link",
  PreviewCardProvider: "link publisher",
  Relay: "relay",
  "Form::AdminSettings": "server settings",
};

/** Actions in words; any other is its name with spaces. */
const VERBS: Record<string, string> = {
  create: "created",
  update: "changed",
  destroy: "deleted",
  suspend: "suspended",
  unsuspend: "unsuspended",
  silence: "limited",
  unsilence: "lifted the limit on",
  sensitive: "marked as sensitive",
  unsensitive: "unmarked as sensitive",
  disable: "disabled",
  enable: "enabled",
  approve: "approved",
  reject: "rejected",
  resolve: "resolved",
  reopen: "reopened",
  assigned_to_self: "took",
  unassigned: "unassigned",
  copy: "copied",
  memorialize: "memorialized",
  approve_all: "approved",
  reject_all: "rejected",
};

/** The entry's verb. */
export const verbOf = (e: Pick<ActionLogEntry, "action">) => VERBS[e.action] ?? e.action.replace(/_/g, " ");

/** The entry's target, named: "@troll", "a report on @troll", "domain block spam.example", "the server settings". */
export function targetOf(e: Pick<ActionLogEntry, "targetType" | "targetId" | "humanIdentifier">): string {
  const kind = KINDS[e.targetType] ?? e.targetType;
  const name = e.humanIdentifier;
  const numbered = `${kind} #${e.targetId ?? "?"}`;
  switch (e.targetType) {
    case "Form::AdminSettings":
      return "the server settings";
    case "Account":
    case "User":
      return name ? `@${name}` : numbered;
    case "Report":
      // Report ids are snowflakes: the account reported says more.
      return name ? `a report on @${name}` : numbered;
    case "Status":
      return name ? `a post by @${name}` : numbered;
    case "CustomEmoji":
      return name ? `${kind} :${name.replace(/@.*/, "")}:${name.includes("@") ? ` of ${name.replace(/^[^@]*@/, "")}` : ""}` : numbered;
    case "Announcement":
    case "Rule":
      return name ? `${kind} “${name}”` : numbered;
    case "Tag":
      return name ? `#${name}` : numbered;
    default:
      return name ? `${kind} ${name}` : numbered;
  }
}

export async function showLog(c: Ctx, view: View) {
  const maxId = parseId(c.req.query("max_id"));
  const rows = await actionLogPage(c.get("db"), maxId, LIMIT);
  return sectionPage(c, view, "/admin/log", () => (
    <Card>
      {rows.length ? (
        <Table headers={["When", "Who", "Action", "Target"]}>
          {rows.map((r) => (
            <tr data-log={r.id}>
              <td>{when(r.createdAt)}</td>
              <td>{r.actor ? `@${r.actor}` : "(deleted)"}</td>
              <td>{verbOf(r)}</td>
              <td>{targetOf(r)}</td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">Nothing has been logged{maxId ? " before this point" : ""}.</p>
      )}
      <Older rows={rows} limit={LIMIT} href={(last) => `/admin/log?max_id=${last.id}`} />
    </Card>
  ));
}
