// Mastodon-compatible rate limits (fixed windows) counted in the RateLimiter Durable Object (src/lib/limits/rate-limiter-do.ts).
//
// Three kinds, all answering 429 `{"error":"Too many requests"}` with X-RateLimit-Limit/Remaining/Reset and
// Retry-After past the limit:
// - single rules keyed by (rule, key), applied by the handlers that own the action: sign-in, password grant, sign-up,
//   media uploads (`enforceRateLimit`), inbox hosts (`enforceRateLimitCountedHere`: a host's first POSTs of a window
//   in an isolate are counted there only, so the usual trickle makes no object call);
// - the general budgets of rack-attack, counted by the app middleware for every /api request (per account and per
//   token when signed in, per IP otherwise) and for every paging request (`startRateLimits`);
// - the per-account action families (statuses, favourites, follows, reports, deletes), declared by the route that
//   owns the action with `rateLimited(family)`. The middleware sees the declaration among the matched routes and
//   counts the family in the same Durable Object call as the general budget; the declared middleware then refuses.
// No rule or family is picked by matching request paths, so path variants such as `/auth/sign_in.json` or
// `/API/v1/...` cannot land in another bucket (B13); the general budget covers every path under /api, as
// rack-attack's `api_request?` does.
//
// Cost: one Durable Object call per request at most (the subject's object counts every budget of the request at
// once). It starts while the bearer token is looked up in D1 when the token's account is already known to this
// isolate (a small token-hash → account map); a token's first request in an isolate counts after the lookup.
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import type { AppEnv, Ctx } from "../context";
import type { Env } from "../env";
import { sha256Hex } from "../lib/security/crypto";
import { tooManyRequests } from "../lib/http/errors";
import type { CounterHit, CounterSpec, RateLimiter } from "../lib/limits/rate-limiter-do";
import { setAtMost } from "../lib/limits/bounded-map";
import { requestSlot } from "../lib/http/request-slot";

export interface RateRule {
  /** e.g. "login_ip", "login_email", "sign_up_ip", "media_upload" */
  name: string;
  key: string;
  limit: number;
  periodSeconds: number;
}

export interface Budget {
  limit: number;
  periodSeconds: number;
}

/**
 * Mastodon's figures. General budgets: `config/initializers/rack_attack.rb` (throttle_authenticated_api 1,500 / 5 min
 * per user, throttle_per_token_api 300 / 5 min per token, throttle_unauthenticated_api 300 / 5 min per IP (IPv6 /64),
 * throttle_authenticated_paging and throttle_unauthenticated_paging 300 / 15 min, throttle_api_media 30 / 30 min,
 * throttle_api_delete 30 / 30 min for DELETE /api/v1/statuses/:id and POST /api/v1/statuses/:id/unreblog).
 * Families: `app/lib/rate_limiter.rb` FAMILIES (statuses 300 / 3 h, follows 400 / 24 h, reports 400 / 24 h), used by
 * the models that `include RateLimitable`: Status and StatusEdit (`family: :statuses`, so reblogs and edits count),
 * Follow, FollowRequest and TagFollow (`family: :follows`), Report (`family: :reports`).
 * `favourites` is Tern's own: Mastodon has no favourites family (favourites only meet the general budgets); it
 * mirrors the statuses figure.
 */
export const RATE_LIMIT_DEFAULTS = {
  apiAccount: { limit: 1500, periodSeconds: 5 * 60 },
  apiToken: { limit: 300, periodSeconds: 5 * 60 },
  apiIp: { limit: 300, periodSeconds: 5 * 60 },
  paging: { limit: 300, periodSeconds: 15 * 60 },
  media: { limit: 30, periodSeconds: 30 * 60 },
  deletes: { limit: 30, periodSeconds: 30 * 60 },
  statuses: { limit: 300, periodSeconds: 3 * 3600 },
  follows: { limit: 400, periodSeconds: 24 * 3600 },
  reports: { limit: 400, periodSeconds: 24 * 3600 },
  favourites: { limit: 300, periodSeconds: 3 * 3600 },
} as const satisfies Record<string, Budget>;

