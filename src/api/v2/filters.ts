// /api/v2/filters: filters with keywords (keywords_attributes creates, edits and destroys them in the same call) and
// status filters; /api/v2/filters/:id/keywords, /keywords/:id, /:id/statuses, /statuses/:id. Mounted at
// /api/v2/filters. Another user's filter, keyword or status filter is a 404.
import { routeGroup } from "../../route-group";
import { lazy } from "../../lib/limits/lazy";
import * as z from "zod";
import type { Ctx } from "../../context";
import { renderFilter, renderFilterKeyword, renderFilterStatus } from "../../entities/statuses/filter";
import { parseId } from "../../lib/text/ids";
import { parse, parseWith, readParams, zArray, zBool, zId, zStr, pathId } from "../../lib/http/params";
import { me, requireUser } from "../../oauth/guard";
import {
  addFilterStatus,
  addKeyword,
  createFilter,
  deleteFilter,
  deleteFilterStatus,
  deleteKeyword,
  getFilter,
  getFilterStatus,
  getKeyword,
  listFilters,
  listFilterStatuses,
  listKeywords,
  updateFilter,
  updateKeyword,
  type FilterInput,
} from "../../services/accounts/filters";

const r = routeGroup();

const read = requireUser("read:filters");
const write = requireUser("write:filters");

// Parsing caps only; the services answer over-long titles and keywords with Mastodon's messages.
const MAX_TEXT = 100_000;

/** `expires_in`: seconds as a number or digits; empty or null means "never expires". */
export const zExpiresIn = lazy(() =>
  z.preprocess((v) => {
    if (v === undefined) return undefined;
    if (v === null || v === "") return null;
    if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : v;
    if (typeof v === "string" && /^-?\d{1,15}$/.test(v.trim())) return Number(v.trim());
    return v;
  }, z.number().int().nullable().optional()),
);

const keywordAttr = lazy(() =>
  z.object({
    id: zId.optional(),
    keyword: zStr(MAX_TEXT).optional(),
    whole_word: zBool,
    _destroy: zBool,
  }),
);

/**
 * `keywords_attributes[][keyword]=a&keywords_attributes[][whole_word]=1&keywords_attributes[][keyword]=b` arrives
 * from the parameter parser as one object per pair; Rack groups them, starting a new item when the key repeats.
 */
function rackGroups(items: unknown[]): unknown[] {
  const out: Record<string, unknown>[] = [];
  for (const item of items) {
    if (!item || typeof item !== "object" || Array.isArray(item)) return items;
    const [key, ...more] = Object.keys(item);
    const last = out[out.length - 1];
    if (last && key !== undefined && !more.length && !(key in last)) Object.assign(last, item);
    else out.push({ ...(item as Record<string, unknown>) });
  }
  return out;
}

const filterBody = lazy(() =>
  z.object({
    title: zStr(MAX_TEXT).optional(),
    context: zArray(zStr(100), 20),
    filter_action: zStr(100).optional(),
    expires_in: zExpiresIn(),
    keywords_attributes: zArray(keywordAttr(), 200),
  }),
);

async function filterInput(c: Ctx): Promise<FilterInput> {
  const raw = await readParams(c);
  // JSON arrays are taken as sent; bracket pairs (form, multipart, or the query string as in Mastodon's docs) are grouped.
  const json = (c.req.header("content-type") ?? "").toLowerCase().includes("json");
  const inQuery = [...new URL(c.req.url).searchParams.keys()].some((k) => k.startsWith("keywords_attributes"));
  const params = (!json || inQuery) && Array.isArray(raw.keywords_attributes) ? { ...raw, keywords_attributes: rackGroups(raw.keywords_attributes) } : raw;
  const p = parseWith(filterBody(), params);
  return {
    title: p.title,
    context: p.context,
    action: p.filter_action,
    expiresIn: p.expires_in,
    keywords: p.keywords_attributes?.map((k) => ({ id: k.id, keyword: k.keyword, wholeWord: k.whole_word, destroy: k._destroy })),
  };
}

const keywordBody = lazy(() => z.object({ keyword: zStr(MAX_TEXT).optional(), whole_word: zBool }));
const statusBody = lazy(() => z.object({ status_id: zId.optional() }));

// Keyword and status-filter routes first: their fixed first segment must not be read as a filter id. Rails'
// resources answer PATCH like PUT.
r.get("/keywords/:id", read, async (c) => c.json(renderFilterKeyword(await getKeyword(c.get("db"), me(c).account.id, pathId(c)))));

r.on(["PUT", "PATCH"], "/keywords/:id", write, async (c) => {
  const id = pathId(c);
  const p = await parse(c, keywordBody());
  const row = await updateKeyword(c.get("db"), c.get("fx"), me(c).account.id, id, { keyword: p.keyword, wholeWord: p.whole_word });
  return c.json(renderFilterKeyword(row));
});

r.delete("/keywords/:id", write, async (c) => {
  await deleteKeyword(c.get("db"), c.get("fx"), me(c).account.id, pathId(c));
  return c.json({});
});

r.get("/statuses/:id", read, async (c) => c.json(renderFilterStatus(await getFilterStatus(c.get("db"), me(c).account.id, pathId(c)))));

r.delete("/statuses/:id", write, async (c) => {
  await deleteFilterStatus(c.get("db"), c.get("fx"), me(c).account.id, pathId(c));
  return c.json({});
});

r.get("/", read, async (c) => c.json((await listFilters(c.get("db"), me(c).account.id)).map(renderFilter)));

r.post("/", write, async (c) => {
  const input = await filterInput(c);
  return c.json(renderFilter(await createFilter(c.get("db"), c.get("fx"), me(c).account.id, input)));
});

r.get("/:id", read, async (c) => c.json(renderFilter(await getFilter(c.get("db"), me(c).account.id, pathId(c)))));

r.on(["PUT", "PATCH"], "/:id", write, async (c) => {
  const id = pathId(c);
  const input = await filterInput(c);
  return c.json(renderFilter(await updateFilter(c.get("db"), c.get("fx"), me(c).account.id, id, input)));
});

r.delete("/:id", write, async (c) => {
  await deleteFilter(c.get("db"), c.get("fx"), me(c).account.id, pathId(c));
  return c.json({});
});

r.get("/:id/keywords", read, async (c) => c.json((await listKeywords(c.get("db"), me(c).account.id, pathId(c))).map(renderFilterKeyword)));

r.post("/:id/keywords", write, async (c) => {
  const id = pathId(c);
  const p = await parse(c, keywordBody());
  const row = await addKeyword(c.get("db"), c.get("fx"), me(c).account.id, id, { keyword: p.keyword, wholeWord: p.whole_word });
  return c.json(renderFilterKeyword(row));
});

r.get("/:id/statuses", read, async (c) => c.json((await listFilterStatuses(c.get("db"), me(c).account.id, pathId(c))).map(renderFilterStatus)));

r.post("/:id/statuses", write, async (c) => {
  const id = pathId(c);
  const p = await parse(c, statusBody());
  const row = await addFilterStatus(c.get("db"), c.get("fx"), me(c).account.id, id, parseId(p.status_id));
  return c.json(renderFilterStatus(row));
});

export default r;
