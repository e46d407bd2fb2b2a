import { SELF, env } from "cloudflare:test";
import { expect, it } from "vitest";
import * as z from "zod";
import { ORIGIN, makeUser } from "./helpers";

// The NodeInfo 2.0 schema as the spec gives it: every object closed except metadata.
const count = z.number().int().min(0);
const nodeInfo20 = z
  .object({
    version: z.literal("2.0"),
    software: z.object({ name: z.string().regex(/^[a-z0-9-]+$/), version: z.string() }).strict(),
    protocols: z.array(z.enum(["activitypub", "ostatus", "xmpp"])).min(1),
    services: z.object({ inbound: z.array(z.string()), outbound: z.array(z.string()) }).strict(),
    openRegistrations: z.boolean(),
    usage: z
      .object({
        users: z.object({ total: count.optional(), activeHalfyear: count.optional(), activeMonth: count.optional() }).strict(),
        localPosts: count.optional(),
        localComments: count.optional(),
      })
      .strict(),
    metadata: z.object({}).passthrough(),
  })
  .strict();

it("advertises the 2.0 document from /.well-known/nodeinfo", async () => {
  const res = await SELF.fetch(`${ORIGIN}/.well-known/nodeinfo`);
  expect(res.status).toBe(200);
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  expect(await res.json()).toEqual({
    links: [{ rel: "http://nodeinfo.diaspora.software/ns/schema/2.0", href: `${ORIGIN}/nodeinfo/2.0` }],
  });
});

it("serves a NodeInfo 2.0 document that passes the strict schema, with usage counts", async () => {
  const a = await makeUser();
  const b = await makeUser();
  await makeUser();
  const now = Date.now();
  await env.DB.prepare("UPDATE users SET last_active_at = ? WHERE id = ?").bind(now, a.userId.padStart(20, "0")).run();
  await env.DB.prepare("UPDATE users SET current_sign_in_at = ? WHERE id = ?")
    .bind(now - 90 * 86400_000, b.userId.padStart(20, "0"))
    .run();
  const ins = (id: string, reblogOf: string | null) =>
    env.DB.prepare("INSERT INTO statuses (id, uri, account_id, local, visibility, reblog_of_id, created_at, updated_at) VALUES (?, ?, ?, 1, 'public', ?, ?, ?)")
      .bind(id.padStart(20, "0"), `${ORIGIN}/s/${id}`, a.id.padStart(20, "0"), reblogOf ? reblogOf.padStart(20, "0") : null, now, now)
      .run();
  await ins("11", null);
  await ins("12", null);
  await ins("13", "11"); // a reblog is not a post

  const res = await SELF.fetch(`${ORIGIN}/nodeinfo/2.0`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe('application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.0#"');
  const doc = nodeInfo20.parse(await res.json());
  expect(doc.software.name).toBe("tern");
  expect(doc.protocols).toEqual(["activitypub"]);
  expect(doc.openRegistrations).toBe(true); // REGISTRATIONS_MODE=open in tests
  expect(doc.usage.users).toEqual({ total: 3, activeHalfyear: 2, activeMonth: 1 });
  expect(doc.usage.localPosts).toBe(2);
  // megalodon accepts an unknown software name only with upstream mastodon.
  expect((doc.metadata as any).upstream).toEqual({ name: "mastodon", version: "4.6.0" });
  expect(typeof (doc.metadata as any).nodeName).toBe("string");
});

it("uses the same version string as the instance document", async () => {
  const ni = (await (await SELF.fetch(`${ORIGIN}/nodeinfo/2.0`)).json()) as any;
  const inst = (await (await SELF.fetch(`${ORIGIN}/api/v2/instance`)).json()) as any;
  expect(ni.software.version).toBe(inst.version);
});
