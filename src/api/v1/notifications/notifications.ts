// /api/v1/notifications: list (types[], exclude_types[], account_id, include_filtered), show, dismiss, clear, unread_count,
// and the legacy DELETE /:id and DELETE /destroy_multiple (ids[]) Mastodon's routes still hold.
// Notifications the policy filtered stay out of the list and the count unless include_filtered or account_id is given.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import type { Ctx } from "../../../context";
import { renderNotifications } from "../../../entities/notifications/notification";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { clampLimit, readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, readParams, zBool } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import {
  clearNotifications,
  dismissNotification,
  dismissNotifications,
  findNotification,
  notificationPage,
  unreadCount,
  type NotificationFilter,
} from "../../../queries/notifications/notifications";

const r = routeGroup();

/** `types[]` and the like: unknown values are ignored (clients send types this server may not know). */
export const typeList = lazy(() =>
  z.preprocess((v) => {
    if (v === undefined || v === null || v === "") return undefined;
    const arr = Array.isArray(v) ? v : typeof v === "object" ? Object.values(v as object) : [v];
    return arr.filter((x): x is string => typeof x === "string" && x.length <= 40).slice(0, 50);
  }, z.array(z.string()).optional()),
);

const filterSchema = lazy(() =>
  z
    .object({
      types: typeList(),
      exclude_types: typeList(),
      account_id: z.unknown().optional(),
      include_filtered: zBool,
    })
    .passthrough(),
);

/** types[], exclude_types[], account_id, include_filtered (shared with /api/v2/notifications). */
export async function readFilter(c: Ctx): Promise<NotificationFilter> {
  const q = await parse(c, filterSchema());
  const f: NotificationFilter = { types: q.types, excludeTypes: q.exclude_types, includeFiltered: !!q.include_filtered };
  if (q.account_id !== undefined && q.account_id !== "") {
    // An account id that cannot exist matches nothing.
    f.accountId = parseId(q.account_id) ?? "0";
  }
  return f;
}

r.get("/", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const f = await readFilter(c);
  const page = readPage(await readParams(c), 40, 80);
  const db = c.get("db");
  const rows = await notificationPage(db, v.account.id, f, page);
  const body = await renderNotifications(db, c.get("config"), rows, v.account.id);
  setLinkHeader(c, rows[0]?.n.id, rows[rows.length - 1]?.n.id, rows.length >= page.limit);
  return c.json(body);
});

r.get("/unread_count", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const f = await readFilter(c);
  const limit = clampLimit((await readParams(c)).limit, 100, 1000);
  return c.json({ count: await unreadCount(c.get("db"), v.account.id, f, limit) });
});

r.post("/clear", requireUser("write:notifications"), async (c) => {
  await clearNotifications(c.get("db"), me(c).account.id);
  return c.json({});
});

/** Legacy POST /api/v1/notifications/dismiss with an `id` parameter. */
r.post("/dismiss", requireUser("write:notifications"), async (c) => {
  const id = parseId((await readParams(c)).id);
  if (!id || !(await dismissNotification(c.get("db"), me(c).account.id, id))) throw notFound();
  return c.json({});
});

r.delete("/destroy_multiple", requireUser("write:notifications"), async (c) => {
  const raw = (await readParams(c)).ids;
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).slice(0, 100).map(parseId);
  await dismissNotifications(
    c.get("db"),
    me(c).account.id,
    list.filter((x): x is string => !!x),
  );
  return c.json({});
});

r.delete("/:id", requireUser("write:notifications"), async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id || !(await dismissNotification(c.get("db"), me(c).account.id, id))) throw notFound();
  return c.json({});
});

r.get("/:id", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  const db = c.get("db");
  const row = await findNotification(db, v.account.id, id, true);
  if (!row) throw notFound();
  const [out] = await renderNotifications(db, c.get("config"), [row], v.account.id);
  if (!out) throw notFound();
  return c.json(out);
});

r.post("/:id/dismiss", requireUser("write:notifications"), async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id || !(await dismissNotification(c.get("db"), me(c).account.id, id))) throw notFound();
  return c.json({});
});

export default r;
