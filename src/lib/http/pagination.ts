// Mastodon pagination: max_id (older than), since_id (newer than, newest first), min_id (immediately newer, returned
// newest first), limit clamped to [1, max] (never an error: security A6, A7, A9), and a Link header whose URLs hold
// no raw commas. Cursors are ids (entity ids, or internal row ids for endpoints keyed by something else).
import type { Context } from "hono";
import * as z from "zod";
import { parseId } from "../text/ids";
import { lazy } from "../limits/lazy";
import { parse, zInt } from "./params";

export interface Page {
  maxId?: string;
  sinceId?: string;
  minId?: string;
  limit: number;
}

export function readPage(q: Record<string, unknown>, defaultLimit: number, maxLimit: number): Page {
  const page: Page = { limit: clampLimit(q.limit, defaultLimit, maxLimit) };
  const max = parseId(q.max_id);
  const since = parseId(q.since_id);
  const min = parseId(q.min_id);
  if (max) page.maxId = max;
  if (since) page.sinceId = since;
  if (min) page.minId = min;
  return page;
}

export function clampLimit(raw: unknown, def: number, max: number): number {
  const s = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : "";
  if (!/^-?\d{1,9}$/.test(s)) return def;
  const n = Math.abs(Number(s));
  if (n === 0) return def;
  return Math.min(Math.max(n, 1), max);
}

/**
 * Sets `Link: <next>; rel="next", <prev>; rel="prev"` from the first and last cursor of the page.
 * `next` (older) is given only when the page was full, `prev` (newer) whenever the page is non-empty.
 */
export function setLinkHeader(
  c: Context,
  firstCursor: string | undefined,
  lastCursor: string | undefined,
  full: boolean,
  extra: Record<string, string> = {},
): void {
  if (!firstCursor || !lastCursor) return;
  const url = new URL(c.req.url);
  const base = `${publicOrigin(c)}${url.pathname}`;
  const keep = new URLSearchParams();
  for (const [k, v] of url.searchParams) {
    if (k === "max_id" || k === "min_id" || k === "since_id") continue;
    keep.append(k, v);
  }
  for (const [k, v] of Object.entries(extra)) keep.set(k, v);
  const build = (k: string, v: string) => {
    const p = new URLSearchParams(keep);
    p.set(k, v);
    return `${base}?${p.toString().replace(/,/g, "%2C")}`;
  };
  const links: string[] = [];
  if (full) links.push(`<${build("max_id", lastCursor)}>; rel="next"`);
  links.push(`<${build("min_id", firstCursor)}>; rel="prev"`);
  c.header("Link", links.join(", "));
}

/** The origin clients should use: https in production; the request's own scheme on loopback. */
export function publicOrigin(c: Context): string {
  const u = new URL(c.req.url);
  return `${u.protocol}//${u.host}`;
}

/** A page of an offset-paged list (Mastodon's trends, search): `offset` rows skipped, then at most `limit`. */
export interface OffsetPage {
  offset: number;
  limit: number;
}

const offsetParams = lazy(() => z.object({ offset: zInt, limit: z.unknown().optional() }));

/** `offset` (0 to 10,000) and `limit` (clamped to `max`, `def` when absent) of an offset-paged list. */
export async function readOffsetPage(c: Context, def: number, max: number): Promise<OffsetPage> {
  const p = await parse(c, offsetParams());
  const offset = Math.min(Math.max(0, p.offset ?? 0), 10_000);
  return { offset, limit: clampLimit(p.limit, def, max) };
}

/** `Link` with the next offset when the page was full and the previous one when this is not the first page. */
export function setOffsetLinks(c: Context, page: OffsetPage, count: number): void {
  const url = new URL(c.req.url);
  const build = (offset: number) => {
    const q = new URLSearchParams();
    if (url.searchParams.has("limit")) q.set("limit", String(page.limit));
    q.set("offset", String(offset));
    return `${publicOrigin(c)}${url.pathname}?${q.toString()}`;
  };
  const links: string[] = [];
  if (count === page.limit) links.push(`<${build(page.offset + page.limit)}>; rel="next"`);
  if (page.offset > 0) links.push(`<${build(Math.max(0, page.offset - page.limit))}>; rel="prev"`);
  if (links.length) c.header("Link", links.join(", "));
}
