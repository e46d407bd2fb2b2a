// What the admin pages' confirmation step (confirm.tsx) says before each action that cannot be taken back: the
// question, what the action will do, and the label of the button that does it.
import type { DomainBlockRow } from "../../db/schema";
import type { CustomEmojiRow } from "../../services/admin/custom-emojis";
import type { Confirmation } from "./confirm";

/** What each action on a reported account does, as the confirmation page says it. */
export function accountActionQuestion(type: string, acct: string, local: boolean): Confirmation | null {
  const resolves = `resolve this report and every other open report about ${acct}`;
  switch (type) {
    case "suspend":
      return {
        question: `Suspend ${acct}?`,
        consequences: [
          local ? `stop ${acct} from signing in and using the account with any app` : `stop ${acct}'s posts and activities from reaching this server`,
          `hide ${acct}'s profile and posts from everyone here`,
          ...(local ? ["tell the servers of their followers that the account is suspended"] : []),
          resolves,
        ],
        button: `Suspend ${acct}`,
      };
    case "silence":
      return {
        question: `Limit ${acct}?`,
        consequences: [`hide ${acct}'s posts and notifications from everyone who does not follow them`, resolves],
        button: `Limit ${acct}`,
      };
    case "sensitive":
      return {
        question: `Mark ${acct}'s media as sensitive?`,
        consequences: [`hide every picture and video ${acct} posts behind a warning`, resolves],
        button: `Mark ${acct}'s media as sensitive`,
      };
    case "disable":
      return {
        question: `Disable ${acct}'s login?`,
        consequences: [`stop ${acct} from signing in and end their sessions in apps (their profile and posts stay visible)`, resolves],
        button: `Disable ${acct}'s login`,
      };
    default:
      return null;
  }
}

export const rejectSignUpQuestion = (username: string): Confirmation => ({
  question: `Reject @${username}'s sign-up?`,
  consequences: [`delete the account @${username} and free its username and e-mail address (they may sign up again)`],
  button: `Reject @${username}`,
});

/** Suspending a domain cuts every follow with it, which lifting the block does not give back. */
export const suspendDomainQuestion = (domain: string): Confirmation => ({
  question: `Suspend ${domain}?`,
  consequences: [
    `suspend every account of ${domain} and its subdomains: their posts are hidden here and nothing more is taken from them`,
    "remove every follow between this server's users and those accounts (lifting the block later does not restore them)",
  ],
  button: `Suspend ${domain}`,
});

export const unblockDomainQuestion = (b: Pick<DomainBlockRow, "domain" | "severity">): Confirmation => ({
  question: `Unblock ${b.domain}?`,
  consequences: [
    `lift the limits this block set on the accounts of ${b.domain}`,
    ...(b.severity === "suspend" ? ["not restore the follows the suspension removed"] : []),
  ],
  button: `Unblock ${b.domain}`,
});

export const removeAllowQuestion = (domain: string): Confirmation => ({
  question: `Remove ${domain} from the allowed domains?`,
  consequences: [`stop federating with ${domain} while limited federation is on (LIMITED_FEDERATION)`],
  button: `Remove ${domain}`,
});

export const removeRelayQuestion = (inboxUrl: string): Confirmation => ({
  question: `Remove the relay ${inboxUrl}?`,
  consequences: ["unsubscribe from the relay: its posts stop coming, and this server's public posts stop going to it"],
  button: "Remove the relay",
});

export const deleteEmojiQuestion = (e: Pick<CustomEmojiRow, "shortcode" | "domain">): Confirmation => ({
  question: `Delete :${e.shortcode}:?`,
  consequences: [
    e.domain ? `forget the emoji :${e.shortcode}: of ${e.domain}` : `delete the emoji :${e.shortcode}: and its image`,
    "show it as its :shortcode: text in the posts that used it",
  ],
  button: `Delete :${e.shortcode}:`,
});

export const deleteAnnouncementQuestion = (text: string): Confirmation => ({
  question: "Delete this announcement?",
  consequences: [`remove “${text.slice(0, 80)}”, with its reactions, from every user's app`],
  button: "Delete the announcement",
});

export const deleteRuleQuestion = (text: string): Confirmation => ({
  question: "Delete this rule?",
  consequences: [`remove “${text.slice(0, 80)}” from the server's rules, shown at sign-up and when reporting`],
  button: "Delete the rule",
});

export const removeThumbnailQuestion: Confirmation = {
  question: "Remove the thumbnail?",
  consequences: ["delete the uploaded image; the default one is shown instead"],
  button: "Remove the thumbnail",
};
