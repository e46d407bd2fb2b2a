// What every outbound builder shares (src/federation/outbound/outbound.ts, quote-outbound.ts, relays.ts): the run's context,
// accounts by id, which side an account is on, and sending an activity to inboxes through the delivery queue (suspended
// domains left out).
import { inArray } from "drizzle-orm";
import type { DB } from "../../db/client";
import { idList } from "../../db/client";
import { type AccountRow, accounts, type RenderAccountRow } from "../../db/schema/index";
import type { Config, Env } from "../../env";
import { deliverActivity } from "./delivery";
import { personalInbox } from "./recipients";
import { accountRows } from "../../db/table-rows";

type Obj = Record<string, unknown>;

export interface Run {
  db: DB;
  env: Env;
  cfg: Config;
}

export async function accountsById(db: DB, ids: string[]): Promise<Map<string, AccountRow>> {
  const rows = ids.length ? await accountRows(db, { where: inArray(accounts.id, idList(ids)) }) : [];
  return new Map(rows.map((r) => [r.id, r]));
}

export const isLocal = <A extends RenderAccountRow>(a: A | undefined): a is A => !!a && !a.domain;
export const isRemote = <A extends RenderAccountRow>(a: A | undefined): a is A => !!a && !!a.domain && !a.suspendedAt;

export async function send(r: Run, signerId: string, activity: Obj, inboxes: Iterable<string>): Promise<number> {
  return deliverActivity(r.env, r.db, r.cfg, signerId, activity, inboxes);
}

/** Sends `activity` from `local` to one remote account's own inbox. */
export async function toAccount<L extends RenderAccountRow, T extends RenderAccountRow>(
  r: Run,
  local: L | undefined,
  remote: T | undefined,
  build: (l: L, t: T) => Obj,
) {
  if (!isLocal(local) || !isRemote(remote)) return;
  const inbox = personalInbox(remote);
  if (inbox) await send(r, local.id, build(local, remote), [inbox]);
}
