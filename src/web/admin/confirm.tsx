// "Are you sure?" for the admin actions that cannot be taken back, without JavaScript: the first POST of such an action
// answers a page that says what will happen, with a button that sends the same form again with `confirmed=1` and a
// link back to the section (Mastodon asks the same through a confirm dialog, and for a report's action through its
// own preview page). Only that second POST acts.
import type { Child } from "hono/jsx";
import type { Ctx } from "../../context";
import type { Params } from "../../lib/http/params";
import { Card, PostForm } from "../form-parts";
import type { AdminSession } from "./guard";
import { sectionPage } from "./kit";

/** What the confirmation page says, and the label of its button. */
export interface Confirmation {
  /** The question, e.g. "Suspend @troll?". */
  question: string;
  /** What the action will do, one line each. */
  consequences: string[];
  /** The button that acts, e.g. "Suspend @troll". */
  button: string;
}

/** An action's answer when it needs a confirmation first. */
export interface AskFirst {
  confirm: Confirmation;
}

/**
 * `act`, once the form says `confirmed=1`; before that the confirmation `ask` describes (when it describes one: `null`
 * acts at once, e.g. a domain block that only limits).
 */
export const confirmFirst =
  <T,>(
    ask: (c: Ctx, f: Params, a: AdminSession) => Promise<Confirmation | null> | Confirmation | null,
    act: (c: Ctx, f: Params, a: AdminSession) => Promise<T>,
  ) =>
  async (c: Ctx, f: Params, a: AdminSession): Promise<T | AskFirst> => {
    if (f.confirmed !== "1") {
      const confirm = await ask(c, f, a);
      if (confirm) return { confirm };
    }
    return act(c, f, a);
  };

export const isAskFirst = (x: unknown): x is AskFirst => typeof x === "object" && x !== null && "confirm" in x;

/** The confirmation page of the POST to this request's path, in the section at `section` (with `back` to cancel). */
export function confirmationPage(c: Ctx, section: string, back: string, q: Confirmation, form: Params) {
  const fields = Object.entries(form).filter((e): e is [string, string] => typeof e[1] === "string" && e[0] !== "csrf" && e[0] !== "confirmed");
  return sectionPage(
    c,
    {},
    section,
    (f) => (
      <Card title={q.question}>
        <div id="confirmation">
          <p>This will:</p>
          <ul>
            {q.consequences.map(
              (line): Child => (
                <li>{line}</li>
              ),
            )}
          </ul>
          <PostForm action={new URL(c.req.url).pathname} csrf={f.csrf}>
            {fields.map(([name, value]) => (
              <input type="hidden" name={name} value={value} />
            ))}
            <input type="hidden" name="confirmed" value="1" />
            <div class="actions">
              <button type="submit" class="danger">
                {q.button}
              </button>
              <a class="button" href={back}>
                Cancel
              </a>
            </div>
          </PostForm>
        </div>
      </Card>
    ),
    "Are you sure?",
  );
}