export type BudgetName = keyof typeof RATE_LIMIT_DEFAULTS;
export type ActionFamily = "statuses" | "favourites" | "follows" | "reports" | "deletes";

/** The variable that overrides each budget: `N` (per Mastodon's period), `N/SECONDS`, or `off`. */
export const RATE_LIMIT_VARS: Record<BudgetName, keyof Env> = {
  apiAccount: "RATE_LIMIT_API_PER_ACCOUNT",
  apiToken: "RATE_LIMIT_API_PER_TOKEN",
  apiIp: "RATE_LIMIT_API_PER_IP",
  paging: "RATE_LIMIT_PAGING",
  media: "RATE_LIMIT_MEDIA",
  deletes: "RATE_LIMIT_DELETES",
  statuses: "RATE_LIMIT_STATUSES",
  follows: "RATE_LIMIT_FOLLOWS",
  reports: "RATE_LIMIT_REPORTS",
  favourites: "RATE_LIMIT_FAVOURITES",
};

/**
 * Families that count what was created, as Mastodon's RateLimitable records on create and rolls back with the
 * transaction: a refused request (4xx) takes its hit back. Deletes are a rack-attack throttle in Mastodon: every
 * authenticated attempt counts.
 */
const UNDO_ON_CLIENT_ERROR: Record<ActionFamily, boolean> = { statuses: true, favourites: true, follows: true, reports: true, deletes: false };

export interface RateLimitConfig {
  budgets: Record<BudgetName, Budget | null>;
  /** Client IPs exempt from the general budgets (Mastodon's `allow from localhost` safelist). */
  safelist: ReadonlySet<string>;
}

const configCache = new WeakMap<object, RateLimitConfig>();

export function rateLimitConfig(env: Env): RateLimitConfig {
  const hit = configCache.get(env);
  if (hit) return hit;
  const budgets = {} as Record<BudgetName, Budget | null>;
  for (const name of Object.keys(RATE_LIMIT_DEFAULTS) as BudgetName[]) {
    budgets[name] = parseBudget(env[RATE_LIMIT_VARS[name]] as string | undefined, RATE_LIMIT_DEFAULTS[name]);
  }
  const raw = (env.RATE_LIMIT_SAFELIST ?? "").trim();
  const list = raw === "" ? ["127.0.0.1", "::1"] : /^none$/i.test(raw) ? [] : raw.split(",");
  const cfg = { budgets, safelist: new Set(list.map((x) => x.trim().toLowerCase()).filter(Boolean)) };
  configCache.set(env, cfg);
  return cfg;
}

function parseBudget(v: string | undefined, def: Budget): Budget | null {
  const s = (v ?? "").trim();
  if (!s) return def;
  if (/^(off|none|false|0)$/i.test(s)) return null;
  const m = /^(\d{1,9})(?:\s*\/\s*(\d{1,9}))?$/.exec(s);
  if (!m) return def;
  const limit = Number(m[1]);
  const periodSeconds = m[2] ? Number(m[2]) : def.periodSeconds;
  return limit > 0 && periodSeconds > 0 ? { limit, periodSeconds } : null;
}

