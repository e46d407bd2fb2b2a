// Fixtures for the feed, timeline and notification tests: rows written directly (statuses, follows, mentions ...)
// so these tests do not depend on the posting routes, and fan-out driven through the real JOBS queue.
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { follows, mentions, statuses, type Visibility } from "../../src/db/schema";
import { padId, snowflake } from "../../src/lib/text/ids";
import { searchIndexStatement } from "../../src/services/statuses/search-index";
import { db, type TestUser } from "./helpers";

let clock = Date.now() - 10 * 60 * 1000;

/** Strictly increasing snowflakes, so statuses made in one test sort in creation order. */
export function nextId(): string {
  clock += 3;
  return snowflake(clock);
}

export interface StatusOpts {
  visibility?: Visibility;
  inReplyTo?: { id: string; accountId: string };
  reblogOf?: string;
  language?: string | null;
  mentions?: string[];
  text?: string;
  local?: boolean;
  /** The thread (statuses.conversation_id); a direct status starts its own when not given. */
  conversationId?: string;
}

export async function insertStatus(author: { id: string; username?: string }, o: StatusOpts = {}): Promise<string> {
  const id = nextId();
  const now = Date.now();
  await db()
    .insert(statuses)
    .values({
      id,
      uri: `http://tern.test/users/${author.username ?? author.id}/statuses/${id}`,
      accountId: author.id,
      local: o.local ?? true,
      inReplyToId: o.inReplyTo?.id ?? null,
      inReplyToAccountId: o.inReplyTo?.accountId ?? null,
      reblogOfId: o.reblogOf ?? null,
      conversationId: o.conversationId ?? (o.visibility === "direct" ? id : null),
      content: o.reblogOf ? "" : `<p>${o.text ?? `status ${id}`}</p>`,
      text: o.text ?? "",
      visibility: o.visibility ?? "public",
      language: o.language === undefined ? (o.reblogOf ? null : "en") : o.language,
      createdAt: now,
      updatedAt: now,
    });
  for (const m of o.mentions ?? []) await db().insert(mentions).values({ id: nextId(), statusId: id, accountId: m });
  // Indexed for search as postStatus does in its batch.
  if (!o.reblogOf) await searchIndexStatement(db(), id, { spoilerText: "", text: o.text ?? `status ${id}` });
  return id;
}

/** A status created and fanned out through the JOBS queue. */
export async function post(author: { id: string; username?: string }, o: StatusOpts = {}): Promise<string> {
  const id = await insertStatus(author, o);
  await env.JOBS.send({ type: "fanout", statusId: id });
  return id;
}

export async function follow(
  a: TestUser | { id: string },
  b: TestUser | { id: string },
  o: { showReblogs?: boolean; notify?: boolean; languages?: string[] | null } = {},
) {
  await db()
    .insert(follows)
    .values({
      id: nextId(),
      accountId: a.id,
      targetAccountId: b.id,
      showReblogs: o.showReblogs ?? true,
      notify: o.notify ?? false,
      languages: o.languages ?? null,
      createdAt: Date.now(),
    });
}

export async function homeRows(accountId: string): Promise<string[]> {
  const rows = await db().all<{ id: string }>(sql`SELECT status_id AS id FROM home_feed WHERE account_id = ${padId(accountId)} ORDER BY status_id DESC`);
  return rows.map((r) => r.id.replace(/^0+/, ""));
}

export async function listRows(listId: string): Promise<string[]> {
  const rows = await db().all<{ id: string }>(sql`SELECT status_id AS id FROM list_feed WHERE list_id = ${padId(listId)} ORDER BY status_id DESC`);
  return rows.map((r) => r.id.replace(/^0+/, ""));
}

export async function exec(q: string, ...binds: unknown[]) {
  return env.DB.prepare(q)
    .bind(...binds)
    .run();
}

export const pad = padId;
