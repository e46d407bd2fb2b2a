// The frame of every HTML page, and the headers every page carries: no framing (B9 clickjacking; a status's embed page,
// which has no form and no script, excepted), no scripts, no
// external assets, no referrer to other sites (the authorize URL carries state and PKCE values).
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import type { Ctx } from "../context";

// One form style for every page (sign-in, account settings, administration): inputs full width unless in a `.row`,
// check boxes and radios beside their text (`label.check`), the notice and error boxes, tables, danger buttons, and the
// section navigation of the settings and admin pages (`SectionNav` in form-parts.tsx).
const CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1f2328}
main{max-width:40rem;margin:2rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #d8dce1;border-radius:8px;padding:1.5rem;margin-bottom:1rem}
.card>:first-child{margin-top:0}
.card>:last-child{margin-bottom:0}
.card>form:first-child>label:first-of-type{margin-top:0}
h1{font-size:1.4rem;margin:0 0 1rem}
h2{font-size:1.1rem;margin:0 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .25rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=number],input[type=date],input[type=datetime-local],select,textarea{width:100%;padding:.5rem;border:1px solid #aab;border-radius:6px;font:inherit;color:inherit;background:#fff}
input[type=file]{width:100%;font:inherit;padding:.5rem;border:1px dashed #aab;border-radius:6px;background:#fafbfc}
textarea{min-height:6rem}
label.check{display:flex;gap:.5rem;align-items:center;font-weight:400;margin:.5rem 0}
label.check input{margin:0}
fieldset{border:1px solid #d8dce1;border-radius:6px;margin:.75rem 0;padding:.5rem .75rem}
legend{font-weight:600;padding:0 .25rem}
.hint{color:#656d76;font-size:.9rem;font-weight:400;margin:.25rem 0 0}
button{font:inherit;padding:.5rem 1.2rem;border-radius:6px;border:1px solid #3b5bdb;background:#3b5bdb;color:#fff;cursor:pointer;margin-top:1rem}
button.secondary{background:#fff;color:#3b5bdb}
button.danger{background:#c92a2a;border-color:#c92a2a;color:#fff}
a.button{display:inline-block;padding:.5rem 1.2rem;border-radius:6px;border:1px solid #3b5bdb;color:#3b5bdb;background:#fff;text-decoration:none;margin-top:1rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;align-items:baseline}
.error{background:#fff0f0;border:1px solid #e5a0a0;color:#8a1f1f;padding:.75rem;border-radius:6px}
.notice{background:#ecfdf3;border:1px solid #8fd5a6;color:#05603a;padding:.75rem;border-radius:6px}
.muted{color:#656d76;font-size:.9rem}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;vertical-align:top;padding:.4rem .5rem;border-top:1px solid #eef0f2}
td button,form.inline button{margin-top:0;padding:.25rem .7rem;font-size:.9rem}
form.inline select{padding:.25rem .5rem;font-size:.9rem}
form.inline{display:inline}
.row{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.75rem 0}
.row label{display:inline-flex;gap:.35rem;align-items:center;margin:0;font-weight:400}
.row input[type=text],.row input[type=number],.row input[type=url],.row input[type=date],.row input[type=datetime-local],.row select{width:auto}
.row button{margin-top:0}
nav.sections{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0 0 1rem}
nav.sections a{text-decoration:none}
nav.sections a[aria-current=page]{font-weight:700;color:inherit;text-decoration:underline}
code,#authorization-code{font-family:ui-monospace,monospace;word-break:break-all}
#authorization-code{display:block;background:#f4f5f7;padding:.75rem;border-radius:6px;user-select:all}
header.site{background:#fff;border-bottom:1px solid #d8dce1;padding:.75rem 1rem}
header.site a{color:inherit;text-decoration:none;font-weight:700}
.avatar{width:80px;height:80px;border-radius:8px;object-fit:cover;float:left;margin-right:1rem}
.status{border-top:1px solid #eef0f2;padding:.75rem 0}
.status:first-child{border-top:0}
.status img{max-width:100%;border-radius:6px}
ul.scopes{padding-left:1.2rem}
a{color:#3b5bdb}
`;

export interface LayoutProps {
  title: string;
  siteTitle: string;
  head?: Child;
  children?: Child;
  /** Without the site's header (a status's embed page, shown inside another site's iframe). */
  bare?: boolean;
}

export function Layout(props: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{props.title === props.siteTitle ? props.siteTitle : `${props.title} - ${props.siteTitle}`}</title>
        {props.head}
        <style>{raw(CSS)}</style>
      </head>
      <body>
        {props.bare ? null : (
          <header class="site">
            <a href="/">{props.siteTitle}</a>
          </header>
        )}
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/**
 * Renders a page with the security headers. `scriptNonce` allows one inline script (form_post's auto-submit, the
 * archive upload in parts) and its requests to this server; `embeddable` lets any site frame it (src/web/embed.tsx).
 */
export function page(
  c: Ctx,
  body: Child,
  status: 200 | 400 | 401 | 403 | 404 | 422 | 429 = 200,
  { scriptNonce, embeddable = false }: { scriptNonce?: string; embeddable?: boolean } = {},
) {
  c.header(
    "Content-Security-Policy",
    [
      "default-src 'none'",
      "style-src 'unsafe-inline'",
      "img-src 'self' https: data:",
      scriptNonce ? `script-src 'nonce-${scriptNonce}'` : "script-src 'none'",
      // A page's own script may call this server (the archive upload's parts); nothing else may.
      ...(scriptNonce ? ["connect-src 'self'"] : []),
      "base-uri 'none'",
      // An embed page is made to be framed by any site (it has no form and no script); every other page by none.
      embeddable ? "frame-ancestors *" : "frame-ancestors 'none'",
    ].join("; "),
  );
  if (!embeddable) c.header("X-Frame-Options", "DENY");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  c.header("Cache-Control", "no-store");
  return c.html(`<!DOCTYPE html>${body}`, status);
}
