// Legacy instance document and the small public documents under /api/v1/instance.
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { renderDomainBlock, renderInstanceV1, renderLanguages, renderPolicyText, renderRule, renderTerms } from "../../../entities/instance/instance";
import { renderInstanceActivity } from "../../../entities/instance/instance-activity";
import { notFound } from "../../../lib/http/errors";
import { viewerAccountId } from "../../../oauth/guard";
import { type CachedInstance, instanceCache } from "../../../services/instance/instance-cache";
import { instanceV1Data, listPeers, SETTING, weeklyActivity } from "../../../services/instance/instance";

const r = routeGroup();

const publicCache = "public, max-age=180";

// The documents made only of settings, rules, counts and domain blocks come from the isolate's memory
// (src/services/instance/instance-cache.ts); peers and activity grow with the database and are read when asked (an hour of
// Cache-Control each).
const cached = async (c: Ctx, key: string, render: Parameters<CachedInstance["document"]>[1], cacheControl?: string, from?: CachedInstance) => {
  const cache = from ?? (await instanceCache(c.get("db"), c.env));
  const body = await cache.document(`${key} ${c.get("config").origin}`, render);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (cacheControl) headers["cache-control"] = cacheControl;
  return c.body(body, 200, headers);
};

r.get("/", (c) => cached(c, "v1", (s) => renderInstanceV1(c.get("config"), instanceV1Data(s)), publicCache));

// Both can be switched off, and neither is shown in limited federation mode (who this server knows is the operator's
// business there); Mastodon then answers 404.
r.get("/peers", async (c) => {
  if (!c.get("config").showPeers || c.get("config").limitedFederation) throw notFound();
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(await listPeers(c.get("db")));
});

r.get("/activity", async (c) => {
  if (!c.get("config").showActivity || c.get("config").limitedFederation) throw notFound();
  const weeks = await weeklyActivity(c.get("db"));
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(weeks.map(renderInstanceActivity));
});

r.get("/rules", (c) => cached(c, "rules", (s) => s.parts.rules.map(renderRule)));

r.get("/extended_description", (c) => cached(c, "extended_description", (s) => renderPolicyText(s.parts.settings, SETTING.extendedDescription, null)));

r.get("/privacy_policy", (c) => cached(c, "privacy_policy", (s) => renderPolicyText(s.parts.settings, SETTING.privacyPolicy, c.get("config"))));

r.get("/terms_of_service", async (c) => {
  const cache = await instanceCache(c.get("db"), c.env);
  if (!renderTerms(cache.snapshot.parts.settings)) throw notFound();
  return cached(c, "terms_of_service", (s) => renderTerms(s.parts.settings), undefined, cache);
});

/** Mastodon 4.4: the terms in force from a date. Tern keeps one version: answered when the date is its effective date. */
r.get("/terms_of_service/:date", async (c) => {
  const cache = await instanceCache(c.get("db"), c.env);
  const terms = renderTerms(cache.snapshot.parts.settings);
  if (!terms || terms.effective_date !== c.req.param("date")) throw notFound();
  return c.json(terms);
});

r.get("/languages", (c) => {
  c.header("Cache-Control", "public, max-age=86400");
  return c.json(renderLanguages());
});

r.get("/translation_languages", (c) => c.json({}));

r.get("/domain_blocks", async (c) => {
  const cache = await instanceCache(c.get("db"), c.env);
  const mode = cache.snapshot.parts.settings[SETTING.showDomainBlocks] ?? "all";
  if (mode === "disabled" || (mode === "users" && !viewerAccountId(c))) throw notFound();
  return cached(c, "domain_blocks", (s) => Promise.all(s.parts.domainBlocks.map(renderDomainBlock)), undefined, cache);
});

export default r;
