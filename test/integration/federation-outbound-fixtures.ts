// Remote accounts and statuses written straight into storage, and readers for what the outbound work produced
// (activity_outbox rows and the DELIVERY messages captured by queues.ts).
import { env } from "cloudflare:test";
import { snowflake } from "../../src/lib/text/ids";
import { inboxesOf } from "../../src/federation/outbound/delivery";
import type { JobMessage } from "../../src/effects/types";
import { queued, runQueuedJobs } from "./queues";

export const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const pad = (id: string) => id.padStart(20, "0");
const unpad = (id: string) => id.replace(/^0+(?=\d)/, "");

export interface RemoteAccount {
  id: string;
  uri: string;
  inbox: string;
  sharedInbox: string | null;
  username: string;
  host: string;
}

export async function remoteAccount(username: string, host: string, opts: { shared?: boolean } = {}): Promise<RemoteAccount> {
  const id = snowflake();
  const uri = `https://${host}/users/${username}`;
  const inbox = `${uri}/inbox`;
  const sharedInbox = opts.shared === false ? null : `https://${host}/inbox`;
  await env.DB.prepare(
    `INSERT INTO accounts (id, username, domain, uri, url, inbox_url, shared_inbox_url, followers_url, fetched_at, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?9)`,
  )
    .bind(pad(id), username, host, uri, `https://${host}/@${username}`, inbox, sharedInbox, `${uri}/followers`, Date.now())
    .run();
  return { id, uri, inbox, sharedInbox, username, host };
}

/** `followerId` follows `targetId` (rows written directly, as an accepted remote Follow would leave them). */
export async function addFollow(followerId: string, targetId: string, uri: string | null = null): Promise<void> {
  await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, uri, created_at) VALUES (?1, ?2, ?3, ?4, ?5)")
    .bind(pad(snowflake()), pad(followerId), pad(targetId), uri, Date.now())
    .run();
}

export async function remoteStatus(author: RemoteAccount, visibility = "public"): Promise<{ id: string; uri: string }> {
  const id = snowflake();
  const uri = `https://${author.host}/users/${author.username}/statuses/${id}`;
  await env.DB.prepare(
    "INSERT INTO statuses (id, uri, url, account_id, local, visibility, content, created_at, updated_at) VALUES (?1, ?2, ?2, ?3, 0, ?4, '<p>remote</p>', ?5, ?5)",
  )
    .bind(pad(id), uri, pad(author.id), visibility, Date.now())
    .run();
  return { id, uri };
}

export interface OutboxRow {
  id: string;
  accountId: string;
  activity: any;
}

export async function outbox(): Promise<OutboxRow[]> {
  const { results } = await env.DB.prepare("SELECT id, account_id, json FROM activity_outbox ORDER BY id").all<{
    id: string;
    account_id: string;
    json: string;
  }>();
  return results.map((r) => ({ id: unpad(r.id), accountId: unpad(r.account_id), activity: JSON.parse(r.json) }));
}

/** Runs the queued jobs and returns the activities they stored, with the inboxes each was sent to. */
export async function federated(): Promise<{ activity: any; accountId: string; inboxes: string[] }[]> {
  await runQueuedJobs();
  const rows = await outbox();
  return rows.map((r) => ({
    activity: r.activity,
    accountId: r.accountId,
    inboxes: queued.deliveries
      .filter((d) => unpad(d.outboxId) === r.id)
      .flatMap(inboxesOf)
      .sort(),
  }));
}

/**
 * The activities (of `type`) stored since the last call: clears the outbox and the captured deliveries. `jobs`: jobs
 * taken out of the queue already (those an inbox delivery ran or recorded), run first.
 */
export async function take(type?: string, jobs: readonly JobMessage[] = []) {
  queued.jobs.unshift(...jobs);
  const all = await federated();
  await env.DB.prepare("DELETE FROM activity_outbox").run();
  queued.deliveries.length = 0;
  return type ? all.filter((a) => a.activity.type === type) : all;
}
