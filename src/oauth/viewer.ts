// Bearer token → viewer: ONE D1 query joins token, user, account, role and application, so authenticated routes
// (verify_credentials among them) spend a single round trip on identity.
import { and, eq, isNull, sql } from "drizzle-orm";
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

export async function loadViewer(db: DB, token: string): Promise<Viewer | null> {
  if (token.length > 200) return null;
  const rows = await viewerRows(db, { hash: await sha256Hex(token) });
  const r = rows[0];
  if (!r) return null;
  if (r.token.userId && (!r.user || !r.account)) return null;
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
