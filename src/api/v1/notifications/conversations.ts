// /api/v1/conversations: the viewer's direct-message threads (GET, newest activity first, Link cursors are
// last_status ids), POST /:id/read, POST /:id/unread (Mastodon 4.2), DELETE /:id.
import { routeGroup } from "../../../route-group";
import { renderConversations } from "../../../entities/notifications/conversation";
import { notFound } from "../../../lib/http/errors";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { pathId, readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { conversationPage } from "../../../queries/notifications/conversations";
import { markConversationRead, removeConversation } from "../../../services/interactions/conversations";

const r = routeGroup();

r.get("/", requireUser("read:statuses"), async (c) => {
  const v = me(c);
  const db = c.get("db");
  const p = await conversationPage(db, v.account.id, readPage(await readParams(c), 20, 40));
  setLinkHeader(c, p.first, p.last, p.full);
  return c.json(await renderConversations(db, c.get("config"), p.rows, v.account.id));
});

/** API ids are small integers (row ids); anything else names no conversation. */
function conversationId(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw notFound();
  return Number(raw);
}

for (const [path, unread] of [
  ["/:id/read", false],
  ["/:id/unread", true],
] as const) {
  r.post(path, requireUser("write:conversations"), async (c) => {
    const v = me(c);
    const db = c.get("db");
    const row = await markConversationRead(db, v.account.id, conversationId(pathId(c)), unread);
    if (!row) throw notFound();
    const [rendered] = await renderConversations(db, c.get("config"), [row], v.account.id);
    return c.json(rendered);
  });
}

r.delete("/:id", requireUser("write:conversations"), async (c) => {
  const v = me(c);
  if (!(await removeConversation(c.get("db"), v.account.id, conversationId(pathId(c))))) throw notFound();
  return c.json({});
});

export default r;
