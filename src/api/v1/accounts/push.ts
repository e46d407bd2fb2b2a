// /api/v1/push/subscription: the Web Push subscription of the calling access token (scope `push`). Parameters as
// Mastodon takes them: subscription[endpoint], subscription[keys][p256dh|auth], subscription[standard],
// data[alerts][<type>], data[policy] (also accepted at the top level, where masto.js puts `policy`).
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { badRequest, notFound, validationFailed } from "../../../lib/http/errors";
import { readParams, truthy, type Params } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { createSubscription, deleteSubscription, findSubscription, updateSubscription, type SubscriptionData } from "../../../push/subscriptions";
import { POLICIES, type PushPolicy } from "../../../push/types";
import { ALERT_TYPES, type AlertType } from "../../../entities/settings/push-subscription";

const r = routeGroup();

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function requiredString(v: unknown, name: string, max: number): string {
  if (typeof v !== "string" || v.trim() === "") throw validationFailed(`${name} can't be blank`);
  if (v.length > max) throw validationFailed(`${name} is too long (maximum is ${max} characters)`);
  return v.trim();
}

/** data[alerts] and data[policy]: absent alerts are off, an absent policy is `all` (Mastodon replaces `data`). */
function parseData(p: Params): SubscriptionData {
  const data = isObject(p.data) ? p.data : {};
  const given = isObject(data.alerts) ? data.alerts : {};
  const alerts = {} as Record<AlertType, boolean>;
  for (const t of ALERT_TYPES) alerts[t] = truthy(given[t]) === true;
  const raw = data.policy ?? p.policy;
  if (raw === undefined || raw === null || raw === "") return { alerts, policy: "all" };
  if (typeof raw !== "string" || !POLICIES.includes(raw as PushPolicy)) throw validationFailed("Policy is not included in the list");
  return { alerts, policy: raw as PushPolicy };
}

const create = requireUser("push");
const createHandler = async (c: Ctx) => {
  const p = await readParams(c);
  const s = p.subscription;
  // Mastodon: params.require(:subscription) → 400.
  if (!isObject(s)) throw badRequest("param is missing or the value is empty: subscription");
  const keys = isObject(s.keys) ? s.keys : {};
  const v = me(c);
  const out = await createSubscription(
    c.get("db"),
    c.env,
    c.get("config"),
    { tokenId: v.tokenId, userId: v.user.id, accountId: v.account.id },
    {
      endpoint: requiredString(s.endpoint, "Endpoint", 2048),
      p256dh: requiredString(keys.p256dh, "Key p256dh", 200),
      auth: requiredString(keys.auth, "Key auth", 100),
      standard: truthy(s.standard) === true,
      ...parseData(p),
    },
  );
  return c.json(out);
};

r.post("/subscription", create, createHandler);
// The interface specification spells the create path in the plural; Mastodon's is singular. Both work.
r.post("/subscriptions", create, createHandler);

r.get("/subscription", requireUser("push"), async (c) => {
  const out = await findSubscription(c.get("db"), c.env, me(c).tokenId);
  if (!out) throw notFound();
  return c.json(out);
});

r.put("/subscription", requireUser("push"), async (c) => {
  const data = parseData(await readParams(c));
  const out = await updateSubscription(c.get("db"), c.env, me(c).tokenId, data);
  if (!out) throw notFound();
  return c.json(out);
});

r.delete("/subscription", requireUser("push"), async (c) => {
  await deleteSubscription(c.get("db"), me(c).tokenId);
  return c.json({});
});

export default r;
