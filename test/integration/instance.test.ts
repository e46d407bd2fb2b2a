import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import worker from "../../src/index";
import { ORIGIN, anon, api, cfg, makeUser } from "./helpers";

const roundTrips = (h: Headers) => Number(/d1;[^,]*dur=(\d+)/.exec(h.get("server-timing") ?? "")?.[1] ?? "NaN");

const int = z.number().int();
const account = z.object({ id: z.string(), username: z.string(), acct: z.string(), url: z.string() }).passthrough();

// Every field clients depend on (reference/mastodon-clients.md, "Instance v2 fields clients depend on").
const instanceV2 = z.object({
  domain: z.string(),
  title: z.string(),
  version: z.string().regex(/^4\.6\.0\+[0-9A-Za-z.-]+$/),
  source_url: z.string().url(),
  description: z.string(),
  usage: z.object({ users: z.object({ active_month: int }) }),
  thumbnail: z.object({ url: z.string().url() }).passthrough(),
  icon: z.array(z.unknown()),
  languages: z.array(z.string()),
  configuration: z
    .object({
      urls: z.record(z.string(), z.string()),
      vapid: z.object({ public_key: z.string() }),
      accounts: z.object({ max_featured_tags: int, max_pinned_statuses: int }),
      statuses: z.object({ max_characters: int, max_media_attachments: int, characters_reserved_per_url: int }),
      media_attachments: z.object({
        supported_mime_types: z.array(z.string()).nonempty(),
        description_limit: int,
        image_size_limit: int,
        image_matrix_limit: int,
        video_size_limit: int,
        video_frame_rate_limit: int,
        video_matrix_limit: int,
      }),
      polls: z.object({ max_options: int, max_characters_per_option: int, min_expiration: int, max_expiration: int }),
      translation: z.object({ enabled: z.boolean() }),
      timelines_access: z.object({
        live_feeds: z.object({ local: z.string(), remote: z.string() }),
        hashtag_feeds: z.object({ local: z.string(), remote: z.string() }),
        trending_link_feeds: z.object({ local: z.string(), remote: z.string() }),
      }),
    })
    .passthrough(),
  registrations: z.object({
    enabled: z.boolean(),
    approval_required: z.boolean(),
    message: z.string().nullable(),
    url: z.string().nullable(),
    min_age: int.nullable(),
    reason_required: z.boolean().nullable(),
  }),
  api_versions: z.object({ mastodon: int }),
  contact: z.object({ email: z.string(), account: account.nullable() }),
  rules: z.array(z.object({ id: z.string(), text: z.string(), hint: z.string() }).passthrough()),
});

async function addRule(id: string, text: string, priority = 0) {
  await env.DB.prepare("INSERT INTO rules (id, text, hint, priority, created_at) VALUES (?, ?, '', ?, ?)")
    .bind(id.padStart(20, "0"), text, priority, Date.now())
    .run();
}

describe("GET /api/v2/instance", () => {
  it("has every field clients decode, in one D1 round trip", async () => {
    const owner = await makeUser("theowner", { roleId: "3" });
    await addRule("2", "Second", 2);
    await addRule("1", "Be kind", 1);
    // The first request a server ever gets makes and stores its VAPID key pair (src/push/keys.ts); later ones read it.
    await anon.get("/api/v2/instance");
    const res = await anon.get("/api/v2/instance");
    expect(res.status).toBe(200);
    const body = instanceV2.parse(res.body);
    expect(body.domain).toBe(cfg().domain);
    expect(body.version).toBe("4.6.0+tern.0.1.0");
    // 7, as Mastodon 4.5: grouped notifications (Phanpy uses them from 2) and quote posts (clients offer them from 7).
    expect(body.api_versions.mastodon).toBe(10);
    expect(body.configuration.urls.streaming).toBe("ws://tern.test");
    expect(body.configuration.statuses.max_characters).toBe(500);
    expect(body.configuration.media_attachments.supported_mime_types).toContain("image/webp");
    expect(body.configuration.timelines_access.live_feeds.local).toBe("public");
    expect(body.thumbnail.url).toBe(`${ORIGIN}/headers/original/missing.png`);
    expect(body.registrations.enabled).toBe(true); // REGISTRATIONS_MODE=open in tests
    expect(body.registrations.approval_required).toBe(false);
    expect(body.contact.account?.id).toBe(owner.id);
    expect(body.rules.map((r) => r.text)).toEqual(["Be kind", "Second"]);
    expect(body.usage.users.active_month).toBeGreaterThanOrEqual(0);
    expect(roundTrips(res.headers)).toBeLessThanOrEqual(1);
  });

  it("uses admin settings over the environment defaults", async () => {
    await env.DB.prepare("INSERT INTO instance_settings (key, value) VALUES ('site_title', 'Custom Title'), ('site_short_description', 'Short')").run();
    const res = await anon.get("/api/v2/instance");
    expect(res.body.title).toBe("Custom Title");
    expect(res.body.description).toBe("Short");
    expect(res.body.contact.account).toBeNull();
  });

  it("counts users active in the last 30 days", async () => {
    const u = await makeUser();
    await env.DB.prepare("UPDATE users SET last_active_at = ? WHERE id = ?").bind(Date.now(), u.userId.padStart(20, "0")).run();
    const res = await anon.get("/api/v2/instance");
    expect(res.body.usage.users.active_month).toBe(1);
  });
});

