// /api/v1/notifications/requests (list, show, accept, dismiss, bulk accept/dismiss, merged) and the v1 notification
// policy (/api/v1/notifications/policy, booleans). Mounted at /api/v1/notifications before the notifications module,
// whose /:id routes would otherwise take these paths. Mastodon's Api::V1::Notifications::{Requests,Policies}Controller.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import type { Ctx } from "../../../context";
import { renderNotificationRequests } from "../../../entities/notifications/notification-request";
import { renderPolicyV1 } from "../../../entities/notifications/notification-policy";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, pathId, readParams, zBool } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { findRequest, requestPage } from "../../../queries/notifications/notification-requests";
import { readPolicy, updatePolicy, type PolicyKey } from "../../../services/notifications/notification-policy";
import { acceptRequests, dismissRequests } from "../../../services/notifications/notification-requests";
import type { PolicyValue } from "../../../db/schema/index";

const r = routeGroup();

r.get("/requests", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const page = readPage(await readParams(c), 40, 80);
  const db = c.get("db");
  const rows = await requestPage(db, v.account.id, page);
  const body = await renderNotificationRequests(db, c.get("config"), rows, v.account.id);
  setLinkHeader(c, rows[0]?.request.id, rows[rows.length - 1]?.request.id, rows.length >= page.limit);
  return c.json(body);
});

// Accepting lets the sender's notifications through before it answers: nothing is ever left to merge.
r.get("/requests/merged", requireUser("read:notifications"), (c) => c.json({ merged: true }));

/** `id[]` of the bulk routes: ids that cannot exist are ignored; at most 100. */
async function idsParam(c: Ctx): Promise<string[]> {
  const raw = (await readParams(c)).id;
  const list = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? Object.values(raw) : raw === undefined ? [] : [raw];
  return [...new Set(list.map((x) => parseId(x)).filter((x): x is string => !!x))].slice(0, 100);
}

r.post("/requests/accept", requireUser("write:notifications"), async (c) => {
  await acceptRequests(c.get("db"), me(c).account.id, await idsParam(c));
  return c.json({});
});

r.post("/requests/dismiss", requireUser("write:notifications"), async (c) => {
  await dismissRequests(c.get("db"), me(c).account.id, await idsParam(c));
  return c.json({});
});

r.get("/requests/:id", requireUser("read:notifications"), async (c) => {
  const v = me(c);
  const db = c.get("db");
  const row = await findRequest(db, v.account.id, pathId(c));
  if (!row) throw notFound();
  const [out] = await renderNotificationRequests(db, c.get("config"), [row], v.account.id);
  return c.json(out);
});

r.post("/requests/:id/accept", requireUser("write:notifications"), async (c) => {
  if (!(await acceptRequests(c.get("db"), me(c).account.id, [pathId(c)]))) throw notFound();
  return c.json({});
});

r.post("/requests/:id/dismiss", requireUser("write:notifications"), async (c) => {
  if (!(await dismissRequests(c.get("db"), me(c).account.id, [pathId(c)]))) throw notFound();
  return c.json({});
});

// ---- v1 policy ----

const V1_KEYS: [string, PolicyKey][] = [
  ["filter_not_following", "for_not_following"],
  ["filter_not_followers", "for_not_followers"],
  ["filter_new_accounts", "for_new_accounts"],
  ["filter_private_mentions", "for_private_mentions"],
];
const v1Schema = lazy(() => z.object(Object.fromEntries(V1_KEYS.map(([k]) => [k, zBool]))).passthrough());

r.get("/policy", requireUser("read:notifications"), async (c) => {
  return c.json(renderPolicyV1(await readPolicy(c.get("db"), me(c).account.id)));
});

async function patchPolicyV1(c: Ctx) {
  const q = (await parse(c, v1Schema())) as Record<string, boolean | undefined>;
  const changes: Partial<Record<PolicyKey, PolicyValue>> = {};
  for (const [k, key] of V1_KEYS) {
    const b = q[k];
    if (b !== undefined) changes[key] = b ? "filter" : "accept";
  }
  return c.json(renderPolicyV1(await updatePolicy(c.get("db"), me(c).account.id, changes)));
}
r.patch("/policy", requireUser("write:notifications"), patchPolicyV1);
r.put("/policy", requireUser("write:notifications"), patchPolicyV1);

export default r;
