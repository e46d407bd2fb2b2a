// GET /api/v1/bookmarks and GET /api/v1/favourites: the viewer's bookmarked or favourited statuses, newest first;
// Link cursors are the bookmark or favourite row ids. One router shape for both.
import { routeGroup } from "../../../route-group";
import type { DB } from "../../../db/client";
import { renderStatuses } from "../../../entities/statuses/status";
import { type Page, readPage, setLinkHeader } from "../../../lib/http/pagination";
import { readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { bookmarkPage, favouritePage } from "../../../queries/statuses/feeds";

function ownStatusList(scope: string, page: (db: DB, viewerId: string, page: Page) => ReturnType<typeof bookmarkPage>) {
  const r = routeGroup();
  r.get("/", requireUser(scope), async (c) => {
    const v = me(c);
    const p = await page(c.get("db"), v.account.id, readPage(await readParams(c), 20, 40));
    const body = await renderStatuses(c.get("db"), c.get("config"), p.statusIds, v.account.id);
    setLinkHeader(c, p.first, p.last, p.full);
    return c.json(body);
  });
  return r;
}

export const bookmarks = ownStatusList("read:bookmarks", bookmarkPage);
export const favourites = ownStatusList("read:favourites", favouritePage);
