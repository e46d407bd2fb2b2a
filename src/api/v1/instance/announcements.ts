// /api/v1/announcements: published announcements for the signed-in user (with_dismissed), dismiss, reactions.
import { routeGroup } from "../../../route-group";
import * as z from "zod";
import { renderAnnouncements } from "../../../entities/instance/announcement";
import { parse, pathId, zBool } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { publishedAnnouncements } from "../../../queries/instance/announcements";
import { addReaction, dismissAnnouncement, removeReaction } from "../../../services/instance/announcements";

const r = routeGroup();

r.get("/", requireUser("read"), async (c) => {
  const { with_dismissed } = await parse(c, z.object({ with_dismissed: zBool }));
  const v = me(c);
  const db = c.get("db");
  const rows = await publishedAnnouncements(db, v.account.id, with_dismissed === true);
  return c.json(await renderAnnouncements(db, c.get("config"), rows, v.account.id));
});

r.post("/:id/dismiss", requireUser("write:accounts"), async (c) => {
  await dismissAnnouncement(c.get("db"), me(c).account.id, pathId(c));
  return c.json({});
});

/** The reaction from the path (Hono has already percent-decoded it). */
const reactionName = (c: { req: { param(name: string): string | undefined } }) => c.req.param("name") ?? "";

r.put("/:id/reactions/:name", requireUser("write:favourites"), async (c) => {
  await addReaction(c.get("db"), c.get("fx"), me(c).account.id, pathId(c), reactionName(c));
  return c.json({});
});

r.delete("/:id/reactions/:name", requireUser("write:favourites"), async (c) => {
  await removeReaction(c.get("db"), c.get("fx"), me(c).account.id, pathId(c), reactionName(c));
  return c.json({});
});

export default r;
