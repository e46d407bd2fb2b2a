// Pieces shared by the server-rendered pages (sign-in, settings, admin): the CSRF field, the notice and error boxes,
// and a POST form that carries the CSRF token. Everything shown is text that Hono JSX escapes.
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

/**
 * A POST form with the CSRF token first. `form` names which of a page's forms was sent (a hidden `form` field), so the
 * page can fill that one again after an error.
 */
export function PostForm(p: { action: string; csrf: string; form?: string; class?: string; enctype?: "multipart/form-data"; children?: Child }) {
  return (
    <form method="post" action={p.action} class={p.class} enctype={p.enctype}>
      <Csrf token={p.csrf} />
      {p.form ? <input type="hidden" name="form" value={p.form} /> : null}
      {p.children}
    </form>
  );
}
