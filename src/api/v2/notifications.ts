// /api/v2/notifications: grouped notifications (list, one group, its accounts, dismiss, clear, unread_count) and the
// notification policy (GET/PATCH /policy). Mastodon 4.3's Api::V2::NotificationsController and
// Api::V2::Notifications::{Accounts,Policies}Controller.
import { routeGroup } from "../../route-group";
import { lazy } from "../../lib/limits/lazy";
import * as z from "zod";
import type { Ctx } from "../../context";
import { renderGroupedNotifications, type ExpandAccounts } from "../../entities/notifications/notification-group";
import { renderAccount } from "../../entities/accounts/account";
import { renderPolicy } from "../../entities/notifications/notification-policy";
import { badRequest, notFound, validationFailed } from "../../lib/http/errors";
import { clampLimit, readPage, setLinkHeader } from "../../lib/http/pagination";
import { parse, readParams } from "../../lib/http/params";
import { me, requireUser } from "../../oauth/guard";
import {
  findGroup,
  groupAccounts,
  groupedPage,
  groupedTypesParam,
  groupedUnreadCount,
  type GroupedFilter,
} from "../../queries/notifications/notification-groups";
import { clearNotifications } from "../../queries/notifications/notifications";
import { dismissGroup } from "../../services/notifications/notification-groups";
import { POLICY_KEYS, readPolicy, updatePolicy, type PolicyKey } from "../../services/notifications/notification-policy";
import type { PolicyValue } from "../../db/schema";
import { readFilter, typeList } from "../v1/notifications/notifications";

const r = routeGroup();

const groupedSchema = lazy(() => z.object({ grouped_types: typeList(), expand_accounts: z.unknown().optional() }).passthrough());

async function readGroupedFilter(c: Ctx): Promise<{ f: GroupedFilter; expand: ExpandAccounts }> {
  const base = await readFilter(c);
  const q = await parse(c, groupedSchema());
  let expand: ExpandAccounts = "full";
  if (q.expand_accounts !== undefined && q.expand_accounts !== "full") {
    if (q.expand_accounts !== "partial_avatars") {
      const shown = typeof q.expand_accounts === "string" ? q.expand_accounts.slice(0, 40) : "";
      throw badRequest(`Invalid value for 'expand_accounts': '${shown}', allowed values are 'full' and 'partial_avatars'`);
    }
    expand = "partial_avatars";
  }
  return { f: { ...base, groupedTypes: groupedTypesParam(q.grouped_types) }, expand };
}

r.get("/", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const { f, expand } = await readGroupedFilter(c);
  const page = readPage(await readParams(c), 40, 80);
  const db = c.get("db");
  const found = await groupedPage(db, v.account.id, f, page);
  const body = await renderGroupedNotifications(db, c.get("config"), found, v.account.id, expand);
  const rows = found.rows;
  setLinkHeader(c, rows[0]?.n.id, rows[rows.length - 1]?.n.id, rows.length >= page.limit);
  return c.json(body);
});

r.get("/unread_count", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const { f } = await readGroupedFilter(c);
  const limit = clampLimit((await readParams(c)).limit, 100, 1000);
  return c.json({ count: await groupedUnreadCount(c.get("db"), v.account.id, f, limit) });
});

r.post("/clear", requireUser("write:notifications"), async (c) => {
  await clearNotifications(c.get("db"), me(c).account.id);
  return c.json({});
});

// ---- policy ----

const policyValue = lazy(() => z.preprocess((v) => (v === null || v === "" ? undefined : v), z.enum(["accept", "filter", "drop"]).optional()));
const policySchema = lazy(() =>
  z.object(Object.fromEntries(POLICY_KEYS.map((k) => [k, policyValue()])) as Record<PolicyKey, ReturnType<typeof policyValue>>).passthrough(),
);

r.get("/policy", requireUser("read:notifications"), async (c) => {
  return c.json(renderPolicy(await readPolicy(c.get("db"), me(c).account.id)));
});

async function patchPolicy(c: Ctx) {
  const params = await readParams(c);
  const parsed = policySchema().safeParse(params);
  if (!parsed.success) {
    const key = String(parsed.error.issues[0]?.path[0] ?? "policy");
    throw validationFailed(`${key} is not included in the list (accept, filter, drop)`);
  }
  const changes: Partial<Record<PolicyKey, PolicyValue>> = {};
  for (const k of POLICY_KEYS) {
    const v = parsed.data[k];
    if (v) changes[k] = v;
  }
  return c.json(renderPolicy(await updatePolicy(c.get("db"), me(c).account.id, changes)));
}
r.patch("/policy", requireUser("write:notifications"), patchPolicy);
r.put("/policy", requireUser("write:notifications"), patchPolicy);

// ---- one group ----

r.get("/:group_key", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const db = c.get("db");
  const found = await findGroup(db, v.account.id, c.req.param("group_key"));
  if (!found) throw notFound();
  const body = await renderGroupedNotifications(db, c.get("config"), found, v.account.id);
  if (!(body.notification_groups as unknown[]).length) throw notFound();
  return c.json(body);
});

r.post("/:group_key/dismiss", requireUser("write:notifications"), async (c) => {
  await dismissGroup(c.get("db"), me(c).account.id, c.req.param("group_key"));
  return c.json({});
});

r.get("/:group_key/accounts", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const page = readPage(await readParams(c), 40, 80);
  const rows = await groupAccounts(c.get("db"), v.account.id, c.req.param("group_key"), page);
  setLinkHeader(c, rows[0]?.cursor, rows[rows.length - 1]?.cursor, rows.length >= page.limit);
  const cfg = c.get("config");
  return c.json(rows.map((x) => renderAccount(cfg, x.account)));
});

export default r;
