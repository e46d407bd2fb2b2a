// /api/v1/admin/relays: Tern's own API for Mastodon's relay admin pages (Admin::RelaysController). manage_federation;
// admin:read / admin:write. POST adds a relay and follows it at once, as Mastodon's create does.
import * as z from "zod";
import { renderAdminRelay } from "../../../entities/admin/admin-relay";
import { parse, pathId, zStr } from "../../../lib/http/params";
import { addRelay, disableRelay, enableRelay, getRelay, listRelays, removeRelay } from "../../../services/admin/relays";
import { staff, staffRouter } from "./staff";

const { r, read, write } = staffRouter("manage_federation");

r.get("/", read, async (c) => c.json((await listRelays(c.get("db"))).map(renderAdminRelay)));

r.get("/:id", read, async (c) => c.json(renderAdminRelay(await getRelay(c.get("db"), pathId(c)))));

r.post("/", write, async (c) => {
  const p = await parse(c, z.object({ inbox_url: zStr(2048).optional() }).passthrough());
  return c.json(renderAdminRelay(await addRelay(c.get("db"), c.get("fx"), c.get("config"), staff(c), p.inbox_url)));
});

r.post("/:id/enable", write, async (c) => c.json(renderAdminRelay(await enableRelay(c.get("db"), c.get("fx"), c.get("config"), staff(c), pathId(c)))));

r.post("/:id/disable", write, async (c) => c.json(renderAdminRelay(await disableRelay(c.get("db"), c.get("fx"), staff(c), pathId(c)))));

r.delete("/:id", write, async (c) => {
  await removeRelay(c.get("db"), c.get("fx"), staff(c), pathId(c));
  return c.json({});
});

export default r;
