import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import type { Ctx } from "../../../context";
import { renderAccount } from "../../../entities/accounts/account";
import { renderList } from "../../../entities/accounts/list";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, readParams, zArray, zBool, zId, zStr, pathId } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import {
  addListAccounts,
  createList,
  deleteList,
  listMembers,
  listsOf,
  ownList,
  removeListAccounts,
  REPLIES_POLICIES,
  updateList,
} from "../../../services/relationships/lists";

const r = routeGroup();

const read = requireUser("read:lists");
const write = requireUser("write:lists");

// Titles are checked for length in the service (422 with Mastodon's message); this cap only bounds parsing.
const listBody = lazy(() =>
  z.object({
    title: zStr(200_000).optional(),
    replies_policy: z.enum(REPLIES_POLICIES).optional(),
    exclusive: zBool,
  }),
);

const accountIdsBody = lazy(() => z.object({ account_ids: zArray(zId, 1000) }));

const listId = (c: Ctx): string => pathId(c);

r.get("/", read, async (c) => c.json((await listsOf(c.get("db"), me(c).account.id)).map(renderList)));

r.post("/", write, async (c) => {
  const p = await parse(c, listBody());
  const row = await createList(c.get("db"), me(c).account.id, { title: p.title, repliesPolicy: p.replies_policy, exclusive: p.exclusive });
  return c.json(renderList(row));
});

r.get("/:id", read, async (c) => c.json(renderList(await ownList(c.get("db"), me(c).account.id, listId(c)))));

r.put("/:id", write, async (c) => {
  const id = listId(c);
  const p = await parse(c, listBody());
  const row = await updateList(c.get("db"), me(c).account.id, id, { title: p.title, repliesPolicy: p.replies_policy, exclusive: p.exclusive });
  return c.json(renderList(row));
});

r.delete("/:id", write, async (c) => {
  await deleteList(c.get("db"), me(c).account.id, listId(c));
  return c.json({});
});

r.get("/:id/accounts", read, async (c) => {
  const id = listId(c);
  const q = await readParams(c);
  // limit=0 returns every member (Mastodon: no mandatory pagination for list accounts).
  const all = typeof q.limit === "string" && q.limit.trim() === "0";
  const page = all ? null : readPage(q, 40, 80);
  const rows = await listMembers(c.get("db"), me(c).account.id, id, page);
  if (page) setLinkHeader(c, rows[0]?.cursor, rows[rows.length - 1]?.cursor, rows.length === page.limit);
  const cfg = c.get("config");
  return c.json(rows.map((m) => renderAccount(cfg, m.account)));
});

r.post("/:id/accounts", write, async (c) => {
  const id = listId(c);
  const p = await parse(c, accountIdsBody());
  await addListAccounts(c.get("db"), c.get("fx"), me(c).account.id, id, validIds(p.account_ids));
  return c.json({});
});

r.delete("/:id/accounts", write, async (c) => {
  const id = listId(c);
  const p = await parse(c, accountIdsBody());
  await removeListAccounts(c.get("db"), me(c).account.id, id, validIds(p.account_ids));
  return c.json({});
});

/** Ids that cannot name any account are a 404 like an unknown one. */
function validIds(raw: string[] | undefined): string[] {
  return (raw ?? []).map((x) => {
    const id = parseId(x);
    if (!id) throw notFound();
    return id;
  });
}

export default r;
