// Quote posts on /api/v1/statuses (Mastodon 4.5): the quotes of a status, revoking one, and a status's quote policy.
// Mounted by ./statuses.ts.
import type { RouteGroup } from "../../../route-group";
import * as z from "zod";
import { renderStatuses } from "../../../entities/statuses/status";
import { parseId } from "../../../lib/text/ids";
import { notFound } from "../../../lib/http/errors";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, pathId } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { listQuotes } from "../../../queries/statuses/quotes";
import { revokeQuote, setQuotePolicy } from "../../../services/statuses/quotes";

export function quoteRoutes(r: RouteGroup) {
  r.get("/:id/quotes", requireUser("read:statuses"), async (c) => {
    const page = readPage(c.req.query(), 20, 40);
    const viewerId = me(c).account.id;
    const res = await listQuotes(c.get("db"), pathId(c), viewerId, page);
    setLinkHeader(c, res.firstCursor, res.lastCursor, res.full);
    return c.json(await renderStatuses(c.get("db"), c.get("config"), res.statusIds, viewerId));
  });

  r.post("/:id/quotes/:quoting_status_id/revoke", requireUser("write:statuses"), async (c) => {
    const quotingId = parseId(c.req.param("quoting_status_id"));
    if (!quotingId) throw notFound();
    return c.json(await revokeQuote(c.get("db"), c.get("fx"), c.get("config"), pathId(c), quotingId, me(c).account.id));
  });

  r.put("/:id/interaction_policy", requireUser("write:statuses"), async (c) => {
    const { quote_approval_policy } = await parse(c, z.object({ quote_approval_policy: z.enum(["public", "followers", "nobody"]) }));
    return c.json(await setQuotePolicy(c.get("db"), c.get("fx"), c.get("config"), pathId(c), me(c).account.id, quote_approval_policy));
  });
}
