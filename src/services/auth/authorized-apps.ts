// The applications a user authorized (their live access tokens, grouped by application, as Mastodon's
// /oauth/authorized_applications lists them) and the user's browser sessions, with revocation. Revoking an
// application revokes every token the user gave it (Doorkeeper's revoke_all_for) and its unused codes; the tokens'
// push subscriptions go with them (triggers, migrations/0002_push.sql) and their open streams are closed at once.
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { oauthAccessGrants, oauthAccessTokens, oauthApplications, webSessions } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { notFound } from "../../lib/http/errors";

export interface AuthorizedApp {
  applicationId: string;
  name: string;
  website: string | null;
  scopes: string[];
  tokens: number;
  createdAt: number;
  lastUsedAt: number | null;
}

/** At most 200 applications (far beyond what a person authorizes). */
export async function authorizedApps(db: DB, userId: string): Promise<AuthorizedApp[]> {
  const rows = await db
    .select({
      applicationId: oauthApplications.id,
      name: oauthApplications.name,
      website: oauthApplications.website,
      scopes: sql<string>`group_concat(${oauthAccessTokens.scopes}, ' ')`,
      tokens: sql<number>`count(*)`,
      createdAt: sql<number>`min(${oauthAccessTokens.createdAt})`,
      lastUsedAt: sql<number | null>`max(${oauthAccessTokens.lastUsedAt})`,
    })
    .from(oauthAccessTokens)
    .innerJoin(oauthApplications, eq(oauthApplications.id, oauthAccessTokens.applicationId))
    .where(and(eq(oauthAccessTokens.userId, userId), isNull(oauthAccessTokens.revokedAt)))
    .groupBy(oauthApplications.id)
    .orderBy(desc(sql`min(${oauthAccessTokens.createdAt})`))
    .limit(200);
  return rows.map((r) => ({
    ...r,
    scopes: [...new Set((r.scopes ?? "").split(" ").filter(Boolean))].sort(),
    tokens: Number(r.tokens),
    createdAt: Number(r.createdAt),
    lastUsedAt: r.lastUsedAt === null ? null : Number(r.lastUsedAt),
  }));
}

/** Revokes every token of `applicationId` the user holds; 404 when there is none. */
export async function revokeAuthorizedApp(db: DB, fx: Effects, who: { userId: string; accountId: string }, applicationId: string): Promise<void> {
  const now = Date.now();
  const [revoked] = await db.batch([
    db
      .update(oauthAccessTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthAccessTokens.userId, who.userId), eq(oauthAccessTokens.applicationId, applicationId), isNull(oauthAccessTokens.revokedAt)))
      .returning({ id: oauthAccessTokens.id }),
    db.delete(oauthAccessGrants).where(and(eq(oauthAccessGrants.userId, who.userId), eq(oauthAccessGrants.applicationId, applicationId))),
  ]);
  if (!revoked.length) throw notFound();
  for (const t of revoked) fx.add({ type: "disconnect_streams", accountId: who.accountId, tokenId: t.id });
}

export interface BrowserSession {
  idHash: string;
  createdAt: number;
  expiresAt: number;
}

export async function browserSessions(db: DB, userId: string): Promise<BrowserSession[]> {
  return db
    .select({ idHash: webSessions.idHash, createdAt: webSessions.createdAt, expiresAt: webSessions.expiresAt })
    .from(webSessions)
    .where(and(eq(webSessions.userId, userId), sql`${webSessions.expiresAt} > ${Date.now()}`))
    .orderBy(desc(webSessions.createdAt))
    .limit(200);
}

/** Signs one of the user's browser sessions out; 404 when it is not theirs. */
export async function revokeBrowserSession(db: DB, userId: string, idHash: string): Promise<void> {
  const gone = await db
    .delete(webSessions)
    .where(and(eq(webSessions.userId, userId), eq(webSessions.idHash, idHash)))
    .returning({ idHash: webSessions.idHash });
  if (!gone.length) throw notFound();
}
