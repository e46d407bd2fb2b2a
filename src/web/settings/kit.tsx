// Shared pieces of the account settings pages: the frame with the section links, flash and error boxes, the session
// guard (signed-out visitors go to the sign-in page and come back) and the CSRF refusal.
import type { Child } from "hono/jsx";
import { raw } from "hono/html";
import type { Ctx } from "../../context";
import { ApiError } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import { type Params, readParams } from "../../lib/http/params";
import { MessagePage } from "../auth-pages";
import { Layout, page } from "../layout";
import { currentSession, sessionCsrfValid } from "../session";
import type { WebSession } from "../session-store";
import { ErrorBox, humanTime, Notice, SectionNav } from "../form-parts";

// The settings pages' own pieces; the form style is every page's (src/web/layout.tsx).
const CSS = `
ol.codes{font-family:ui-monospace,monospace;columns:2}
.fieldrow{display:grid;grid-template-columns:1fr 1fr;gap:.5rem;margin-bottom:.5rem}
`;

export const SECTIONS = [
  ["/settings/profile", "Profile"],
  ["/settings/preferences", "Preferences"],
  ["/auth/edit", "E-mail and password"],
  ["/settings/otp_authentication", "Two-factor authentication"],
  ["/oauth/authorized_applications", "Apps and sessions"],
  ["/settings/exports", "Export"],
  ["/settings/imports", "Import"],
  ["/settings/migration", "Account migration"],
  ["/settings/delete", "Delete account"],
] as const;

/**
 * The frame of every settings page: the settings navigation (`path` marked as the current page), the flash of the last
 * change and the error of this one, then the page's cards.
 */
export function SettingsLayout(p: { siteTitle: string; title: string; path: string; flash?: string; error?: string; children?: Child }) {
  return (
    <Layout title={p.title} siteTitle={p.siteTitle} head={<style>{raw(CSS)}</style>}>
      <SectionNav label="Settings" links={SECTIONS} current={p.path} />
      <Notice text={p.flash} />
      <ErrorBox text={p.error} />
      {p.children}
    </Layout>
  );
}

/** The signed-in session, or a redirect to the sign-in page that comes back here. */
export async function settingsSession(c: Ctx): Promise<WebSession | Response> {
  const s = await currentSession(c);
  if (s) return s;
  const url = new URL(c.req.url);
  return c.redirect(`/auth/sign_in?return_to=${encodeURIComponent(url.pathname)}`, 303);
}

export function csrfRefused(c: Ctx) {
  return page(
    c,
    <MessagePage
      siteTitle={c.get("config").title}
      title="Request refused"
      message="The form could not be verified (missing or invalid CSRF token, or a cross-site request). Go back, reload the page and try again."
    />,
    403,
  );
}

/** The session of a form POST, with its CSRF token checked; a Response (redirect or 403) otherwise. */
export async function postSession(c: Ctx, params: Record<string, unknown>): Promise<WebSession | Response> {
  const s = await settingsSession(c);
  if (s instanceof Response) return s;
  if (!sessionCsrfValid(c, s, params.csrf)) return csrfRefused(c);
  return s;
}

export const when = (ms: number | null | undefined) => humanTime(ms, "never");

/** What a settings page shows besides its data: the flash of the last change, or why this one was refused. */
export interface PageView {
  flash?: string;
  error?: string;
  status?: 200 | 403 | 404 | 422 | 429;
}

/**
 * A refusal a service explains (4xx): the page again, with the reason. A spent budget (429, e.g. too many wrong
 * passwords) stays a 429. Anything else is a server error.
 */
export function refusal(e: unknown): { message: string; status: 403 | 404 | 422 | 429 } {
  if (e instanceof ApiError && e.status === 429) return { message: "Too many attempts. Please wait a while and try again.", status: 429 };
  if (e instanceof ApiError && (e.status === 403 || e.status === 404 || e.status === 422)) {
    return { message: e.message.replace(/^Validation failed: /, ""), status: e.status };
  }
  if (e instanceof ApiError && e.status >= 400 && e.status < 500) return { message: e.message, status: 422 };
  throw e;
}

/** A settings page's GET: `show` for the signed-in user; signed-out visitors go to the sign-in page. */
export const settingsGet = (show: (c: Ctx, s: WebSession) => Response | Promise<Response>) => async (c: Ctx) => {
  const s = await settingsSession(c);
  return s instanceof Response ? s : show(c, s);
};

/**
 * A settings form's POST: the session with its CSRF token checked, then `act`. A refusal the service explains shows
 * the page again (`again`) with the reason; `notFound` replaces the message of a 404.
 */
export const settingsPost =
  (
    again: (c: Ctx, s: WebSession, o: PageView) => Response | Promise<Response>,
    act: (c: Ctx, s: WebSession, p: Params) => Promise<Response>,
    o: { maxBody?: number; notFound?: string } = {},
  ) =>
  async (c: Ctx) => {
    const p = await readParams(c, o.maxBody);
    const s = await postSession(c, p);
    if (s instanceof Response) return s;
    try {
      return await act(c, s, p);
    } catch (e) {
      const f = refusal(e);
      // A 429's Retry-After and X-RateLimit-* go with the page.
      if (f.status === 429) for (const [k, v] of Object.entries((e as ApiError).headers ?? {})) c.header(k, v);
      return again(c, s, { error: f.status === 404 && o.notFound ? o.notFound : f.message, status: f.status });
    }
  };

/**
 * A POST on the record the path's `:id` names (`settingsPost`): an id that is not one, and a 404 from the service,
 * both show the page again with `notFound`.
 */
export const settingsPostOn = (
  again: (c: Ctx, s: WebSession, o: PageView) => Response | Promise<Response>,
  notFound: string,
  act: (c: Ctx, s: WebSession, id: string, p: Params) => Promise<Response>,
) =>
  settingsPost(
    again,
    (c, s, p) => {
      const id = parseId(c.req.param("id"));
      if (!id) throw new ApiError(404, "Record not found");
      return act(c, s, id, p);
    },
    { notFound },
  );
