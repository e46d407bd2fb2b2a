import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { historyDays, renderTag } from "../../../entities/instance/tag";
import { notFound } from "../../../lib/http/errors";
import { rateLimited } from "../../../http/rate-limit";
import { me, requireUser, viewerAccountId } from "../../../oauth/guard";
import { featureTag, unfeatureTag } from "../../../services/accounts/featured-tags";
import { followTag, unfollowTag, validTagName, viewTag, type TagView } from "../../../services/tags/tags-follow";

const r = routeGroup();

/** The path's tag name: raw (as typed) and normalised; an impossible hashtag is a 404 like Mastodon's. */
function tagParam(c: Ctx): { raw: string; name: string } {
  const raw = c.req.param("name") ?? "";
  const name = validTagName(raw);
  if (!name) throw notFound();
  return { raw: raw.replace(/^#/, ""), name };
}

const render = (c: Ctx, v: TagView, signedIn: boolean) =>
  renderTag(c.get("config"), v.tag, v.history, signedIn ? { following: v.following, featuring: v.featuring } : undefined);

r.get("/:name", async (c) => {
  const { raw, name } = tagParam(c);
  const viewer = viewerAccountId(c);
  const v = await viewTag(c.get("db"), name, viewer);
  // A tag nobody used yet still answers (Mastodon renders an unsaved tag with an empty id).
  if (!v)
    return c.json(
      renderTag(c.get("config"), { id: "", name, displayName: raw }, historyDays(undefined), viewer ? { following: false, featuring: false } : undefined),
    );
  return c.json(render(c, v, !!viewer));
});

const follows = requireUser("write:follows");

r.post("/:name/follow", follows, rateLimited("follows"), async (c) => {
  const { raw, name } = tagParam(c);
  return c.json(render(c, await followTag(c.get("db"), me(c).account.id, raw, name), true));
});

r.post("/:name/unfollow", follows, async (c) => {
  const { raw, name } = tagParam(c);
  return c.json(render(c, await unfollowTag(c.get("db"), me(c).account.id, raw, name), true));
});

const accounts = requireUser("write:accounts");

r.post("/:name/feature", accounts, async (c) => {
  const { raw, name } = tagParam(c);
  const db = c.get("db");
  const id = me(c).account.id;
  await featureTag(db, id, raw, name, true);
  return c.json(render(c, (await viewTag(db, name, id))!, true));
});

r.post("/:name/unfeature", accounts, async (c) => {
  const { name } = tagParam(c);
  const db = c.get("db");
  const id = me(c).account.id;
  await unfeatureTag(db, id, name);
  const v = await viewTag(db, name, id);
  if (!v) throw notFound();
  return c.json(render(c, v, true));
});

export default r;
