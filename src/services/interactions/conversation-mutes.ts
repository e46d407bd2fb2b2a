// Muting a conversation: no more notifications from the thread.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { Config } from "../../env";
import { validationFailed } from "../../lib/http/errors";
import { padId } from "../../lib/text/ids";
import { loadVisible, render, type Json } from "./interaction-target";

export async function muteConversation(db: DB, cfg: Config, id: string, viewerId: string, mute: boolean): Promise<Json> {
  const { b, target } = await loadVisible(db, cfg, id, viewerId);
  if (!target.conversationId) throw validationFailed("This status is not part of a conversation");
  const pc = padId(target.conversationId);
  const pv = padId(viewerId);
  if (mute) {
    await db.run(sql`INSERT OR IGNORE INTO conversation_mutes (account_id, conversation_id) VALUES (${pv}, ${pc})`);
    b.viewer.mutedConversations.add(target.conversationId);
  } else {
    await db.run(sql`DELETE FROM conversation_mutes WHERE account_id = ${pv} AND conversation_id = ${pc}`);
    b.viewer.mutedConversations.delete(target.conversationId);
  }
  return render(cfg, b, target.id);
}
