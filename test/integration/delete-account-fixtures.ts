// Account deletion fixtures shared by admin-delete-account.test.ts (staff's DELETE) and delete-own-account.test.ts
// (/settings/delete): a row counter, and an account known around the fediverse whose deletion must reach it.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { TestUser } from "./helpers";
import { addFollow, remoteAccount } from "./federation-outbound-fixtures";

export const pad = (id: string) => id.padStart(20, "0");

/** The `n` of a `SELECT count(*) AS n ...`. */
export const count = async (q: string, ...binds: unknown[]) =>
  Number(
    (
      await env.DB.prepare(q)
        .bind(...binds)
        .first<{ n: number }>()
    )?.n ?? 0,
  );

/**
 * `u` known around: followed by fan@fans.example (shared inbox), following idol@idols.example (its own inbox) and
 * followed by the local `friend`, who favourites `u`'s public post `text`.
 */
export async function knownAround(u: TestUser, friend: TestUser, text: string) {
  const fan = await remoteAccount("fan", "fans.example");
  const idol = await remoteAccount("idol", "idols.example", { shared: false });
  await addFollow(fan.id, u.id);
  await addFollow(u.id, idol.id);
  await friend.api.post(`/api/v1/accounts/${u.id}/follow`);
  const post = await u.api.post("/api/v1/statuses", { status: text });
  expect(post.status).toBe(200);
  await friend.api.post(`/api/v1/statuses/${post.body.id}/favourite`);
  return { fan, idol, post };
}