/** X-RateLimit-Reset as Mastodon writes it (`iso8601(6)`: microseconds, UTC). */
export function resetHeader(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function limitError(limit: number, resetAt: number) {
  const err = tooManyRequests();
  err.headers = {
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Reset": resetHeader(resetAt),
    "Retry-After": String(Math.max(1, Math.ceil((resetAt - Date.now()) / 1000))),
  };
  return err;
}

function limiter(c: Ctx, name: string) {
  const ns = c.env.RATE_LIMITER as unknown as DurableObjectNamespace<RateLimiter>;
  return ns.get(ns.idFromName(name));
}

/** Counts `n` hits on the rule's object; throws 429 `Too many requests` with X-RateLimit-* headers when over the limit. */
async function hitOrRefuse(c: Ctx, rule: RateRule, n: number) {
  const hit = await limiter(c, `${rule.name}:${rule.key}`).hit(rule.limit, rule.periodSeconds, n);
  if (!hit.allowed) throw limitError(rule.limit, hit.resetAt);
  return hit;
}

/** Counts one hit; throws 429 `Too many requests` with X-RateLimit-* headers when over the limit. */
export async function enforceRateLimit(c: Ctx, rule: RateRule): Promise<void> {
  const hit = await hitOrRefuse(c, rule, 1);
  // The response reports whichever budget is closest to running out (Mastodon's RateLimitHeaders).
  state(c)?.reported.push({ limit: rule.limit, remaining: Math.max(0, rule.limit - hit.count), resetAt: hit.resetAt });
}

/** A key's hits this isolate counted and has not reported yet, in a window of its own. */
interface LocalCount {
  end: number;
  seen: number;
  unreported: number;
}
const localCounts = new Map<string, LocalCount>();
const LOCAL_COUNTS_MAX = 2000;

/**
 * A generous rule whose trickle should cost nothing (the inbox's per-host budget, C25: 6,000 POSTs in 5 minutes):
 * a key's first `free` hits of a window in this isolate are counted here only; from then on every hit asks the key's
 * object, carrying the hits it has not heard of yet, so past that point a flood is refused as exactly as by
 * enforceRateLimit. What isolates count and never report is at most `free` per isolate and window, nothing next to
 * such a budget, and the usual trickle (a host's few activities a minute) makes no object call at all.
 */
export async function enforceRateLimitCountedHere(c: Ctx, rule: RateRule, free: number): Promise<void> {
  const now = Date.now();
  const id = `${rule.name}:${rule.key}`;
  let e = localCounts.get(id);
  if (!e || now >= e.end) {
    e = { end: now + rule.periodSeconds * 1000, seen: 0, unreported: 0 };
    localCounts.delete(id); // a new window goes to the back: the oldest windows leave first
    setAtMost(localCounts, id, e, LOCAL_COUNTS_MAX);
  }
  e.seen++;
  e.unreported++;
  if (e.seen <= free) return;
  const n = e.unreported;
  e.unreported = 0;
  await hitOrRefuse(c, rule, n);
}

/** POST /api/v1/media and /api/v2/media per account (throttle_api_media); every attempt counts, as in rack-attack. */
export async function throttleMediaUpload(c: Ctx, accountId: string): Promise<void> {
  const budget = rateLimitConfig(c.env).budgets.media;
  if (budget) await enforceRateLimit(c, { name: "media_upload", key: accountId, ...budget });
}

// ---- general budgets and action families ----

interface Reported {
  limit: number;
  remaining: number;
  resetAt: number;
}

type Subject = { kind: "account"; accountId: string; tokenId: string } | { kind: "ip" };

interface RequestState {
  api: boolean;
  paging: boolean;
  family: ActionFamily | null;
  /** What the subject's object answered for the general budgets (and the family, when batched). */
  hits: CounterHit[];
  familyHit: CounterHit | null;
  /** The object that counted the family (`acct:<id>`). */
  familySubject: string | null;
  /** The declared family middleware ran (the action was attempted). */
  familyRan: boolean;
  reported: Reported[];
}

const states = requestSlot<RequestState>("rate limits: state");
const state = (c: Ctx) => states.get(c);

/** Token hash → whose budget its requests use; a token belongs to one account forever, so entries never go stale. */
const tokenSubjects = new Map<string, Subject>();
const TOKEN_SUBJECTS_MAX = 5000;

/** Handlers marked by `rateLimited`, found among a request's matched routes before the route runs. */
const declared = new WeakMap<object, ActionFamily>();

/**
 * Route middleware for an action with a per-account family budget: put it after the route's `requireUser(...)`.
 * Past the budget the request is 429 and the handler does not run, so nothing is written.
 */
export function rateLimited(family: ActionFamily): MiddlewareHandler<AppEnv> {
  const mw = createMiddleware<AppEnv>(async (c, next) => {
    await enforceAction(c, family);
    await next();
  });
  declared.set(mw, family);
  return mw;
}

/** The family check: the batched answer when the middleware counted it, else one call now. */
async function enforceAction(c: Ctx, family: ActionFamily): Promise<void> {
  const st = state(c);
  if (st) st.familyRan = true;
  let hit = st?.family === family ? st.familyHit : null;
  if (!hit) {
    const budget = rateLimitConfig(c.env).budgets[family];
    const account = c.get("viewer")?.account;
    if (!budget || !account) return;
    // One spec counted, so one hit answered.
    const hits = await withinBound(limiter(c, `acct:${account.id}`).count([{ name: family, ...budget }]));
    if (!hits) return; // the object failed or did not answer in time: the action goes on (logged)
    hit = hits[0]!;
    if (st) {
      st.family = family;
      st.familyHit = hit;
      st.familySubject = `acct:${account.id}`;
    }
  }
  if (!hit.allowed) throw limitError(hit.limit, hit.resetAt);
}

const PAGING_PARAMS = ["page", "min_id", "max_id", "since_id"];

function isApiPath(path: string): boolean {
  if (path !== "/api" && !path.startsWith("/api/")) return false;
  // Mastodon's streaming server is not behind rack-attack: the socket and its health check are not counted.
  return !/^\/api\/v1\/streaming(?:[/.]|$)/.test(path);
}

export interface RequestLimits {
  /** After the viewer is known: counts the request (if not already under way) and throws 429 past a budget. */
  check(): Promise<void>;
  /** After the handler: X-RateLimit-* on /api responses; takes back the hit of an action that did not happen. */
  finish(): Promise<void>;
}

const NOOP: RequestLimits = { check: async () => {}, finish: async () => {} };
const started = requestSlot<RequestLimits>("rate limits: started");

/**
 * Refuses a request past a general budget, then sets the headers once the handler answered. Mounted after CORS, so a
 * 429 carries the CORS headers browser clients need to read it (Mastodon's Rack::Cors runs before rack-attack).
 */
export const applyRateLimits: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limits = started.get(c) ?? NOOP;
  await limits.check();
  await next();
  await limits.finish();
};

