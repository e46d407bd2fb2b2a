// Legacy instance document and the small public documents under /api/v1/instance.
import { Hono } from "hono";
import type { AppEnv } from "../../context";
import { renderDomainBlock, renderInstanceV1, renderLanguages, renderPolicyText, renderRule, renderTerms } from "../../entities/instance";
import { notFound } from "../../lib/errors";
import { viewerAccountId } from "../../oauth/guard";
import { listPeers, loadInstanceV1, loadRules, loadSettings, publicDomainBlocks, SETTING, weeklyActivity } from "../../services/instance";

const r = new Hono<AppEnv>();

const publicCache = "public, max-age=180";

r.get("/", async (c) => {
  const data = await loadInstanceV1(c.get("db"));
  c.header("Cache-Control", publicCache);
  return c.json(renderInstanceV1(c.get("config"), data));
});

// Both can be switched off; Mastodon then answers 404.
r.get("/peers", async (c) => {
  if (!c.get("config").showPeers) throw notFound();
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(await listPeers(c.get("db")));
});

r.get("/activity", async (c) => {
  if (!c.get("config").showActivity) throw notFound();
  const weeks = await weeklyActivity(c.get("db"));
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(
    weeks.map((w) => ({
      week: String(Math.floor(w.week / 1000)),
      statuses: String(w.statuses),
      logins: String(w.logins),
      registrations: String(w.registrations),
    })),
  );
});

r.get("/rules", async (c) => c.json((await loadRules(c.get("db"))).map(renderRule)));

r.get("/extended_description", async (c) => {
  const s = await loadSettings(c.get("db"));
  return c.json(renderPolicyText(s, SETTING.extendedDescription, null));
});

r.get("/privacy_policy", async (c) => {
  const s = await loadSettings(c.get("db"));
  return c.json(renderPolicyText(s, SETTING.privacyPolicy, c.get("config")));
});

r.get("/terms_of_service", async (c) => {
  const terms = renderTerms(await loadSettings(c.get("db")));
  if (!terms) throw notFound();
  return c.json(terms);
});

r.get("/languages", (c) => {
  c.header("Cache-Control", "public, max-age=86400");
  return c.json(renderLanguages());
});

r.get("/translation_languages", (c) => c.json({}));

r.get("/domain_blocks", async (c) => {
  const db = c.get("db");
  const s = await loadSettings(db);
  const mode = s[SETTING.showDomainBlocks] ?? "all";
  if (mode === "disabled" || (mode === "users" && !viewerAccountId(c))) throw notFound();
  const rows = await publicDomainBlocks(db);
  return c.json(await Promise.all(rows.map(renderDomainBlock)));
});

export default r;
