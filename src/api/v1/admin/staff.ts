// Shared by the admin block routes: the acting staff member, and one listing page (Mastodon's admin lists: newest
// first, limit 100 by default and at most 200, Link headers with max_id / min_id).
import type { Ctx } from "../../../context";
import { readPage, setLinkHeader, type Page } from "../../../lib/pagination";
import { readParams } from "../../../lib/params";
import { me } from "../../../oauth/guard";
import type { Staff } from "../../../services/admin-log";

export const staff = (c: Ctx): Staff => ({ accountId: me(c).account.id });

export async function adminPage<T extends { id: string }>(c: Ctx, load: (page: Page) => Promise<T[]>): Promise<T[]> {
  const page = readPage(await readParams(c), 100, 200);
  const rows = await load(page);
  setLinkHeader(c, rows[0]?.id, rows.at(-1)?.id, rows.length === page.limit);
  return rows;
}