/**
 * Starts counting a request against Mastodon's general budgets (rack-attack): every /api request except the
 * streaming API and CORS preflights, and every paging request (`page`, `min_id`, `max_id`, `since_id`) anywhere.
 * `token` is the bearer token when the viewer will be resolved from it. When the token's account is known, or there
 * is no token, the Durable Object call starts now, while the caller looks the token up; `applyRateLimits` waits for
 * it.
 */
export function startRateLimits(c: Ctx, token: string | null): void {
  const limits = requestLimits(c, token);
  if (limits !== NOOP) started.set(c, limits);
}

function requestLimits(c: Ctx, token: string | null): RequestLimits {
  if (c.req.method === "OPTIONS") return NOOP;
  const api = isApiPath(c.req.path);
  const paging = PAGING_PARAMS.some((p) => !!c.req.query(p)?.trim());
  if (!api && !paging) return NOOP;
  const family = api ? familyOf(c) : null;
  const st: RequestState = { api, paging, family, hits: [], familyHit: null, familySubject: null, familyRan: false, reported: [] };
  states.set(c, st);
  const cfg = rateLimitConfig(c.env);
  let hash: Promise<string> | null = null;

  const count = async (subject: Subject): Promise<void> => {
    const name = subject.kind === "account" ? `acct:${subject.accountId}` : `ip:${clientIp(c)}`;
    const specs = countersFor(c, cfg, st, subject);
    if (!specs.length) return;
    const every = reportEvery(c.env);
    const local = localSubject(name);
    const now = Date.now();
    // The general budgets count here while this isolate knows where they stand and is not near a limit: no call.
    if (!st.family) {
      const full = specs.filter((sp) => local.isFull(sp, now));
      if (full.length) {
        // As the object would: the budgets not yet spent still count this request.
        local.countHere(specs.filter((sp) => !sp.gated && !local.isFull(sp, now)));
        const worst = full.map((sp) => local.counters.get(sp.name)!).reduce((a, b) => (b.end > a.end ? b : a));
        throw limitError(worst.limit, worst.end);
      }
      if (local.mayCountHere(specs, now, every)) {
        st.hits = local.countHere(specs);
        if (local.reportDue(specs, every)) report(c, name, local, specs);
        return;
      }
    }
    // Otherwise the subject's object counts this request, with the hits this isolate let through since it last heard.
    const asked = specs.map((sp) => ({ ...sp, admitted: local.takeUnreported(sp.name) }));
    const hits = await withinBound(limiter(c, name).count(asked));
    if (!hits) {
      // The object failed or did not answer in time: the request goes on, its hits wait for the next call.
      local.giveBack(asked);
      local.countHere(specs.filter((sp) => !sp.gated));
      return;
    }
    local.heard(specs, hits);
    st.hits = hits;
    st.familyHit = st.family ? (hits.find((h) => h.name === st.family) ?? null) : null;
    if (st.familyHit) st.familySubject = name;
  };

  let early: Promise<boolean>;
  if (token) {
    hash = sha256Hex(token);
    early = hash.then((h) => {
      const s = tokenSubjects.get(h);
      return s ? count(s).then(() => true) : false;
    });
  } else early = count({ kind: "ip" }).then(() => true);
  // Settled in check(); never an unhandled rejection if the token lookup throws first.
  early.catch(() => {});

  return {
    async check() {
      const counted = await early;
      const v = c.get("viewer");
      if (token && hash) {
        const h = await hash;
        if (v) {
          if (!tokenSubjects.has(h)) {
            setAtMost(tokenSubjects, h, v.account ? { kind: "account", accountId: v.account.id, tokenId: v.tokenId } : { kind: "ip" }, TOKEN_SUBJECTS_MAX);
          }
        } else tokenSubjects.delete(h); // revoked since: its requests count per IP from now on
      }
      if (!counted) await count(v?.account ? { kind: "account", accountId: v.account.id, tokenId: v.tokenId } : { kind: "ip" });
      // A refused family answers from its route (after the route's own auth checks), not here.
      const refused = st.hits.filter((h) => !h.allowed && h.name !== st.family);
      if (refused.length) {
        const worst = refused.reduce((a, b) => (b.resetAt > a.resetAt ? b : a));
        throw limitError(worst.limit, worst.resetAt);
      }
    },
    async finish() {
      const fh = st.familyHit;
      if (fh?.counted && st.family && st.familySubject) {
        // The action did not happen: its route was not reached (another route answered, or auth refused it) or, for a
        // family that counts creations, it was refused (4xx). Only failures pay this second call.
        const status = c.res.status;
        if (!st.familyRan || (UNDO_ON_CLIENT_ERROR[st.family] && status >= 400 && status < 500)) {
          try {
            await limiter(c, st.familySubject).undo(fh.name, fh.resetAt);
          } catch (e) {
            console.error("rate limit undo failed", e);
          }
        }
      }
      if (!st.api || c.res.headers.has("X-RateLimit-Limit")) return;
      // The budget closest to running out (Mastodon's RateLimitHeaders); an action's family wins a tie, as Mastodon's
      // override_rate_limit_headers replaces the general figures unless they are strictly lower.
      const report = (h: CounterHit): Reported => ({ limit: h.limit, remaining: Math.max(0, h.limit - h.count), resetAt: h.resetAt });
      const all: Reported[] = [...st.reported, ...st.hits.filter((h) => h.name !== st.family).map(report)];
      if (fh?.counted && st.familyRan && !(st.family && UNDO_ON_CLIENT_ERROR[st.family] && c.res.status >= 400)) all.unshift(report(fh));
      if (!all.length) return;
      const low = all.reduce((a, b) => (b.remaining < a.remaining ? b : a));
      c.res.headers.set("X-RateLimit-Limit", String(low.limit));
      c.res.headers.set("X-RateLimit-Remaining", String(low.remaining));
      c.res.headers.set("X-RateLimit-Reset", resetHeader(low.resetAt));
    },
  };
}

