// Pieces shared by the server-rendered pages (sign-in, settings, admin): the CSRF field, the notice and error boxes,
// a POST form that carries the CSRF token, a card, a table and the section navigation of the settings and admin pages
// (their style is the one of every page: src/web/layout.tsx). Everything shown is text that Hono JSX escapes.
import type { Child } from "hono/jsx";

export const Csrf = (p: { token: string }) => <input type="hidden" name="csrf" value={p.token} />;

const messageBox = (cls: "notice" | "error", role: "status" | "alert") => (p: { text?: string | null }) =>
  p.text ? (
    <p class={cls} role={role}>
      {p.text}
    </p>
  ) : null;

/** What the last action did (a flash), if anything. */
export const Notice = messageBox("notice", "status");

/** Why the last submission was refused, if it was. */
export const ErrorBox = messageBox("error", "alert");

/** A new password and its confirmation (8 to 72 characters, as sign-up takes), for the change and the reset forms. */
export const NewPasswordFields = () => (
  <>
    <label for="password">New password (8 to 72 characters)</label>
    <input type="password" id="password" name="password" required minlength={8} maxlength={72} autocomplete="new-password" />
    <label for="password_confirmation">Confirm new password</label>
    <input type="password" id="password_confirmation" name="password_confirmation" required autocomplete="new-password" />
  </>
);

/** A card of a page, with its heading when it has a `title`. */
export function Card(p: { title?: string; children?: Child }) {
  return (
    <div class="card">
      {p.title ? <h2>{p.title}</h2> : null}
      {p.children}
    </div>
  );
}

/** A table: a header row when `headers` are given (a blank one is an empty cell), then the rows. */
export function Table(p: { headers?: string[]; id?: string; children?: Child }) {
  return (
    <table id={p.id}>
      {p.headers ? (
        <thead>
          <tr>
            {p.headers.map((h) => (
              <th>{h}</th>
            ))}
          </tr>
        </thead>
      ) : null}
      <tbody>{p.children}</tbody>
    </table>
  );
}

/** A table of `rows`, each drawn by `row`, or the `empty` note when there are none. */
export function RowsTable<T>(p: { rows: T[]; row: (r: T) => Child; empty: string; headers?: string[] }) {
  return p.rows.length ? <Table headers={p.headers}>{p.rows.map((r) => p.row(r))}</Table> : <p class="muted">{p.empty}</p>;
}

/** A table cell that names a row: the name in bold, a muted line of details under it, then anything else. */
export function NamedCell(p: { name: string; detail: Child; children?: Child }) {
  return (
    <td>
      <strong>{p.name}</strong>
      <div class="muted">{p.detail}</div>
      {p.children}
    </td>
  );
}

/**
 * A POST form with the CSRF token first. `form` names which of a page's forms was sent (a hidden `form` field), so the
 * page can fill that one again after an error.
 */
export function PostForm(p: { action: string; csrf: string; form?: string; class?: string; id?: string; enctype?: "multipart/form-data"; children?: Child }) {
  return (
    <form method="post" action={p.action} class={p.class} id={p.id} enctype={p.enctype}>
      <Csrf token={p.csrf} />
      {p.form ? <input type="hidden" name="form" value={p.form} /> : null}
      {p.children}
    </form>
  );
}

/** The links between the sections of the settings or the admin pages; `current` is marked as this page. */
export function SectionNav(p: { label: string; links: readonly (readonly [string, string])[]; current: string }) {
  return (
    <nav class="sections" aria-label={p.label}>
      {p.links.map(([href, text]) => (
        <a href={href} aria-current={href === p.current ? "page" : undefined}>
          {text}
        </a>
      ))}
    </nav>
  );
}

/** A check box or radio beside its text (`label.check`). */
export function Check(p: { type?: "checkbox" | "radio"; name: string; value?: string; checked?: boolean; id?: string; children?: Child }) {
  return (
    <label class="check">
      <input type={p.type ?? "checkbox"} name={p.name} value={p.value ?? "1"} checked={p.checked} id={p.id} /> {p.children}
    </label>
  );
}

const DATE_TIME = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

/** A time as people read it ("28 Nov 2026, 14:57 UTC"); `none` when there is no time. */
export const humanTime = (ms: number | null | undefined, none = "") => (ms && Number.isFinite(ms) ? `${DATE_TIME.format(ms)} UTC` : none);
