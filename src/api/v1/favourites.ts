// GET /api/v1/favourites: the viewer's favourited statuses, newest favourite first; Link cursors are favourite row ids.
import { Hono } from "hono";
import type { AppEnv } from "../../context";
import { renderStatuses } from "../../entities/status";
import { readPage, setLinkHeader } from "../../lib/pagination";
import { readParams } from "../../lib/params";
import { me, requireUser } from "../../oauth/guard";
import { favouritePage } from "../../queries/feeds";

const r = new Hono<AppEnv>();

r.get("/", requireUser("read:favourites"), async (c) => {
  const v = me(c);
  const p = await favouritePage(c.get("db"), v.account.id, readPage(await readParams(c), 20, 40));
  const body = await renderStatuses(c.get("db"), c.get("config"), p.statusIds, v.account.id);
  setLinkHeader(c, p.first, p.last, p.full);
  return c.json(body);
});

export default r;
