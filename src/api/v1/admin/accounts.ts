// Staff account moderation (Mastodon's /api/v1/admin/accounts): the list with the legacy filter parameters, one
// account, approving and rejecting pending sign-ups, and the moderation actions and their undos. manage_users only.
import * as z from "zod";
import { lazy } from "../../../lib/limits/lazy";
import type { Ctx } from "../../../context";
import { renderAdminAccount } from "../../../entities/admin/admin-account";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, readParams, zBool, zId, zStr, pathId } from "../../../lib/http/params";
import { requireStaff } from "../../../oauth/guard";
import {
  accountAction,
  adminAccountsPage,
  approveAccount,
  enableAccount,
  getAdminAccount,
  rejectAccount,
  unsensitiveAccount,
  unsilenceAccount,
  unsuspendAccount,
  type AdminAccountFilter,
} from "../../../services/admin/accounts";
import { adminDeleteAccount } from "../../../services/accounts/delete-account";
import { moderator, staffRouter } from "./staff";

const { r, read, write } = staffRouter("manage_users", "accounts");

export const ADMIN_ACCOUNTS_LIMIT = 100;
export const ADMIN_ACCOUNTS_MAX = 200;

/** Renders one filtered page with its Link header (shared with /api/v2/admin/accounts). */
export async function adminAccountList(c: Ctx, filter: AdminAccountFilter) {
  const page = readPage(await readParams(c), ADMIN_ACCOUNTS_LIMIT, ADMIN_ACCOUNTS_MAX);
  const rows = await adminAccountsPage(c.get("db"), filter, page);
  setLinkHeader(c, rows[0]?.account.id, rows.at(-1)?.account.id, rows.length === page.limit);
  const cfg = c.get("config");
  return c.json(rows.map((row) => renderAdminAccount(cfg, row)));
}

export const filterText = lazy(() => ({
  username: zStr(500).optional(),
  display_name: zStr(500).optional(),
  by_domain: zStr(500).optional(),
  email: zStr(500).optional(),
  ip: zStr(100).optional(),
}));

const legacyFilters = lazy(() =>
  z
    .object({
      local: zBool,
      remote: zBool,
      active: zBool,
      pending: zBool,
      disabled: zBool,
      silenced: zBool,
      suspended: zBool,
      sensitized: zBool,
      staff: zBool,
      ...filterText(),
    })
    .passthrough(),
);

r.get("/", read, async (c) => {
  const p = await parse(c, legacyFilters());
  // Mastodon's v1 defaults to local, active accounts; the last status flag given (in this order) wins.
  const filter: AdminAccountFilter = { origin: p.remote ? "remote" : "local", status: "active" };
  for (const s of ["active", "pending", "disabled", "silenced", "suspended"] as const) if (p[s]) filter.status = s;
  filter.staff = !!p.staff;
  filter.username = p.username;
  filter.displayName = p.display_name;
  filter.byDomain = p.by_domain;
  filter.email = p.email;
  filter.ip = p.ip;
  return adminAccountList(c, filter);
});

const render = (c: Ctx, row: Parameters<typeof renderAdminAccount>[1]) => c.json(renderAdminAccount(c.get("config"), row));

r.get("/:id", read, async (c) => render(c, await getAdminAccount(c.get("db"), pathId(c))));

r.post("/:id/approve", write, async (c) => render(c, await approveAccount(c.get("db"), moderator(c), pathId(c))));

r.post("/:id/reject", write, async (c) => {
  await rejectAccount(c.get("db"), moderator(c), pathId(c));
  return c.json({});
});

const actionBody = lazy(() =>
  z
    .object({
      type: zStr(50).optional(),
      report_id: zId.optional(),
      warning_preset_id: zId.optional(),
      text: zStr(5000).optional(),
      send_email_notification: zBool,
    })
    .passthrough(),
);

r.post("/:id/action", write, async (c) => {
  const id = pathId(c);
  const p = await parse(c, actionBody());
  let reportId: string | null = null;
  if (p.report_id !== undefined && p.report_id !== "") {
    reportId = parseId(p.report_id);
    if (!reportId) throw notFound();
  }
  await accountAction(c.get("db"), c.get("fx"), moderator(c), id, { type: p.type, reportId, sendEmailNotification: p.send_email_notification });
  return c.json({});
});

// Deletes a suspended account's data (src/services/accounts/delete-account.ts); answers with the account as it was.
r.delete("/:id", requireStaff("delete_user_data", "admin:write:accounts"), async (c) =>
  render(c, await adminDeleteAccount(c.get("db"), c.get("fx"), moderator(c), pathId(c))),
);

r.post("/:id/enable", write, async (c) => render(c, await enableAccount(c.get("db"), moderator(c), pathId(c))));
r.post("/:id/unsilence", write, async (c) => render(c, await unsilenceAccount(c.get("db"), moderator(c), pathId(c))));
r.post("/:id/unsuspend", write, async (c) => render(c, await unsuspendAccount(c.get("db"), c.get("fx"), moderator(c), pathId(c))));
r.post("/:id/unsensitive", write, async (c) => render(c, await unsensitiveAccount(c.get("db"), moderator(c), pathId(c))));

export default r;
