// GET /api/v2/search: accounts, statuses and hashtags matching a query, resolving a handle or URL when asked.
import { routeGroup } from "../../route-group";
import { lazy } from "../../lib/limits/lazy";
import * as z from "zod";
import { renderSearch } from "../../entities/instance/search";
import { renderStatuses } from "../../entities/statuses/status";
import { ApiError, badRequest, unauthorized, wrongScope } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import { clampLimit } from "../../lib/http/pagination";
import { parse, zBool, zInt } from "../../lib/http/params";
import { viewerAccountId } from "../../oauth/guard";
import { scopeAllows } from "../../oauth/scopes";
import { searchAccounts, searchStatusIds, type SearchOptions } from "../../queries/statuses/search";
import { searchTags, validTagName } from "../../services/tags/tags-follow";
import { resolveForSearch } from "../../federation/remote/resolve";
import { viewerFeatureDecisions } from "../../services/relationships/feature-approval";

const r = routeGroup();

const MAX_Q = 1000;

const params = lazy(() =>
  z.object({
    q: z.preprocess((v) => (typeof v === "number" ? String(v) : v), z.string()).optional(),
    type: z.string().max(20).optional(),
    resolve: zBool,
    following: zBool,
    account_id: z.string().max(25).optional(),
    min_id: z.string().max(25).optional(),
    max_id: z.string().max(25).optional(),
    limit: z.unknown().optional(),
    offset: zInt,
    exclude_unreviewed: zBool,
  }),
);

r.get("/", async (c) => {
  // Public, but a token that is present must be valid and carry read:search (Mastodon's authorize_if_got_token!).
  if (c.get("invalidToken")) throw unauthorized();
  const v = c.get("viewer");
  if (v && !scopeAllows(v.scopes, "read:search")) throw wrongScope();
  const p = await parse(c, params());
  const q = (p.q ?? "").slice(0, MAX_Q).trim();
  if (!q) throw badRequest("param is missing or the value is empty: q");
  const viewerId = viewerAccountId(c);
  const offset = Math.max(0, p.offset ?? 0);
  if (!viewerId && offset > 0) throw new ApiError(401, "Search queries pagination is not supported without authentication");
  // resolve=true fetches remote accounts and statuses only for a signed-in user (D9); signed out, only local data is searched.
  const type = p.type ?? "";
  const all = type === "";
  const opts: SearchOptions = {
    viewerId,
    limit: clampLimit(p.limit, 20, 40),
    offset,
    following: !!p.following,
    accountId: p.account_id ? (parseId(p.account_id) ?? "0") : null,
    minId: p.min_id ? parseId(p.min_id) : null,
    maxId: p.max_id ? parseId(p.max_id) : null,
  };
  const db = c.get("db");
  const cfg = c.get("config");
  const found = p.resolve && viewerId && offset === 0 ? await resolveForSearch(db, c.get("fx"), cfg, q, type) : null;
  // A resolved account is searched for by its acct, so blocks, mutes and domain blocks still apply.
  const accountQ = found?.account ? `${found.account.username}@${found.account.domain}` : q;
  const tagName = !q.includes("@") && !/^https?:\/\//i.test(q) ? validTagName(q.replace(/^#/, "")) : null;
  // Mastodon's full_text_searchable?: a lone `#tag` or handle is a hashtag or account search, unless statuses are asked for.
  const searchStatuses = type === "statuses" || (all && !/^(#\S+|@?[A-Za-z0-9_]+@[A-Za-z0-9.:-]+|@[A-Za-z0-9_]+)$/.test(q));
  const [accountRows, statusIds, tagRows] = await Promise.all([
    all || type === "accounts" ? searchAccounts(db, cfg, accountQ, opts) : [],
    searchStatuses ? searchStatusIds(db, cfg, q, opts) : [],
    (all || type === "hashtags") && tagName ? searchTags(db, tagName, opts.limit, offset) : [],
  ]);
  const ids: string[] = found?.statusId && !(statusIds as string[]).includes(found.statusId) ? [found.statusId, ...statusIds] : statusIds;
  // Search results are shown in the public filter context (Mastodon's web app maps its "search" column there).
  const statuses = ids.length ? await renderStatuses(db, cfg, ids, viewerId, "public") : [];
  return c.json(renderSearch(cfg, accountRows, statuses, tagRows, await viewerFeatureDecisions(db, viewerId, accountRows)));
});

export default r;
