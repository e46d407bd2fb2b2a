// Resolving what a signed-in user typed (search with resolve=true, POST /api/v1/follows) into a remote account or
// status: `@user@domain` / `user@domain` through WebFinger, an https URL through the document it names. Callers
// make sure a user is signed in (security D9: signed-out requests never make the server fetch anything).
import { eq, or } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts } from "../../db/schema/index";
import type { Config } from "../../env";
import { unprocessable } from "../../lib/http/errors";
import type { AccountRow } from "../../db/schema/index";
import type { Effects } from "../../effects/collector";
import { resolveActor, resolveHandle, ResolveError } from "./remote-accounts";
import { newResolution, resolveStatus } from "./resolve-status";
import { accountRows } from "../../db/table-rows";

export type RemoteQuery = { kind: "acct"; username: string; domain: string } | { kind: "url"; url: string };

/** What a query names on another server, or null (local names, free text, malformed input). */
export function remoteQuery(cfg: Config, q: string): RemoteQuery | null {
  const t = q.trim();
  if (/^https:\/\//i.test(t) || (cfg.allowLoopbackFetch && /^http:\/\//i.test(t))) {
    try {
      const u = new URL(t);
      if (u.host.toLowerCase() === cfg.domain.toLowerCase()) return null;
      return { kind: "url", url: t };
    } catch {
      return null;
    }
  }
  const m = /^@?([A-Za-z0-9_.-]{1,64})@([A-Za-z0-9.-]{1,253}(?::\d{1,5})?)$/.exec(t.replace(/^acct:/i, ""));
  if (!m) return null;
  const [, username = "", rawDomain = ""] = m; // both groups always participate
  const domain = rawDomain.toLowerCase();
  if (domain === cfg.domain.toLowerCase() || domain === new URL(cfg.origin).host.toLowerCase()) return null;
  return { kind: "acct", username, domain };
}

/** Message of the ResolveError that means "this account speaks an older protocol, not ActivityPub". */
export const isNoActor = (e: unknown) => e instanceof ResolveError && /no ActivityPub actor/i.test(e.message);

/** The remote account a query names, fetched when unknown or stale; throws ResolveError when it cannot be had. */
export async function resolveRemoteAccount(db: DB, cfg: Config, rq: RemoteQuery): Promise<AccountRow> {
  let a: AccountRow;
  if (rq.kind === "acct") a = await resolveHandle(db, cfg, rq.username, rq.domain);
  else {
    // A profile page URL (https://host/@name) is stored as the account's url; no need to fetch it again.
    const [known] = await accountRows(db, { where: or(eq(accounts.uri, rq.url), eq(accounts.url, rq.url)), limit: 1 });
    a = known?.domain && known.uri !== rq.url ? known : await resolveActor(db, cfg, rq.url);
  }
  if (a.suspendedAt) throw new ResolveError("account suspended");
  return a;
}

/** Like resolveRemoteAccount, but null instead of an error: search shows what it found, or nothing. */
export async function tryResolveAccount(db: DB, cfg: Config, rq: RemoteQuery): Promise<AccountRow | null> {
  try {
    return await resolveRemoteAccount(db, cfg, rq);
  } catch (e) {
    if (!(e instanceof ResolveError)) console.warn("resolve failed", e instanceof Error ? e.message : e);
    return null;
  }
}

/** POST /api/v1/follows: the remote account named by `q`, or null (unknown: 404); 422 for a pre-ActivityPub one. */
export async function resolveForFollow(db: DB, cfg: Config, q: string): Promise<AccountRow | null> {
  const rq = remoteQuery(cfg, q);
  if (!rq) return null;
  try {
    return await resolveRemoteAccount(db, cfg, rq);
  } catch (e) {
    if (isNoActor(e)) throw unprocessable("This account uses an older federation protocol (no ActivityPub actor) and cannot be followed");
    if (!(e instanceof ResolveError)) console.warn("resolve failed", e instanceof Error ? e.message : e);
    return null;
  }
}

/** A profile-looking URL (/users/name, /@name, /u/name): try it as an actor before trying it as a status. */
const looksLikeProfile = (url: string) => {
  try {
    return /^\/(?:users\/|u\/|@)[^/]+\/?$/.test(new URL(url).pathname);
  } catch {
    return false;
  }
};

export interface Resolved {
  account: AccountRow | null;
  statusId: string | null;
}

/**
 * Search with resolve=true (Mastodon's ResolveURLService / ResolveAccountService): an account for a handle, an
 * account or a status for a URL. Errors mean "nothing found". Effects of ingesting a status go to `fx`.
 */
export async function resolveForSearch(db: DB, fx: Effects, cfg: Config, q: string, type: string): Promise<Resolved> {
  const none: Resolved = { account: null, statusId: null };
  const rq = remoteQuery(cfg, q);
  if (!rq) return none;
  const wantAccounts = type === "" || type === "accounts";
  const wantStatuses = rq.kind === "url" && (type === "" || type === "statuses");
  const account = async () => (wantAccounts ? { ...none, account: await tryResolveAccount(db, cfg, rq) } : none);
  const status = async () => {
    if (!wantStatuses || rq.kind !== "url") return none;
    const r = newResolution(db, cfg, fx);
    try {
      const row = await resolveStatus(r, rq.url);
      return { ...none, statusId: row?.id ?? null };
    } catch (e) {
      console.warn("status resolve failed", e instanceof Error ? e.message : e);
      return none;
    }
  };
  const [first, second] = rq.kind === "url" && !looksLikeProfile(rq.url) ? [status, account] : [account, status];
  const a = await first();
  return a.account || a.statusId ? a : second();
}

/** At most this many never-seen handles are looked up for one post, together within MENTION_LOOKUP_BUDGET_MS. */
export const MENTION_LOOKUP_LIMIT = 5;
export const MENTION_LOOKUP_BUDGET_MS = 5_000;

/**
 * Mentions of remote accounts never seen here, resolved by WebFinger while posting (Mastodon's ProcessMentionsService
 * does the same): through the SSRF-guarded fetch, side by side, within a fixed time budget. What cannot be had in
 * time stays plain text; a lookup never fails the post.
 */
export async function resolveMentionHandles(db: DB, cfg: Config, handles: { username: string; domain: string }[]): Promise<AccountRow[]> {
  const picked = handles.slice(0, MENTION_LOOKUP_LIMIT);
  if (!picked.length) return [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const budget = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), MENTION_LOOKUP_BUDGET_MS);
  });
  try {
    const found = await Promise.all(
      picked.map((h) => Promise.race([tryResolveAccount(db, cfg, { kind: "acct", username: h.username, domain: h.domain }), budget])),
    );
    return found.filter((a): a is AccountRow => !!a);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
