// /api/v1/admin/announcements (Tern's own: Mastodon manages announcements in its admin pages, with no API): staff
// with manage_announcements list, create, edit, publish, unpublish and delete them. Every change is in the audit log.
// Times are ISO 8601; `starts_at` and `ends_at` go together.
import * as z from "zod";
import { lazy } from "../../../lib/limits/lazy";
import type { Ctx } from "../../../context";
import { renderAdminAnnouncements } from "../../../entities/admin/admin-announcement";
import { unprocessable } from "../../../lib/http/errors";
import { parse, pathId, zBool, zStr } from "../../../lib/http/params";
import { me } from "../../../oauth/guard";
import { allAnnouncements } from "../../../queries/instance/announcements";
import {
  type AnnouncementInput,
  createAnnouncement,
  deleteAnnouncement,
  getAnnouncement,
  publishAnnouncement,
  updateAnnouncement,
} from "../../../services/instance/announcements";
import { staffRouter } from "./staff";
import type { AnnouncementRow } from "../../../db/schema";

const { r, read, write } = staffRouter("manage_announcements");

const body = lazy(() =>
  z.object({
    text: zStr(20_000).optional(),
    starts_at: z.union([zStr(64), z.null()]).optional(),
    ends_at: z.union([zStr(64), z.null()]).optional(),
    all_day: zBool,
    published: zBool,
  }),
);

function time(raw: string | null | undefined, name: string): number | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") return null;
  const t = /^\d{4}-\d{2}-\d{2}/.test(raw.trim()) ? Date.parse(raw.trim()) : Number.NaN;
  if (Number.isNaN(t)) throw unprocessable(`Validation failed: ${name} is not a valid time`);
  return t;
}

async function input(c: Ctx): Promise<AnnouncementInput> {
  const p = await parse(c, body());
  return {
    text: p.text,
    startsAt: time(p.starts_at, "Starts at"),
    endsAt: time(p.ends_at, "Ends at"),
    allDay: p.all_day,
    published: p.published,
  };
}

const render = (c: Ctx, rows: AnnouncementRow[]) => renderAdminAnnouncements(c.get("db"), c.get("config"), rows);

const staff = (c: Ctx) => ({ accountId: me(c).account.id });

r.get("/", read, async (c) => c.json(await render(c, await allAnnouncements(c.get("db")))));
r.get("/:id", read, async (c) => c.json((await render(c, [await getAnnouncement(c.get("db"), pathId(c))]))[0]));
r.post("/", write, async (c) => {
  const row = await createAnnouncement(c.get("db"), c.get("fx"), c.get("config"), staff(c), await input(c));
  return c.json((await render(c, [row]))[0]);
});
r.put("/:id", write, async (c) => {
  const row = await updateAnnouncement(c.get("db"), c.get("fx"), c.get("config"), staff(c), pathId(c), await input(c));
  return c.json((await render(c, [row]))[0]);
});
for (const [path, publish] of [
  ["/:id/publish", true],
  ["/:id/unpublish", false],
] as const) {
  r.post(path, write, async (c) => {
    const row = await publishAnnouncement(c.get("db"), c.get("fx"), c.get("config"), staff(c), pathId(c), publish);
    return c.json((await render(c, [row]))[0]);
  });
}
r.delete("/:id", write, async (c) => {
  await deleteAnnouncement(c.get("db"), c.get("fx"), staff(c), pathId(c));
  return c.json({});
});

export default r;
