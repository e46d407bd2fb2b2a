// /api/v1/polls: a poll of a visible status, and voting in it.
import { routeGroup } from "../../../route-group";
import * as z from "zod";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { parse, zArray, zInt } from "../../../lib/http/params";
import { me, requireUser, viewerAccountId } from "../../../oauth/guard";
import { showPoll, votePoll } from "../../../services/statuses/polls";
import { scopeIfToken } from "./statuses";

const r = routeGroup();

const pollId = (raw: string | undefined): string => {
  const id = parseId(raw);
  if (!id) throw notFound();
  return id;
};

r.get("/:id", scopeIfToken("read:statuses"), async (c) => {
  return c.json(await showPoll(c.get("db"), pollId(c.req.param("id")), viewerAccountId(c)));
});

r.post("/:id/votes", requireUser("write:statuses"), async (c) => {
  const id = pollId(c.req.param("id"));
  const { choices } = await parse(c, z.object({ choices: zArray(zInt.pipe(z.number().int()), 10) }));
  return c.json(await votePoll(c.get("db"), c.get("fx"), id, me(c).account.id, choices ?? []));
});

export default r;
