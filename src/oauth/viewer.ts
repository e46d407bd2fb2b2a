// Bearer token → viewer: ONE D1 query joins token, user, account, role and application, so authenticated routes
// (verify_credentials among them) spend a single round trip on identity. The same row says whether the token's last
// use is due to be recorded (at most once an hour, as Mastodon records it):
// the write then happens after the response (src/app.ts), and a request with nothing due writes nothing.
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, feedStates, followRequests, oauthAccessTokens, oauthApplications, userRoles, users } from "../db/schema";
import { sha256Hex } from "../lib/security/crypto";
import { frozenSelect } from "../db/frozen";

import type { Viewer } from "../db/viewer";

export type { Viewer };

export function bearerToken(req: Request): string | null {
  const h = req.headers.get("authorization");
  if (h) {
    return /^Bearer\s+(\S+)\s*$/i.exec(h)?.[1] ?? null;
  }
  return null;
}

/** The token's row joined with its user, account, role, application and feed state; its SQL text is built once. */
const viewerRows = frozenSelect((db) =>
  db
    .select({
      token: oauthAccessTokens,
      user: users,
      account: accounts,
      role: userRoles,
      app: oauthApplications,
      feed: feedStates,
      frCount: sql<number>`(SELECT count(*) FROM ${followRequests} WHERE ${followRequests.targetAccountId} = ${users.accountId})`,
    })
    .from(oauthAccessTokens)
    .leftJoin(users, eq(users.id, oauthAccessTokens.userId))
    .leftJoin(accounts, eq(accounts.id, users.accountId))
    .leftJoin(userRoles, eq(userRoles.id, users.roleId))
    .leftJoin(oauthApplications, eq(oauthApplications.id, oauthAccessTokens.applicationId))
    .leftJoin(feedStates, eq(feedStates.accountId, users.accountId))
    .where(and(eq(oauthAccessTokens.tokenHash, sql.placeholder("hash")), isNull(oauthAccessTokens.revokedAt)))
    .limit(1),
);

/** A token's last use is written at most this often (an hour, as Mastodon does). */
export const LAST_USED_EVERY_MS = 3_600_000;

export async function loadViewer(db: DB, token: string): Promise<Viewer | null> {
  return (await loadViewerAndUse(db, token))?.viewer ?? null;
}

/** The viewer, and whether the token's last use should be recorded now (`markTokenUsed`): never, or over an hour ago. */
export async function loadViewerAndUse(db: DB, token: string, now = Date.now()): Promise<{ viewer: Viewer; lastUseDue: boolean } | null> {
  if (token.length > 200) return null;
  const rows = await viewerRows(db, { hash: await sha256Hex(token) });
  const r = rows[0];
  if (!r) return null;
  if (r.token.userId && (!r.user || !r.account)) return null;
  const used = r.token.lastUsedAt;
  return { viewer: viewerOf(r), lastUseDue: used === null || used < now - LAST_USED_EVERY_MS };
}

/**
 * Records the token's use at `now`, unless another request recorded one within the hour: the condition is in the
 * UPDATE itself, so requests racing on a due token write the row once.
 */
export function markTokenUsed(db: DB, tokenId: string, now = Date.now()) {
  return db
    .update(oauthAccessTokens)
    .set({ lastUsedAt: now })
    .where(and(eq(oauthAccessTokens.id, tokenId), or(isNull(oauthAccessTokens.lastUsedAt), lt(oauthAccessTokens.lastUsedAt, now - LAST_USED_EVERY_MS))));
}

function viewerOf(r: Awaited<ReturnType<typeof viewerRows>>[number]): Viewer {
  return {
    tokenId: r.token.id,
    scopes: new Set(r.token.scopes.split(" ").filter(Boolean)),
    applicationId: r.token.applicationId,
    application: r.app ? { name: r.app.name, website: r.app.website } : null,
    user: r.user,
    account: r.account,
    role: r.role,
    feedDroppedAt: r.feed?.droppedAt ?? null,
    followRequestsCount: Number(r.frCount ?? 0),
  };
}
