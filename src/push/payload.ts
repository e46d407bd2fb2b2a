// The push message, as Mastodon's Web::NotificationSerializer makes it, so the official apps, Tusky and browser
// service workers show it: {access_token, preferred_locale, notification_id, notification_type, icon, title, body}.
// The official iOS app decodes `notification_id` as an integer, so it is written as a JSON number (its exact digits;
// Tern's ids are 64-bit) although REST ids are strings.
import { htmlToText } from "../federation/remote/sanitize";
import { utf8 } from "./base64";
import { MAX_PLAINTEXT } from "./encrypt";

/** Mastodon's notification_mailer.<type>.subject texts (English), which it uses as push titles. */
const TITLES: Record<string, string> = {
  mention: "You were mentioned by %{name}",
  status: "%{name} just posted",
  reblog: "%{name} boosted your post",
  follow: "%{name} is now following you",
  follow_request: "Pending follower: %{name}",
  favourite: "%{name} favorited your post",
  poll: "A poll by %{name} has ended",
  update: "%{name} edited a post",
  quote: "%{name} quoted your post",
  quoted_update: "%{name} edited a post you have quoted",
  "admin.sign_up": "%{name} signed up",
  "admin.report": "%{name} submitted a report",
};

export interface PushMessageInput {
  accessToken: string;
  locale: string;
  notificationId: string;
  type: string;
  /** Display name, else username, of the notification's sender. */
  name: string;
  /** Absolute URL of the sender's static avatar. */
  icon: string | null;
  /** Spoiler text, else the status's HTML, else the sender's bio HTML. */
  spoilerText: string;
  html: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** HTML entities → characters (the text is shown as plain text, never as HTML). */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (m, e: string) => {
    if (e[0] === "#") {
      const cp = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

/** Rails' truncate: at most `length` characters, the last three being "..." when cut. */
export function truncate(s: string, length: number): string {
  const chars = Array.from(s);
  return chars.length <= length ? s : `${chars.slice(0, length - 3).join("")}...`;
}

export function pushTitle(type: string, name: string): string {
  return (TITLES[type] ?? "New notification from %{name}").replace("%{name}", truncate(name, 100));
}

export async function pushBody(spoilerText: string, html: string): Promise<string> {
  const text = spoilerText.trim() || decodeEntities(await htmlToText(html));
  return truncate(text.replace(/\s+/g, " ").trim(), 140);
}

/** The JSON text of the push message, kept under what one push can carry (a huge remote avatar URL is dropped). */
export async function renderPushMessage(p: PushMessageInput): Promise<string> {
  const id = /^\d{1,20}$/.test(p.notificationId) ? p.notificationId : "0";
  const fields = {
    access_token: p.accessToken,
    preferred_locale: p.locale,
    notification_id: 0,
    notification_type: p.type,
    icon: p.icon as string | null,
    title: pushTitle(p.type, p.name),
    body: await pushBody(p.spoilerText, p.html),
  };
  // Keys are serialised in order and user text sits only inside strings (where a quote is always escaped), so the
  // first `"notification_id":0` is the field itself.
  const json = () => JSON.stringify(fields).replace('"notification_id":0', `"notification_id":${id}`);
  let out = json();
  if (utf8(out).length > MAX_PLAINTEXT) {
    fields.icon = null;
    out = json();
  }
  // Without the icon the message is bounded: a 43-character token, a title and a body of at most 100 and 140
  // characters (6 bytes each at worst, escaped).
  return out;
}
