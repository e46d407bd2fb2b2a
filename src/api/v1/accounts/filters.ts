// /api/v1/filters, the legacy API (deprecated by Mastodon 4.0): each V1::Filter is one keyword of a filter, shown
// with its filter's context, expiry and action (`irreversible` = hide). Mounted at /api/v1/filters.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv, Ctx } from "../../../context";
import { renderV1Filter } from "../../../entities/statuses/filter";
import { parse, zArray, zBool, zStr, pathId } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { createV1Filter, deleteV1Filter, getV1Filter, listV1Filters, updateV1Filter, type V1Input } from "../../../services/accounts/filters";
import { zExpiresIn } from "../../v2/filters";

const r = routeGroup();

// Mastodon's deprecate_api '2022-11-14'.
r.use(
  "*",
  createMiddleware<AppEnv>(async (c, next) => {
    await next();
    c.header("Deprecation", "@1668384000");
  }),
);

const read = requireUser("read:filters");
const write = requireUser("write:filters");

const body = lazy(() =>
  z.object({
    phrase: zStr(100_000).optional(),
    context: zArray(zStr(100), 20),
    irreversible: zBool,
    whole_word: zBool,
    expires_in: zExpiresIn(),
  }),
);

async function input(c: Ctx): Promise<V1Input> {
  const p = await parse(c, body());
  return { phrase: p.phrase, context: p.context, irreversible: p.irreversible, wholeWord: p.whole_word, expiresIn: p.expires_in };
}

r.get("/", read, async (c) => c.json((await listV1Filters(c.get("db"), me(c).account.id)).map((x) => renderV1Filter(x.keyword, x.filter))));

r.post("/", write, async (c) => {
  const x = await createV1Filter(c.get("db"), c.get("fx"), me(c).account.id, await input(c));
  return c.json(renderV1Filter(x.keyword, x.filter));
});

r.get("/:id", read, async (c) => {
  const x = await getV1Filter(c.get("db"), me(c).account.id, pathId(c));
  return c.json(renderV1Filter(x.keyword, x.filter));
});

r.on(["PUT", "PATCH"], "/:id", write, async (c) => {
  const id = pathId(c);
  const x = await updateV1Filter(c.get("db"), c.get("fx"), me(c).account.id, id, await input(c));
  return c.json(renderV1Filter(x.keyword, x.filter));
});

r.delete("/:id", write, async (c) => {
  await deleteV1Filter(c.get("db"), c.get("fx"), me(c).account.id, pathId(c));
  return c.json({});
});

export default r;