describe("GET /api/v1/instance", () => {
  it("has the legacy shape with stats", async () => {
    await makeUser();
    const res = await anon.get("/api/v1/instance");
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b.uri).toBe(cfg().domain);
    expect(typeof b.title).toBe("string");
    expect(typeof b.short_description).toBe("string");
    expect(typeof b.description).toBe("string");
    expect(typeof b.email).toBe("string");
    expect(b.version).toBe("4.6.0+tern.0.1.0");
    expect(b.urls).toEqual({ streaming_api: "ws://tern.test" });
    expect(b.stats).toEqual({ user_count: 1, status_count: 0, domain_count: 0 });
    expect(typeof b.thumbnail).toBe("string");
    expect(b.registrations).toBe(true);
    expect(b.invites_enabled).toBe(false);
    expect(b.configuration.statuses.max_characters).toBe(500);
    expect(b.configuration.polls.max_options).toBe(4);
    expect(b.contact_account).toBeNull();
    expect(Array.isArray(b.rules)).toBe(true);
    expect(roundTrips(res.headers)).toBeLessThanOrEqual(1);
  });
});

describe("instance sub-resources", () => {
  it("lists peers from known instances and remote accounts", async () => {
    await env.DB.prepare("INSERT INTO instances (domain, first_seen_at) VALUES ('b.example', 0)").run();
    await env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES ('00000000000000000777', 'r', 'a.example', 'https://a.example/users/r', 0, 0)",
    ).run();
    const res = await anon.get("/api/v1/instance/peers");
    expect(res.status).toBe(200);
    expect(res.body).toEqual(["a.example", "b.example"]);
  });

  it("in limited federation mode, peers, their search and the activity answer 404, as Mastodon's", async () => {
    await env.DB.prepare("INSERT INTO instances (domain, first_seen_at) VALUES ('hidden.example', 0)").run();
    for (const path of ["/api/v1/instance/peers", "/api/v1/peers/search?q=hid", "/api/v1/instance/activity"]) {
      const ctx = createExecutionContext();
      const res = await worker.fetch(new Request(`${ORIGIN}${path}`), { ...env, LIMITED_FEDERATION: "true" } as typeof env, ctx);
      await waitOnExecutionContext(ctx);
      expect([path, res.status, await res.text()]).toEqual([path, 404, expect.not.stringContaining("hidden.example")]);
      expect((await anon.get(path)).status).toBe(200);
    }
  });

  it("reports weekly activity as strings, excluding private statuses", async () => {
    const u = await makeUser();
    const now = Date.now();
    // Ids made from the creation time, as posting makes them (the count reads the weeks' id range).
    const ins = (k: number, vis: string) => {
      const id = ((BigInt(now) << 16n) + BigInt(k)).toString();
      return env.DB.prepare("INSERT INTO statuses (id, uri, account_id, local, visibility, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?)")
        .bind(id.padStart(20, "0"), `${ORIGIN}/s/${id}`, u.id.padStart(20, "0"), vis, now, now)
        .run();
    };
    await ins(91, "public");
    await ins(92, "unlisted");
    await ins(93, "private");
    await ins(94, "direct");
    const res = await anon.get("/api/v1/instance/activity");
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(12);
    for (const w of res.body) {
      expect(Object.keys(w).sort()).toEqual(["logins", "registrations", "statuses", "week"]);
      for (const v of Object.values(w)) expect(typeof v).toBe("string");
    }
    expect(res.body[0].statuses).toBe("2");
    expect(res.body[0].registrations).toBe("1");
    expect(Number(res.body[0].week)).toBeGreaterThan(Number(res.body[1].week));
    expect(Number(res.body[0].week) * 1000).toBeLessThanOrEqual(now);
  });

  it("serves rules, texts, languages and translation languages", async () => {
    await addRule("5", "No spam");
    const rules = await anon.get("/api/v1/instance/rules");
    expect(rules.body).toEqual([{ id: "5", text: "No spam", hint: "", translations: {} }]);

    const ext = await anon.get("/api/v1/instance/extended_description");
    expect(ext.status).toBe(200);
    expect(ext.body).toEqual({ updated_at: null, content: "" });

    const pp = await anon.get("/api/v1/instance/privacy_policy");
    expect(pp.status).toBe(200);
    expect(pp.body.content).toContain("Privacy Policy");
    expect(typeof pp.body.updated_at).toBe("string");

    expect((await anon.get("/api/v1/instance/terms_of_service")).status).toBe(404);
    await env.DB.prepare(
      "INSERT INTO instance_settings (key, value) VALUES ('site_terms_of_service', '<p>Terms</p>'), ('site_extended_description', '<p>About</p>')",
    ).run();
    const tos = await anon.get("/api/v1/instance/terms_of_service");
    expect(tos.status).toBe(200);
    expect(tos.body).toMatchObject({ effective: true, content: "<p>Terms</p>", succeeded_by: null });
    // Mastodon 4.4's version by date: the one kept, at its effective date; any other date is a 404.
    expect((await anon.get(`/api/v1/instance/terms_of_service/${tos.body.effective_date}`)).body).toEqual(tos.body);
    expect((await anon.get("/api/v1/instance/terms_of_service/1999-01-01")).status).toBe(404);
    expect((await anon.get("/api/v1/instance/terms_of_service/not-a-date")).status).toBe(404);
    expect((await anon.get("/api/v1/instance/extended_description")).body.content).toBe("<p>About</p>");

    const langs = await anon.get("/api/v1/instance/languages");
    expect(langs.body).toContainEqual({ code: "en", name: "English" });
    expect((await anon.get("/api/v1/instance/translation_languages")).body).toEqual({});
  });

  it("lists user-facing domain blocks with digest, obfuscated when asked, and hides them when disabled", async () => {
    const ins = (id: string, domain: string, severity: string, obfuscate: number) =>
      env.DB.prepare("INSERT INTO domain_blocks (id, domain, severity, obfuscate, public_comment, created_at) VALUES (?, ?, ?, ?, 'spam', 0)")
        .bind(id.padStart(20, "0"), domain, severity, obfuscate)
        .run();
    await ins("1", "bad.example", "suspend", 0);
    await ins("2", "secret-place.example", "silence", 1);
    await ins("3", "noop.example", "noop", 0);
    const res = await anon.get("/api/v1/instance/domain_blocks");
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    const bad = res.body.find((b: any) => b.domain === "bad.example");
    expect(bad.severity).toBe("suspend");
    expect(bad.comment).toBe("spam");
    expect(bad.digest).toMatch(/^[0-9a-f]{64}$/);
    const hidden = res.body.find((b: any) => b.domain !== "bad.example");
    expect(hidden.domain).toContain("*");
    expect(hidden.domain).not.toBe("secret-place.example");

    await env.DB.prepare("INSERT INTO instance_settings (key, value) VALUES ('show_domain_blocks', 'disabled')").run();
    expect((await anon.get("/api/v1/instance/domain_blocks")).status).toBe(404);
  });

  it("lists enabled local custom emojis", async () => {
    await env.DB.prepare(
      "INSERT INTO custom_emojis (id, shortcode, domain, image_key, visible_in_picker, disabled, created_at) VALUES ('00000000000000000001', 'blob', NULL, 'emoji/blob.png', 1, 0, 0), ('00000000000000000002', 'off', NULL, 'emoji/off.png', 1, 1, 0), ('00000000000000000003', 'far', 'x.example', 'emoji/far.png', 1, 0, 0)",
    ).run();
    const res = await anon.get("/api/v1/custom_emojis");
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { shortcode: "blob", url: `${ORIGIN}/media/emoji/blob.png`, static_url: `${ORIGIN}/media/emoji/blob.png`, visible_in_picker: true, category: null },
    ]);
  });

  it("answers signed-in requests too (a valid token does not change the document)", async () => {
    const u = await makeUser();
    const res = await api(u.token).get("/api/v2/instance");
    expect(res.status).toBe(200);
    instanceV2.parse(res.body);
  });
});
