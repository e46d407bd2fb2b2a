// The one gate for URLs taken from remote documents (actor url/icon/image, object url, attachments, mention and
// hashtag hrefs, emoji icons) before they are stored or put into a link: absolute http(s), parseable, no
// whitespace or control characters, no userinfo. Anything else is dropped (security E2/E7 and the class behind them:
// a `javascript:` actor url once reached a local post's mention link).

const MAX_URL = 2048;
// ASCII whitespace and C0/C1 controls: URL parsers strip or skip some of them, so a string carrying them may mean
// something else to a browser than to us. Also refused: the Unicode line and paragraph separators.
const UNSAFE_CHARS = /[\u0000-\u0020\u007f-\u009f\u2028\u2029]/;

/** `v` when it is an absolute, parseable http(s) URL without whitespace, controls or userinfo; otherwise null. */
export function httpUrl(v: unknown): string | null {
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_URL) return null;
  if (UNSAFE_CHARS.test(v) || !/^https?:\/\//i.test(v)) return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return null;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname || u.username || u.password) return null;
  return v;
}
