// What the tests of the effects' durable road share (effects-durable.test.ts, effects-journal.test.ts): an author with
// a local follower, a remote follower and an account to mention, and what a user would look at afterwards.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { Effect } from "../../src/effects/types";
import { padId } from "../../src/lib/text/ids";
import { addFollow, remoteAccount, take } from "./federation-outbound-fixtures";
import { makeUser, type TestUser } from "./helpers";
import { queued } from "./queues";

export interface EffectsWorld {
  author: TestUser;
  follower: TestUser;
  mentioned: TestUser;
  remote: Awaited<ReturnType<typeof remoteAccount>>;
}

/** The author, followed by a local and a remote account; nothing queued or kept when it returns. */
export async function effectsWorld(): Promise<EffectsWorld> {
  const author = await makeUser();
  const follower = await makeUser();
  const mentioned = await makeUser();
  expect((await follower.api.post(`/api/v1/accounts/${author.id}/follow`)).status).toBe(200);
  const remote = await remoteAccount(`far${Date.now()}`, "remote.example");
  await addFollow(remote.id, author.id);
  await take();
  queued.jobs.length = 0;
  await env.DB.prepare("DELETE FROM pending_effects").run();
  return { author, follower, mentioned, remote };
}

export const homeIds = async (u: TestUser) => ((await u.api.get("/api/v1/timelines/home")).body as { id: string }[]).map((s) => s.id);

export const notificationsOf = async (u: TestUser, type: string) =>
  (await env.DB.prepare("SELECT id FROM notifications WHERE account_id = ? AND type = ?").bind(padId(u.id), type).all<{ id: string }>()).results.map((r) =>
    r.id.replace(/^0+/, ""),
  );

/** How many `notify` effects ran for these notifications. */
export const notifyRuns = (effects: Effect[], ids: string[]) => effects.filter((e) => e.type === "notify" && ids.includes(e.notificationId)).length;
