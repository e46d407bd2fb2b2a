// Server rules (Mastodon's Admin::RulesController and Rule): text (≤ 300 characters, as Mastodon's form), an optional
// hint and a priority that orders them. Every change and its admin_action_logs row are one batch; the instance
// documents pick them up through the triggers of migration 0021. Reports keep the ids of the rules they cite, so a
// deleted rule simply drops out of them.
import { asc, eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { rules } from "../../db/schema";
import { notFound, validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import { logFor, type Staff } from "./log";
import type { RuleRow } from "../../db/schema";

export const RULE_TEXT_MAX = 300;
export const RULE_HINT_MAX = 2000;

export interface RuleInput {
  text?: string;
  hint?: string;
  priority?: string | number;
}

const log = logFor("Rule");

export function listRules(db: DB): Promise<RuleRow[]> {
  return db.select().from(rules).orderBy(asc(rules.priority), asc(rules.id));
}

export async function getRule(db: DB, id: string): Promise<RuleRow> {
  const [row] = await db.select().from(rules).where(eq(rules.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

function checked(input: RuleInput, old?: RuleRow): Pick<RuleRow, "text" | "hint" | "priority"> {
  const text = (input.text ?? old?.text ?? "").trim();
  const hint = (input.hint ?? old?.hint ?? "").trim();
  if (!text) throw validationFailed("Text can't be blank");
  if (text.length > RULE_TEXT_MAX) throw validationFailed(`Text is too long (maximum is ${RULE_TEXT_MAX} characters)`);
  if (hint.length > RULE_HINT_MAX) throw validationFailed(`Hint is too long (maximum is ${RULE_HINT_MAX} characters)`);
  let priority = old?.priority ?? 0;
  if (input.priority !== undefined && String(input.priority).trim() !== "") {
    const s = String(input.priority).trim();
    if (!/^-?\d{1,6}$/.test(s)) throw validationFailed("Priority is not a number");
    priority = Number(s);
  }
  return { text, hint, priority };
}

export async function createRule(db: DB, staff: Staff, input: RuleInput): Promise<RuleRow> {
  const now = Date.now();
  const row: RuleRow = { id: snowflake(now), ...checked(input), createdAt: now };
  await db.batch([db.insert(rules).values(row), log(db, staff, "create", row.id, now)]);
  return row;
}

export async function updateRule(db: DB, staff: Staff, id: string, input: RuleInput): Promise<RuleRow> {
  const old = await getRule(db, id);
  const next = checked(input, old);
  const now = Date.now();
  await db.batch([db.update(rules).set(next).where(eq(rules.id, id)), log(db, staff, "update", id, now)]);
  return { ...old, ...next };
}

export async function deleteRule(db: DB, staff: Staff, id: string): Promise<void> {
  await getRule(db, id);
  const now = Date.now();
  await db.batch([log(db, staff, "destroy", id, now), db.delete(rules).where(eq(rules.id, id))]);
}
