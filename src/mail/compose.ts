// What each mail says (Mastodon's UserMailer and AdminMailer, in Tern's words). Every mail has a plain-text part and an
// HTML part saying the same, names the instance, and links only to the instance's own origin; it ends by saying to
// which address it went and why, so a recipient who did not ask for it knows what to ignore.
import { escapeHtml } from "../lib/text/text";
import type { OutgoingMail } from "./send";

export interface Site {
  /** The instance's name (the admin setting, else SITE_TITLE). */
  title: string;
  /** scheme://host of the instance: every link starts with it. */
  origin: string;
}

interface Body {
  subject: string;
  greeting: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  after?: string[];
  why: string;
}

function render(site: Site, to: string, b: Body): OutgoingMail {
  const subject = `${b.subject} (${site.title})`;
  const text = [
    b.greeting,
    "",
    ...b.paragraphs.flatMap((p) => [p, ""]),
    ...(b.action ? [`${b.action.label}: ${b.action.url}`, ""] : []),
    ...(b.after ?? []).flatMap((p) => [p, ""]),
    "-- ",
    `${site.title}, ${site.origin}/`,
    `This message was sent to ${to} ${b.why}.`,
    "",
  ].join("\n");
  const p = (s: string) => `<p>${escapeHtml(s)}</p>`;
  const html = [
    "<!doctype html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5; max-width: 36em">',
    p(b.greeting),
    ...b.paragraphs.map(p),
    ...(b.action ? [`<p><a href="${escapeHtml(b.action.url)}">${escapeHtml(b.action.label)}</a></p>`] : []),
    ...(b.after ?? []).map(p),
    `<hr><p style="color: #666; font-size: small"><a href="${escapeHtml(site.origin)}/">${escapeHtml(site.title)}</a><br>`,
    `This message was sent to ${escapeHtml(to)} ${escapeHtml(b.why)}.</p>`,
    "</body></html>",
  ].join("\n");
  return { to, subject, text, html };
}

export function confirmationMail(site: Site, to: string, username: string, token: string): OutgoingMail {
  return render(site, to, {
    subject: "Confirm your e-mail address",
    greeting: `Welcome, @${username}!`,
    paragraphs: [`You signed up on ${site.title}. Follow the link below to confirm that this address is yours; it works once, for 3 days.`],
    action: { label: "Confirm your e-mail address", url: `${site.origin}/auth/confirmation?confirmation_token=${encodeURIComponent(token)}` },
    after: ["If you did not sign up, ignore this message: the account cannot be used without this confirmation."],
    why: `because someone signed up on ${site.title} with it`,
  });
}

export function reconfirmationMail(site: Site, to: string, username: string, token: string): OutgoingMail {
  return render(site, to, {
    subject: "Confirm your new e-mail address",
    greeting: `Hello @${username},`,
    paragraphs: [
      `You asked to change the e-mail address of your account on ${site.title} to this one. Follow the link below to confirm it; it works once, for 3 days. Until then your old address stays in use.`,
    ],
    action: { label: "Confirm the new address", url: `${site.origin}/auth/confirmation?confirmation_token=${encodeURIComponent(token)}` },
    after: ["If you did not ask for this, ignore this message: nothing changes."],
    why: `because it was entered as the new address of @${username} on ${site.title}`,
  });
}

export function resetPasswordMail(site: Site, to: string, username: string, token: string): OutgoingMail {
  return render(site, to, {
    subject: "Reset your password",
    greeting: `Hello @${username},`,
    paragraphs: [`Someone asked for a link to change the password of your account on ${site.title}. It works once, for 6 hours.`],
    action: { label: "Change your password", url: `${site.origin}/auth/password/edit?reset_password_token=${encodeURIComponent(token)}` },
    after: [
      "Changing the password signs you out everywhere, apps included.",
      "If you did not ask for this, ignore this message: your password stays as it is.",
    ],
    why: `because a password reset was asked for on ${site.title}`,
  });
}

const staffWhy = (site: Site) => `because you are on the staff of ${site.title} and chose to get these notices (settings: preferences)`;

export function newReportMail(site: Site, to: string, r: { target: string; reporter: string; comment: string }): OutgoingMail {
  return render(site, to, {
    subject: `New report of @${r.target}`,
    greeting: "Hello,",
    paragraphs: [`@${r.reporter} reported @${r.target}.`, ...(r.comment ? [`Their comment: ${r.comment.slice(0, 500)}`] : [])],
    action: { label: "Review the report", url: `${site.origin}/admin/reports` },
    why: staffWhy(site),
  });
}

export function pendingAccountMail(site: Site, to: string, a: { username: string; email: string; reason: string }): OutgoingMail {
  return render(site, to, {
    subject: `New account awaiting review: @${a.username}`,
    greeting: "Hello,",
    paragraphs: [`@${a.username} (${a.email}) signed up and waits for approval.`, ...(a.reason ? [`Why they want to join: ${a.reason.slice(0, 500)}`] : [])],
    action: { label: "Review pending accounts", url: `${site.origin}/admin/pending` },
    why: staffWhy(site),
  });
}

export function trendsMail(site: Site, to: string, n: { tags: number; statuses: number; links: number }): OutgoingMail {
  const parts = [
    n.tags ? `${n.tags} hashtag${n.tags === 1 ? "" : "s"}` : "",
    n.statuses ? `${n.statuses} post${n.statuses === 1 ? "" : "s"}` : "",
    n.links ? `${n.links} link${n.links === 1 ? "" : "s"}` : "",
  ].filter(Boolean);
  return render(site, to, {
    subject: "New trends awaiting review",
    greeting: "Hello,",
    paragraphs: [
      `These are trending on ${site.title} and wait for review before they are shown: ${parts.join(", ")}.`,
      "Trends are reviewed because the server's setting asks for it (Allow trends without prior review is off). Review them with an admin client (Mastodon's admin API, /api/v1/admin/trends).",
    ],
    action: { label: "Open the administration", url: `${site.origin}/admin` },
    why: staffWhy(site),
  });
}
