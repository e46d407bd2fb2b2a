// Shared pieces of the admin pages: the frame with the section menu and the flash message, small POST forms (each
// carries the session's CSRF token), and the page response with the headers of every HTML page (src/web/layout.tsx).
// Everything shown is text that Hono JSX escapes; nothing here takes HTML.
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import type { Ctx } from "../../context";
import { hasPermission, type Permission } from "../../lib/security/permissions";
import { ErrorBox, humanTime, Notice, PostForm, SectionNav } from "../form-parts";
import { Layout, page } from "../layout";
import { adminOf } from "./guard";

export interface Section {
  path: string;
  label: string;
  permission: Permission;
  /** What the section is for, on the admin home page. */
  hint: string;
}

/** The sections, in menu order, with the permission each one needs (the same as its API). */
export const SECTIONS: Section[] = [
  { path: "/admin/dashboard", label: "Dashboard", permission: "view_dashboard", hint: "New users, activity and reports over the last 30 days." },
  { path: "/admin/pending", label: "Pending sign-ups", permission: "manage_users", hint: "Accounts waiting for approval, when sign-ups need it." },
  { path: "/admin/reports", label: "Reports", permission: "manage_reports", hint: "What users reported, and the action taken on each report." },
  { path: "/admin/domains", label: "Domains", permission: "manage_federation", hint: "Limit or block other servers; the allow list of limited federation." },
  { path: "/admin/relays", label: "Relays", permission: "manage_federation", hint: "Relays that pass public posts between the servers subscribed to them." },
  { path: "/admin/emojis", label: "Custom emojis", permission: "manage_custom_emojis", hint: "Upload emojis, or copy those of other servers." },
  { path: "/admin/announcements", label: "Announcements", permission: "manage_announcements", hint: "Messages every user sees in their app." },
  { path: "/admin/rules", label: "Rules", permission: "manage_rules", hint: "The server's rules, shown at sign-up and when reporting." },
  {
    path: "/admin/settings",
    label: "Server settings",
    permission: "manage_settings",
    hint: "Name, descriptions, contact address, who may sign up, thumbnail.",
  },
  { path: "/admin/roles", label: "Roles", permission: "manage_roles", hint: "Staff roles and what each one may do." },
  { path: "/admin/log", label: "Audit log", permission: "view_audit_log", hint: "Every action staff took, newest first." },
];

/** What a section page shows besides its data: the flash of the last action, or the error of this one. */
export interface View {
  notice?: string | null;
  error?: string | null;
  /** The submitted form, to fill the form again after an error. */
  values?: Record<string, string>;
  status?: 200 | 400 | 403 | 404 | 422;
}

export interface Frame {
  siteTitle: string;
  csrf: string;
  permissions: number;
  username: string;
  accountId: string;
}

// The admin pages' own pieces; the form style is every page's (src/web/layout.tsx).
const CSS = `
body main{max-width:72rem}
table{font-size:.95rem}
img.emoji{width:32px;height:32px;object-fit:contain}
.stat{display:inline-block;min-width:10rem;margin:0 1rem 1rem 0}
.stat strong{display:block;font-size:1.6rem}
.pre{white-space:pre-wrap}
.thumb{max-width:100%;max-height:12rem}
dl.sections dt{margin-top:.5rem}
dl.sections dd{margin:0 0 0 .1rem}
`;

interface SectionPage {
  frame: Frame;
  title: string;
  /** The menu entry to mark as this page. */
  current: string;
  view: View;
}

function AdminLayout(p: SectionPage & { children?: Child }) {
  const sections = SECTIONS.filter((s) => hasPermission(p.frame.permissions, s.permission));
  return (
    <Layout title={p.title} siteTitle={p.frame.siteTitle} head={<style>{raw(CSS)}</style>}>
      <div class="card">
        <SectionNav label="Administration" links={[["/admin", "Administration"], ...sections.map((s) => [s.path, s.label] as const)]} current={p.current} />
        <h1>{p.title}</h1>
        <Notice text={p.view.notice} />
        <ErrorBox text={p.view.error} />
      </div>
      {p.children}
    </Layout>
  );
}

/** A one-button form: POST `action` with the CSRF token and `fields` as hidden inputs. */
export function PostButton(p: { action: string; csrf: string; label: string; fields?: Record<string, string>; danger?: boolean; name?: string }) {
  return (
    <PostForm action={p.action} csrf={p.csrf} class="inline">
      {Object.entries(p.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={p.danger ? "danger" : "secondary"}>
        {p.label}
      </button>
    </PostForm>
  );
}

/**
 * The link to the next, older page of a list, shown only when this page is full: `href` of the last row shown. On its
 * own card (`card`) or as a paragraph of the list's card.
 */
export function Older<T>(p: { rows: T[]; limit: number; href: (last: T) => string; card?: boolean }) {
  const last = p.rows.at(-1);
  if (p.rows.length !== p.limit || !last) return null;
  const link = <a href={p.href(last)}>Older</a>;
  return p.card ? <div class="card">{link}</div> : <p>{link}</p>;
}

export const when = (ms: number | null | undefined) => humanTime(ms);

/**
 * An admin section's page at `path`: the body `draw` makes with the signed-in staff member's frame (its CSRF token and
 * permissions), in the admin layout titled by the section's label (or `title`), with the view's status and the
 * headers every HTML page carries.
 */
export function sectionPage(c: Ctx, view: View, path: string, draw: (f: Frame) => Child, title?: string) {
  const frame = frameOf(c);
  const section: SectionPage = { frame, title: title ?? SECTIONS.find((s) => s.path === path)?.label ?? "Administration", current: path, view };
  return page(c, <AdminLayout {...section}>{draw(frame)}</AdminLayout>, view.status ?? 200);
}

/** The frame of the signed-in staff member's pages. */
export function frameOf(c: Ctx): Frame {
  const a = adminOf(c);
  return {
    siteTitle: c.get("config").title,
    csrf: a.session.csrf,
    permissions: a.role?.permissions ?? 0,
    username: a.session.account.username,
    accountId: a.session.account.id,
  };
}
