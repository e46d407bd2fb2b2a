// A fake remote server for inbox tests: actors with real RSA keys whose documents `fetchMock` serves, signed POSTs
// to our inboxes, and a job runner that records what was enqueued (federate jobs are recorded, not run: delivery
// has its own tests).
import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import worker from "../../src/index";
import { createDb } from "../../src/db/client";
import { generateKeyPair } from "../../src/federation/signing/keys";
import { signRequest } from "../support/signed-request";
import { runJob } from "../../src/background/effects-runner";
import type { JobMessage } from "../../src/effects/types";
import { ORIGIN } from "./helpers";
import { queued } from "./queues";

export const AS_PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const keyCache = new Map<string, Promise<{ publicKeyPem: string; privateKeyPem: string }>>();

export interface RemoteActor {
  host: string;
  name: string;
  uri: string;
  keyId: string;
  followers: string;
  featured: string;
  inbox: string;
  keys: { publicKeyPem: string; privateKeyPem: string };
  doc: Record<string, unknown>;
}

let activitySeq = 0;
export const newId = (a: RemoteActor, kind = "activities") => `${a.uri}/${kind}/${Date.now()}-${++activitySeq}`;

export function installFetchMock(): void {
  fetchMock.activate();
  fetchMock.disableNetConnect();
}

/** A remote actor; its document is served (any number of times) unless `serve` is false. */
export async function remoteActor(
  name: string,
  host = "remote.example",
  opts: { serve?: boolean; contentType?: string; locked?: boolean; docPatch?: Record<string, unknown> } = {},
): Promise<RemoteActor> {
  const k = `${host}/${name}`;
  if (!keyCache.has(k)) keyCache.set(k, generateKeyPair());
  const keys = await keyCache.get(k)!;
  const uri = `https://${host}/users/${name}`;
  const doc: Record<string, unknown> = {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id: uri,
    type: "Person",
    preferredUsername: name,
    name: name.toUpperCase(),
    summary: "<p>remote</p>",
    url: `https://${host}/@${name}`,
    inbox: `${uri}/inbox`,
    outbox: `${uri}/outbox`,
    followers: `${uri}/followers`,
    following: `${uri}/following`,
    featured: `${uri}/collections/featured`,
    endpoints: { sharedInbox: `https://${host}/inbox` },
    manuallyApprovesFollowers: !!opts.locked,
    publicKey: { id: `${uri}#main-key`, owner: uri, publicKeyPem: keys.publicKeyPem },
    ...(opts.docPatch ?? {}),
  };
  const actor: RemoteActor = {
    host,
    name,
    uri,
    keyId: `${uri}#main-key`,
    followers: `${uri}/followers`,
    featured: `${uri}/collections/featured`,
    inbox: `${uri}/inbox`,
    keys,
    doc,
  };
  if (opts.serve !== false) serveJson(host, `/users/${name}`, doc, opts.contentType);
  return actor;
}

export function serveJson(host: string, path: string, doc: unknown, contentType = "application/activity+json", status = 200): void {
  fetchMock
    .get(`https://${host}`)
    .intercept({ path })
    .reply(status, JSON.stringify(doc), { headers: { "content-type": contentType } })
    .persist();
}

/** POSTs `activity` to one of our inboxes, signed with `signer`'s key (or `keyId`/`privateKeyPem` overrides). */
export async function postInbox(
  signer: RemoteActor,
  activity: unknown,
  opts: { path?: string; keyId?: string; body?: string; tamper?: (h: Headers) => void; serverTiming?: boolean } = {},
): Promise<Response> {
  const body = opts.body ?? JSON.stringify(activity);
  const req = new Request(`${ORIGIN}${opts.path ?? "/inbox"}`, { method: "POST", headers: { "content-type": "application/activity+json" }, body });
  const signed = await signRequest(req, opts.keyId ?? signer.keyId, signer.keys.privateKeyPem, body);
  const headers = new Headers(signed.headers);
  opts.tamper?.(headers);
  if (!opts.serverTiming) return SELF.fetch(signed.url, { method: "POST", headers, body });
  // Through the Worker's own fetch with Server-Timing's rows read and written on (DEV_SERVER_TIMING).
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(signed.url, { method: "POST", headers, body }), { ...env, DEV_SERVER_TIMING: "true" } as typeof env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

export const ran: JobMessage[] = [];

/** Runs captured jobs (and what they enqueue); federate jobs are only recorded. */
export async function runJobs(withEnv: typeof env = env): Promise<JobMessage[]> {
  const db = createDb(env.DB);
  const out: JobMessage[] = [];
  while (queued.jobs.length) {
    const job = queued.jobs.shift()!;
    out.push(job);
    ran.push(job);
    if (job.type !== "federate") await runJob(db, withEnv, job);
  }
  return out;
}

/** Posts and processes: the response status and the jobs that ran. */
export async function deliver(signer: RemoteActor, activity: unknown, path?: string) {
  const res = await postInbox(signer, activity, { path });
  const jobs = await runJobs();
  return { status: res.status, jobs };
}

export function note(a: RemoteActor, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const id = (extra.id as string) ?? newId(a, "statuses");
  return {
    id,
    type: "Note",
    attributedTo: a.uri,
    content: "<p>hello from afar</p>",
    published: new Date().toISOString(),
    to: [AS_PUBLIC],
    cc: [a.followers],
    url: id,
    ...extra,
  };
}

export function create(a: RemoteActor, object: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${object.id}/activity`,
    type: "Create",
    actor: a.uri,
    published: object.published,
    to: object.to,
    cc: object.cc,
    object,
    ...extra,
  };
}

export const sql = (q: string, ...binds: unknown[]) =>
  env.DB.prepare(q)
    .bind(...binds)
    .all<Record<string, any>>()
    .then((r) => r.results);

export const pad = (id: string) => id.padStart(20, "0");

/**
 * A reply by `a` delivered to us without its parent: the parent Note (not delivered), the reply Note, and the id of
 * the reply's stored status (as the API spells it). The notes are not served: each test serves them as it needs.
 */
export async function replyWithoutParent(a: RemoteActor, parentContent: string, replyContent: string) {
  const parent = note(a, { content: parentContent });
  const reply = note(a, { content: replyContent, inReplyTo: parent.id });
  await deliver(a, create(a, reply));
  const [row] = await sql("SELECT CAST(id AS TEXT) AS id FROM statuses WHERE uri = ?", reply.id);
  return { parent, reply, replyId: String(BigInt(row!.id)) };
}
