// One sanitiser for every piece of remote HTML (content, summary, profile note and fields, names), following
// Mastodon's MASTODON_STRICT config (security §2.3, E1–E5). It runs on Workers' built-in HTMLRewriter (lol-html, a
// streaming tokenizer in the runtime: no DOM exists in Workers, and a JS DOM library would cost far more CPU than
// the 10 ms budget). Elements outside the allowlist are unwrapped (children kept) or dropped with their content
// (script, style ...); attributes are allowlisted; links with other schemes become their text.

const KEEP = new Set(["p", "br", "span", "a", "del", "s", "pre", "blockquote", "code", "b", "strong", "u", "i", "em", "ul", "ol", "li", "ruby", "rt", "rp"]);
const DROP_WITH_CONTENT = new Set(["script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math", "head", "title", "textarea", "select", "button", "form", "img", "video", "audio", "source", "track", "canvas", "frame", "frameset", "meta", "link", "base", "input"]);
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
const LINK_PROTOCOLS = new Set(["http", "https", "dat", "dweb", "ipfs", "ipns", "ssb", "gopher", "xmpp", "magnet", "gemini"]);
const CLASS_OK = /^(?:(?:h|p|u|dt|e)-[a-z0-9-]+|mention|hashtag|ellipsis|invisible|quote-inline)$/;
const MAX_INPUT = 512 * 1024;

function allowedClasses(v: string | null): string | null {
  if (!v) return null;
  const kept = v.split(/\s+/).filter((c) => CLASS_OK.test(c));
  return kept.length ? kept.join(" ") : null;
}

function linkAllowed(href: string | null): boolean {
  if (!href || /^\s/.test(href)) return false;
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(href);
  if (!m) return false; // relative links are not meaningful in federated content
  return LINK_PROTOCOLS.has(m[1].toLowerCase());
}

function escapeText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Sanitises remote HTML. Async because HTMLRewriter streams. */
export async function sanitizeHtml(html: string): Promise<string> {
  if (!html) return "";
  const input = html.length > MAX_INPUT ? html.slice(0, MAX_INPUT) : html;
  let dropDepth = 0;
  const rewriter = new HTMLRewriter()
    .on("*", {
      element(el) {
        const tag = el.tagName.toLowerCase();
        if (DROP_WITH_CONTENT.has(tag)) {
          // <math> keeps a plain-text annotation in Mastodon; dropping is the safe reading (E4: no crash either way)
          el.remove();
          return;
        }
        if (HEADINGS.has(tag)) {
          el.tagName = "p";
          el.prepend("<strong>", { html: true });
          el.append("</strong>", { html: true });
          for (const [name] of [...el.attributes]) el.removeAttribute(name);
          return;
        }
        if (!KEEP.has(tag)) {
          el.removeAndKeepContent();
          return;
        }
        const attrs = [...el.attributes];
        const href = el.getAttribute("href");
        const cls = el.getAttribute("class");
        const translate = el.getAttribute("translate");
        const lang = el.getAttribute("lang");
        const start = el.getAttribute("start");
        const reversed = el.hasAttribute("reversed");
        const value = el.getAttribute("value");
        for (const [name] of attrs) el.removeAttribute(name);
        if (lang && /^[a-zA-Z-]{1,35}$/.test(lang)) el.setAttribute("lang", lang);
        if (tag === "a") {
          if (!linkAllowed(href)) {
            el.removeAndKeepContent();
            return;
          }
          el.setAttribute("href", href!);
          el.setAttribute("rel", "nofollow noopener noreferrer");
          el.setAttribute("target", "_blank");
        }
        if ((tag === "a" || tag === "span" || tag === "p") && allowedClasses(cls)) el.setAttribute("class", allowedClasses(cls)!);
        if ((tag === "a" || tag === "span") && translate === "no") el.setAttribute("translate", "no");
        if (tag === "ol") {
          if (start && /^-?\d{1,9}$/.test(start)) el.setAttribute("start", start);
          if (reversed) el.setAttribute("reversed", "");
        }
        if (tag === "li" && value && /^-?\d{1,9}$/.test(value)) el.setAttribute("value", value);
      },
      comments(c) {
        c.remove();
      },
    })
    .onDocument({
      doctype() {},
      comments(c) {
        c.remove();
      },
    });
  void dropDepth;
  const out = await rewriter.transform(new Response(input, { headers: { "content-type": "text/html; charset=utf-8" } })).text();
  return out;
}

/** Plain text from HTML (for names, summaries used as text, search): tags removed, entities kept escaped. */
export async function htmlToText(html: string): Promise<string> {
  let text = "";
  // Text is collected at document level: bare text (a display name with no markup) is inside no element.
  await new HTMLRewriter()
    .on("*", {
      element(el) {
        const tag = el.tagName.toLowerCase();
        if (tag === "br") text += "\n";
        if (tag === "p" || HEADINGS.has(tag)) el.onEndTag(() => void (text += "\n\n"));
      },
    })
    .onDocument({
      text(t) {
        text += t.text;
      },
    })
    .transform(new Response(html.slice(0, MAX_INPUT)))
    .text();
  return text.trim();
}

export { escapeText };