// ---- the general budgets counted in the isolate, reported in batches ----

/**
 * Hits of the general budgets (api, per token, paging; not the action families) an isolate counts on its own before
 * it reports them to the subject's object: `RATE_LIMIT_REPORT_EVERY` (default 10; `1` asks the object on every request,
 * as before). One isolate alone never lets a request past a budget: it asks the object on every request once it is
 * within this many hits of a limit. Several isolates serving one subject at once can each let through at most
 * 2 × this many hits past a budget in a window (hits not yet reported, plus a batch on its way), since each only
 * learns of the others' hits from the object's answers.
 */
export const REPORT_EVERY_DEFAULT = 10;
/** How long a request waits for the RateLimiter object before it goes on without its answer. */
export const LIMITER_WAIT_MS = 1500;

function reportEvery(env: Env): number {
  const n = Number((env.RATE_LIMIT_REPORT_EVERY ?? "").trim() || REPORT_EVERY_DEFAULT);
  return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : REPORT_EVERY_DEFAULT;
}

/** The object's answer, or null if it threw or took longer than LIMITER_WAIT_MS (logged either way). */
async function withinBound<T>(call: Promise<T>): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), LIMITER_WAIT_MS);
  });
  try {
    const r = await Promise.race([call, late]);
    if (r === null) console.error(`rate limiter: no answer in ${LIMITER_WAIT_MS} ms, request let through`);
    return r;
  } catch (e) {
    console.error("rate limiter failed, request let through:", e instanceof Error ? e.message : e);
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** One general budget of a subject, as this isolate knows it. */
interface LocalCounter {
  limit: number;
  /** End of the window, as the object said (0: not heard in this window). */
  end: number;
  /** The object's count at its last answer. */
  known: number;
  /** Hits this isolate let through since (not yet sent). */
  unreported: number;
  /** A batch is on its way to the object. */
  sending: boolean;
}

class LocalSubject {
  readonly counters = new Map<string, LocalCounter>();

  private get(sp: CounterSpec, now: number): LocalCounter | null {
    const e = this.counters.get(sp.name);
    if (!e || e.limit !== sp.limit || now >= e.end) return null;
    return e;
  }

  /** A counter the object last said was full, in the same window: refused here (a general budget never goes down). */
  isFull(sp: CounterSpec, now: number): boolean {
    const e = this.get(sp, now);
    return !!e && e.known >= e.limit;
  }

  mayCountHere(specs: CounterSpec[], now: number, every: number): boolean {
    if (every <= 1) return false;
    return specs.every((sp) => {
      const e = this.get(sp, now);
      return !!e && e.known + e.unreported + every <= e.limit && !(e.sending && e.unreported + 1 >= every);
    });
  }

  countHere(specs: CounterSpec[]): CounterHit[] {
    return specs.map((sp) => {
      let e = this.counters.get(sp.name);
      if (!e) {
        e = { limit: sp.limit, end: Date.now() + sp.periodSeconds * 1000, known: 0, unreported: 0, sending: false };
        this.counters.set(sp.name, e);
      }
      e.unreported++;
      return { name: sp.name, limit: e.limit, count: e.known + e.unreported, resetAt: e.end, allowed: true, counted: true };
    });
  }

  reportDue(specs: CounterSpec[], every: number): boolean {
    return specs.some((sp) => {
      const e = this.counters.get(sp.name);
      return !!e && !e.sending && e.unreported >= every;
    });
  }

  takeUnreported(name: string): number {
    const e = this.counters.get(name);
    if (!e) return 0;
    // Hits of a window that has ended are not carried into the next one.
    const n = Date.now() < e.end ? e.unreported : 0;
    e.unreported = 0;
    return n;
  }

  giveBack(asked: { name: string; admitted: number }[]): void {
    for (const a of asked) {
      const e = this.counters.get(a.name);
      if (e) e.unreported += a.admitted;
    }
  }

  /** The object's answer: where each counter stands now (this request's hit, if counted, included). */
  heard(specs: CounterSpec[], hits: CounterHit[]): void {
    for (const h of hits) {
      const sp = specs.find((x) => x.name === h.name);
      if (!sp || sp.gated) continue; // families are asked every time
      const e = this.counters.get(h.name);
      // Hits counted here since the call left are kept: they happened in the window the object just named.
      this.counters.set(h.name, { limit: h.limit, end: h.resetAt, known: h.count, unreported: e?.unreported ?? 0, sending: e?.sending ?? false });
    }
  }
}

/** Object name (`acct:<id>`, `ip:<address>`) → its general budgets as this isolate counts them. */
const localSubjects = new Map<string, LocalSubject>();
const LOCAL_SUBJECTS_MAX = 5000;

function localSubject(name: string): LocalSubject {
  let s = localSubjects.get(name);
  if (!s) {
    s = new LocalSubject();
    setAtMost(localSubjects, name, s, LOCAL_SUBJECTS_MAX);
  }
  return s;
}

/** Sends the hits counted here to the subject's object after the response; a failed batch is kept for the next call. */
function report(c: Ctx, name: string, local: LocalSubject, specs: CounterSpec[]): void {
  const general = specs.filter((sp) => !sp.gated);
  const asked = general.map((sp) => ({ ...sp, admitted: local.takeUnreported(sp.name), probe: false }));
  for (const sp of general) {
    const e = local.counters.get(sp.name);
    if (e) e.sending = true;
  }
  const sent = withinBound(limiter(c, name).count(asked)).then((hits) => {
    for (const sp of general) {
      const e = local.counters.get(sp.name);
      if (e) e.sending = false;
    }
    if (hits) local.heard(general, hits);
    else local.giveBack(asked);
  });
  try {
    c.executionCtx.waitUntil(sent);
  } catch {
    // No execution context (a direct app.request): the batch goes on its own.
  }
}

/** The budgets one request counts in its subject's object, general ones first, the declared family last (gated). */
function countersFor(c: Ctx, cfg: RateLimitConfig, st: RequestState, subject: Subject): CounterSpec[] {
  const b = cfg.budgets;
  const specs: CounterSpec[] = [];
  const add = (name: string, budget: Budget | null, gated = false) => {
    if (budget) specs.push({ name, limit: budget.limit, periodSeconds: budget.periodSeconds, gated });
  };
  const safelisted = cfg.safelist.has((c.req.header("cf-connecting-ip") ?? "").trim().toLowerCase());
  if (!safelisted) {
    if (subject.kind === "account") {
      if (st.api) {
        add("api", b.apiAccount);
        add(`tok:${subject.tokenId}`, b.apiToken);
      }
      if (st.paging) add("paging", b.paging);
    } else {
      if (st.api) add("api", b.apiIp);
      if (st.paging) add("paging", b.paging);
    }
  }
  // An action family is an account's budget; signed out (or with an app token) the route refuses anyway.
  if (st.family && subject.kind === "account") add(st.family, b[st.family], true);
  return specs;
}

function familyOf(c: Ctx): ActionFamily | null {
  for (const r of matchedRoutes(c)) {
    const f = declared.get(r.handler);
    if (f) return f;
  }
  return null;
}

/** Sign-in attempts per client IP, form and password grant together (B11). */
export const LOGIN_IP_LIMIT = { limit: 25, periodSeconds: 5 * 60 } as const;
/** Failed sign-ins per e-mail address, whatever the IP (B11). */
export const LOGIN_EMAIL_FAILURE_LIMIT = { limit: 25, periodSeconds: 3600 } as const;

/**
 * Every sign-in attempt, from the form or the password grant, counts against its IP before the password is checked:
 * the 26th in 5 minutes is 429 whatever it carries (the IP is the caller's own budget).
 */
export async function throttleLogin(c: Ctx): Promise<void> {
  await enforceRateLimit(c, { name: "login_ip", key: clientIp(c), ...LOGIN_IP_LIMIT });
}

/**
 * A failed sign-in (wrong e-mail or password) counts against the e-mail it named; past 25 failures in an hour it is
 * answered 429 instead of "invalid". Only failures count and the counter is consulted only after a failure, so
 * strangers guessing from rotating addresses cannot lock the owner out: the right password always signs in (it is
 * still refused by the owner's own per-IP budget, never by this one).
 */
export async function countLoginFailure(c: Ctx, email: unknown): Promise<void> {
  if (typeof email !== "string" || !email.trim()) return;
  await enforceRateLimit(c, { name: "login_email_failures", key: email.trim().toLowerCase().slice(0, 320), ...LOGIN_EMAIL_FAILURE_LIMIT });
}

/**
 * Failed checks of an account's own password outside sign-in (moving the account, changing the password or e-mail,
 * deleting the account, turning two-factor off), whatever the IP: the figure of the sign-in failure budget above.
 */
export const ACCOUNT_PASSWORD_FAILURE_LIMIT = LOGIN_EMAIL_FAILURE_LIMIT;
/**
 * Failed second-factor codes per account, sign-in (form and password grant) and settings together, whatever the IP:
 * Mastodon's `Auth::SessionsController::MAX_2FA_ATTEMPTS_PER_HOUR` (10 an hour per user).
 */
export const ACCOUNT_OTP_FAILURE_LIMIT = { limit: 10, periodSeconds: 3600 } as const;

export type CredentialFactor = "password" | "otp";
const FACTOR_LIMITS: Record<CredentialFactor, Budget> = { password: ACCOUNT_PASSWORD_FAILURE_LIMIT, otp: ACCOUNT_OTP_FAILURE_LIMIT };

/**
 * Claims one failure of each factor on the account's budgets (its `acct:<id>` object) BEFORE the factor is checked,
 * and refuses (429, nothing claimed) when one is spent: so once a budget is spent even the right password or code is
 * refused until its window ends, and parallel guesses cannot overrun it. The answer gives back the claims of the
 * factors that turned out right, so only failures stay counted.
 */
export async function claimCredentialFailures(
  c: Ctx,
  accountId: string,
  factors: readonly CredentialFactor[],
): Promise<(right: Partial<Record<CredentialFactor, boolean>>) => Promise<void>> {
  if (!factors.length) return async () => {};
  const obj = limiter(c, `acct:${accountId}`);
  const hits = await obj.count(factors.map((f) => ({ name: `${f}_failures`, ...FACTOR_LIMITS[f] })));
  const giveBack = (which: CounterHit[]) => Promise.all(which.filter((h) => h.counted).map((h) => obj.undo(h.name, h.resetAt)));
  const refused = hits.filter((h) => !h.allowed);
  if (refused.length) {
    await giveBack(hits);
    const worst = refused.reduce((a, b) => (b.resetAt > a.resetAt ? b : a));
    throw limitError(worst.limit, worst.resetAt);
  }
  return async (right) => {
    await giveBack(hits.filter((_, i) => right[factors[i]!]));
  };
}

/**
 * Mastodon's rack-attack figures for mails asked for: `throttle_password_resets/ip` (25 / 5 min) and `/email` (5 / 30
 * min) on POST /auth/password, `throttle_email_confirmations/ip` and `/email` (the same figures) on new confirmation
 * links. Every attempt counts, the address as typed (lower-cased), whether it belongs to an account or not.
 */
export const MAIL_REQUEST_IP_LIMIT = { limit: 25, periodSeconds: 5 * 60 } as const;
export const MAIL_REQUEST_EMAIL_LIMIT = { limit: 5, periodSeconds: 30 * 60 } as const;

async function throttleMailRequests(c: Ctx, kind: string, email: unknown): Promise<void> {
  await enforceRateLimit(c, { name: `${kind}_ip`, key: clientIp(c), ...MAIL_REQUEST_IP_LIMIT });
  const key = typeof email === "string" ? email.trim().toLowerCase().slice(0, 320) : "";
  if (key) await enforceRateLimit(c, { name: `${kind}_email`, key, ...MAIL_REQUEST_EMAIL_LIMIT });
}

/** POST /auth/password: per IP, then per address. */
export const throttlePasswordResets = (c: Ctx, email: unknown) => throttleMailRequests(c, "password_resets", email);
/** A new confirmation link (POST /api/v1/emails/confirmations): per IP, then per address. */
export const throttleConfirmations = (c: Ctx, email: unknown) => throttleMailRequests(c, "email_confirmations", email);

/** The client IP: CF-Connecting-IP only (X-Forwarded-For is never trusted); IPv6 grouped by /64. */
export function clientIp(c: Ctx): string {
  const ip = (c.req.header("cf-connecting-ip") ?? "").trim() || "unknown";
  if (ip.includes(":")) return ipv6Prefix64(ip);
  return ip;
}

/** First four groups of an IPv6 address, with `::` expanded, so every spelling of one /64 is one key. */
function ipv6Prefix64(ip: string): string {
  const addr = ip
    .replace(/^\[|\]$/g, "")
    .split("%")[0]! // split always yields at least one element
    .toLowerCase();
  const [head, tail] = addr.includes("::") ? addr.split("::", 2) : [addr, null];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === null ? h : [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill("0"), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+/, "") || "0")
    .join(":")}::/64`;
}
