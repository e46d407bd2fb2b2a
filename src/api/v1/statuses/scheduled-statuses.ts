// /api/v1/scheduled_statuses: the owner's scheduled statuses (Mastodon's Api::V1::ScheduledStatusesController):
// list (paged by id, 20 by default, 40 at most), show, reschedule (PUT scheduled_at) and delete. Another account's
// scheduled status is a 404 (B14). Creating one is POST /api/v1/statuses with scheduled_at.
import { routeGroup } from "../../../route-group";
import * as z from "zod";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, readParams, zStr, pathId } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { deleteScheduledStatus, listScheduledStatuses, rescheduleStatus, showScheduledStatus } from "../../../services/statuses/scheduled-statuses";

const r = routeGroup();

const read = requireUser("read:statuses");
const write = requireUser("write:statuses");

r.get("/", read, async (c) => {
  const page = readPage(await readParams(c), 20, 40);
  const list = await listScheduledStatuses(c.get("db"), c.get("config"), me(c).account.id, page);
  setLinkHeader(c, list[0]?.id, list[list.length - 1]?.id, list.length === page.limit);
  return c.json(list);
});

r.get("/:id", read, async (c) => c.json(await showScheduledStatus(c.get("db"), c.get("config"), me(c).account.id, pathId(c))));

r.put("/:id", write, async (c) => {
  const id = pathId(c);
  const { scheduled_at } = await parse(c, z.object({ scheduled_at: z.preprocess((v) => (v === null ? undefined : v), zStr(100).optional()) }));
  return c.json(await rescheduleStatus(c.get("db"), c.get("config"), me(c).account.id, id, scheduled_at));
});

r.delete("/:id", write, async (c) => {
  await deleteScheduledStatus(c.get("db"), me(c).account.id, pathId(c));
  return c.json({});
});

export default r;
