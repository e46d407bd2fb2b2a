// Fixtures shared by export.test.ts and import.test.ts: an account with relations of every exportable kind.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { padId, snowflake } from "../../src/lib/text/ids";
import { ORIGIN, makeUser, type TestUser } from "./helpers";
import { SELF } from "cloudflare:test";

export async function remoteAccount(username: string, domain = "remote.example"): Promise<string> {
  const id = snowflake();
  await env.DB.prepare("INSERT INTO accounts (id, username, domain, uri, inbox_url, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4 || '/inbox', 1, 1)")
    .bind(padId(id), username, domain, `https://${domain}/users/${username}`)
    .run();
  return id;
}

/** A's relations of every kind; returns the accounts involved. */
export async function populate(a: TestUser) {
  const [b, c, d, e] = [await makeUser(), await makeUser(), await makeUser(), await makeUser()];
  const remote = await remoteAccount(`r${b.username}`);
  expect((await a.api.post(`/api/v1/accounts/${b.id}/follow`, { notify: true, languages: ["en", "de"] })).status).toBe(200);
  expect((await a.api.post(`/api/v1/accounts/${c.id}/follow`, { reblogs: false })).status).toBe(200);
  expect((await d.api.post(`/api/v1/accounts/${a.id}/follow`)).status).toBe(200);
  const list = await a.api.post("/api/v1/lists", { title: 'Friends, "close"' });
  expect((await a.api.post(`/api/v1/lists/${list.body.id}/accounts`, { account_ids: [b.id] })).status).toBe(200);
  expect((await a.api.post(`/api/v1/accounts/${e.id}/block`)).status).toBe(200);
  expect((await a.api.post(`/api/v1/accounts/${remote}/block`)).status).toBe(200);
  expect((await a.api.post(`/api/v1/accounts/${d.id}/mute`, { notifications: false })).status).toBe(200);
  expect((await a.api.post("/api/v1/domain_blocks", { domain: "spam.example" })).status).toBe(200);
  const s = await b.api.post("/api/v1/statuses", { status: "bookmark me" });
  expect((await a.api.post(`/api/v1/statuses/${s.body.id}/bookmark`)).status).toBe(200);
  return { b, c, d, e, remote, statusUri: s.body.uri as string };
}

export async function csv(u: TestUser, kind: string): Promise<{ status: number; text: string; type: string | null }> {
  const res = await SELF.fetch(`${ORIGIN}/api/tern/exports/${kind}.csv`, { headers: { authorization: `Bearer ${u.token}` } });
  return { status: res.status, text: await res.text(), type: res.headers.get("content-type") };
}
