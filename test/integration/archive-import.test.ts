// Importing an account archive (issue 33): a zip as Mastodon's BackupService writes it is uploaded by the account that
// moved from it, worked through by the JOBS consumer's own code in bounded rounds, and the profile then shows every post
// at its date with its media, threads, poll and visibility; nobody is notified, nothing is federated or fetched, no home
// feed gets a row. A second upload imports nothing twice. Bad uploads are refused whole, with nothing stored.
import { SELF, env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { fetchMock } from "../support/fetch-mock";
import { ALICE, BLURHASH, MEDIA_PATH, actorJson, mastodonArchive, outboxItems, outboxJson, zipOf } from "./archive-fixtures";
import { ORIGIN, makeUser, type TestUser } from "./helpers";
import { png } from "./media-fixtures";
import { note, remoteActor, serveJson } from "./federation-inbox-fixtures";
import { hidden, signIn } from "./oauth-helpers";
import { queued, runQueuedJobs, unpack } from "./queues";

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});

const enc = new TextEncoder();

async function uploadArchive(u: TestUser, bytes: Uint8Array, query = "") {
  const res = await SELF.fetch(`${ORIGIN}/api/tern/archive_imports${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${u.token}`, "content-type": "application/zip", "content-length": String(bytes.length) },
    body: bytes,
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function count(sql: string, ...binds: unknown[]): Promise<number> {
  return (await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>())!.n;
}

const pad = (id: string) => id.padStart(20, "0");

async function addAlias(u: TestUser, uri = ALICE) {
  await env.DB.prepare("INSERT INTO account_aliases (id, account_id, acct, uri, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(pad(String(Date.now())), pad(u.id), "alice@old.example", uri, Date.now())
    .run();
}

/** A fresh account that moved from alice@old.example, and a local post by someone else for the boost, like and bookmark. */
async function setup() {
  const bob = await makeUser();
  const post = await bob.api.post("/api/v1/statuses", { status: "bob's post" });
  await runQueuedJobs();
  const me = await makeUser();
  await addAlias(me);
  const archive = await mastodonArchive({ localUri: post.body.uri, localAuthor: `${ORIGIN}/users/${bob.username}`, png: await png(8, 8) });
  return { bob, post: post.body, me, archive };
}

async function allStatuses(u: TestUser) {
  const r = await u.api.get(`/api/v1/accounts/${u.id}/statuses?limit=40`);
  expect(r.status).toBe(200);
  return r.body as any[];
}

describe("importing a Mastodon archive", () => {
  it("brings every post at its date with media, threads, poll and visibility, and tells nobody", async () => {
    const { bob, post, me, archive } = await setup();
    queued.jobs.length = 0;
    const res = await uploadArchive(me, archive);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ state: "in_progress", phase: "split", kind: "zip", actor: ALICE });
    const rounds = await runQueuedJobs();
    expect(rounds).toBeGreaterThan(3);
    const done = (await me.api.get(`/api/tern/archive_imports/${res.body.id}`)).body;
    expect(done).toMatchObject({ state: "finished", phase: "done", total_items: 13, processed_items: 13, failed_items: 0 });
    // 8 statuses + 1 boost + 1 like + 1 bookmark; the unknown boost and the unknown like skipped
    expect(done.imported_items).toBe(11);
    expect(done.skipped_items).toBe(2);
    expect(done.rows_written).toBeGreaterThan(0);

    const list = await allStatuses(me);
    const byText = (t: string) => list.find((s) => (s.content as string).includes(t));
    expect(list).toHaveLength(9);
    // newest first, at their original dates
    expect(list.map((s) => s.created_at)).toEqual([...list.map((s) => s.created_at)].sort().reverse());
    const first = byText("Hello")!;
    expect(first.created_at).toBe("2019-03-01T10:00:00.000Z");
    expect(first.visibility).toBe("public");
    expect(first.tags.map((t: any) => t.name)).toEqual(["hello"]);
    expect(first.media_attachments).toHaveLength(1);
    expect(first.media_attachments[0]).toMatchObject({ type: "image", description: "A blue square", blurhash: BLURHASH });
    expect(first.media_attachments[0].meta.focus).toEqual({ x: 0.5, y: -0.25 });
    const media = await SELF.fetch(first.media_attachments[0].url);
    expect(media.status).toBe(200);
    expect((await media.arrayBuffer()).byteLength).toBeGreaterThan(0);
    // BigInt order of ids follows the dates (snowflakes made from `published`)
    expect(BigInt(first.id) >> 16n).toBe(BigInt(Date.parse("2019-03-01T10:00:00Z")));

    const second = byText("reply to myself")!;
    const third = byText("and another")!;
    expect(second.in_reply_to_id).toBe(first.id);
    expect(third.in_reply_to_id).toBe(second.id);
    const ctx = await me.api.get(`/api/v1/statuses/${third.id}/context`);
    expect(ctx.body.ancestors.map((s: any) => s.id)).toEqual([first.id, second.id]);

    const poll = byText("Tea or coffee")!.poll;
    // voters_count is null for a single-choice poll, as Mastodon shows it
    expect(poll).toMatchObject({ expired: true, multiple: false, votes_count: 8, voters_count: null });
    expect(poll.options).toEqual([
      { title: "Tea", votes_count: 3 },
      { title: "Coffee", votes_count: 5 },
    ]);

    expect(byText("a secret")!.visibility).toBe("direct");
    expect(byText("a secret")!.mentions).toEqual([]);
    expect(byText("a secret")!.content).toContain('href="https://else.example/@bob"');
    expect(byText("for followers only")!.visibility).toBe("private");
    const cw = byText("Ein Geheimnis")!;
    expect(cw).toMatchObject({ visibility: "unlisted", spoiler_text: "spoilers", sensitive: true, language: "de" });
    expect(byText("replying to bob")!.in_reply_to_id).toBeNull();

    const boost = list.find((s) => s.reblog)!;
    expect(boost.reblog.id).toBe(post.id);
    expect(boost.created_at).toBe("2019-07-01T08:00:00.000Z");
    expect((await me.api.get("/api/v1/favourites")).body.map((s: any) => s.id)).toEqual([post.id]);
    expect((await me.api.get("/api/v1/bookmarks")).body.map((s: any) => s.id)).toEqual([post.id]);

    // Nobody hears of it: no notification, no delivery, no fan-out, nothing in any home feed, no fetch.
    expect(await count("SELECT count(*) AS n FROM notifications")).toBe(0);
    expect(queued.deliveries).toHaveLength(0);
    expect(await count("SELECT count(*) AS n FROM home_feed WHERE author_id = ?", pad(me.id))).toBe(0);
    expect(await count("SELECT count(*) AS n FROM mentions")).toBe(0);
    expect((await bob.api.get("/api/v1/notifications")).body).toEqual([]);
    // The direct message is the author's alone.
    expect((await bob.api.get(`/api/v1/statuses/${byText("a secret")!.id}`)).status).toBe(404);
    expect((await bob.api.get(`/api/v1/statuses/${byText("for followers only")!.id}`)).status).toBe(404);
    // The upload and its parts are gone from R2.
    expect((await env.MEDIA.list({ prefix: `archive_imports/${res.body.id}/` })).objects).toHaveLength(0);
  });

  it("imports nothing twice when the same archive comes again", async () => {
    const { me, archive } = await setup();
    await uploadArchive(me, archive);
    await runQueuedJobs();
    const before = await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(me.id));
    const again = await uploadArchive(me, archive);
    expect(again.status).toBe(202);
    await runQueuedJobs();
    const done = (await me.api.get(`/api/tern/archive_imports/${again.body.id}`)).body;
    expect(done).toMatchObject({ state: "finished", total_items: 13 });
    expect(done.imported_items).toBe(2); // the like and the bookmark are set again (INSERT OR IGNORE: no new row)
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(me.id))).toBe(before);
    expect(await count("SELECT count(*) AS n FROM media_attachments WHERE account_id = ?", pad(me.id))).toBe(1);
    expect(await count("SELECT count(*) AS n FROM favourites WHERE account_id = ?", pad(me.id))).toBe(1);
  });

  it("takes the name, bio, fields, avatar and header from actor.json when asked, and only then", async () => {
    const { me, archive } = await setup();
    await uploadArchive(me, archive);
    await runQueuedJobs();
    const before = (await me.api.get("/api/v1/accounts/verify_credentials")).body;
    expect(before.display_name).not.toBe("Alice Old");

    const again = await uploadArchive(me, archive, "?take_profile=true");
    expect(again.body.take_profile).toBe(true);
    await runQueuedJobs();
    expect((await me.api.get(`/api/tern/archive_imports/${again.body.id}`)).body).toMatchObject({ state: "finished", phase: "done" });
    const after = (await me.api.get("/api/v1/accounts/verify_credentials")).body;
    expect(after.display_name).toBe("Alice Old");
    expect(after.note).toContain("My old bio");
    expect(after.fields).toMatchObject([{ name: "Site", value: expect.stringContaining("alice.example") }]);
    expect(after.avatar).not.toBe(before.avatar);
    expect(after.header).not.toBe(before.header);
    expect((await SELF.fetch(after.avatar)).status).toBe(200);
  });

  it("takes an archive larger than one request in parts (R2 multipart), and refuses a bad one with nothing left", async () => {
    const { me, post } = await setup();
    const pngBytes = await png(8, 8);
    const base = { localUri: post.uri, localAuthor: post.account.url, png: pngBytes };
    const big = async (actor?: string) =>
      zipOf([
        { name: "outbox.json", data: enc.encode(outboxJson(outboxItems(base))) },
        { name: MEDIA_PATH, data: pngBytes },
        { name: "media_attachments/files/padding.bin", data: new Uint8Array(6 * 1024 * 1024).fill(7), store: true },
        { name: "actor.json", data: enc.encode(actorJson(actor)) },
      ]);
    const send = async (bytes: Uint8Array) => {
      const begun = await me.api.post("/api/tern/archive_imports/uploads", { filename: "big.zip" });
      expect(begun.status).toBe(201);
      expect(begun.body.state).toBe("uploading");
      const parts = [];
      const size = 5 * 1024 * 1024;
      for (let n = 1, at = 0; at < bytes.length; n++, at += size) {
        const chunk = bytes.slice(at, at + size);
        const res = await SELF.fetch(`${ORIGIN}/api/tern/archive_imports/uploads/${begun.body.id}/parts/${n}`, {
          method: "PUT",
          headers: { authorization: `Bearer ${me.token}`, "content-length": String(chunk.length) },
          body: chunk,
        });
        expect(res.status).toBe(200);
        parts.push(await res.json());
      }
      expect(parts).toHaveLength(2);
      return { id: begun.body.id as string, done: await me.api.post(`/api/tern/archive_imports/uploads/${begun.body.id}/complete`, { parts }) };
    };
    const ok = await send(await big());
    expect(ok.done.status, JSON.stringify(ok.done.body)).toBe(202);
    expect(ok.done.body).toMatchObject({ state: "in_progress", kind: "zip", original_filename: "big.zip", actor: ALICE });
    await runQueuedJobs();
    expect((await me.api.get(`/api/tern/archive_imports/${ok.id}`)).body).toMatchObject({ state: "finished", imported_items: 9 }); // no likes.json, bookmarks.json here
    expect(await allStatuses(me)).toHaveLength(9);

    const bad = await send(await big("https://else.example/users/mallory"));
    expect(bad.done.status).toBe(422);
    expect(bad.done.body.error).toMatch(/another account/);
    expect((await me.api.get(`/api/tern/archive_imports/${bad.id}`)).status).toBe(404);
    expect((await env.MEDIA.list({ prefix: `archive_imports/${bad.id}/` })).objects).toHaveLength(0);
  });

  it("links a reply to another server's post when its context is opened (the parent fetched then, not during the import)", async () => {
    const { me, archive } = await setup();
    await uploadArchive(me, archive);
    await runQueuedJobs();
    const reply = (await allStatuses(me)).find((s) => s.content.includes("replying to bob"))!;
    expect(reply.in_reply_to_id).toBeNull();
    const bob = await remoteActor("bob", "else.example");
    serveJson("else.example", "/users/bob/statuses/77", note(bob, { id: "https://else.example/users/bob/statuses/77", content: "<p>bob asks</p>" }));
    const ctx = await me.api.get(`/api/v1/statuses/${reply.id}/context`);
    expect(ctx.status).toBe(200);
    expect(ctx.body.ancestors.map((s: any) => s.uri)).toEqual(["https://else.example/users/bob/statuses/77"]);
    const after = (await me.api.get(`/api/v1/statuses/${reply.id}`)).body;
    expect(after.in_reply_to_id).toBe(ctx.body.ancestors[0].id);
    expect(await count("SELECT count(*) AS n FROM archive_import_items WHERE in_reply_to_uri IS NOT NULL")).toBe(0);
    // nobody was notified of the reply, on either side
    expect(await count("SELECT count(*) AS n FROM notifications")).toBe(0);
    expect(queued.deliveries).toHaveLength(0);
  });

  it("threads a reply that comes before its parent in the file", async () => {
    const me = await makeUser();
    await addAlias(me);
    const items = outboxItems({ localUri: "https://gone.example/x", localAuthor: "https://gone.example/u", png: new Uint8Array() }).slice(0, 3).reverse();
    const res = await uploadArchive(me, await zipOf([{ name: "outbox.json", data: enc.encode(outboxJson(items)) }]));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await runQueuedJobs();
    const list = await allStatuses(me);
    const [third, second, first] = list;
    expect(second.in_reply_to_id).toBe(first.id);
    expect(third.in_reply_to_id).toBe(second.id);
    expect([first.replies_count, second.replies_count, third.replies_count]).toEqual([1, 1, 0]);
    // the post with an image came without it (its file was not in this zip)
    expect(first.media_attachments).toEqual([]);
  });

  it("takes an outbox.json alone", async () => {
    const me = await makeUser();
    await addAlias(me);
    const items = outboxItems({ localUri: "https://gone.example/x", localAuthor: "https://gone.example/u", png: new Uint8Array() });
    const res = await uploadArchive(me, enc.encode(outboxJson(items)), "?filename=outbox.json");
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ kind: "outbox", original_filename: "outbox.json" });
    await runQueuedJobs();
    const done = (await me.api.get(`/api/tern/archive_imports/${res.body.id}`)).body;
    expect(done).toMatchObject({ state: "finished", total_items: 10, imported_items: 8, skipped_items: 2 });
  });

  it("reads an outbox as Mastodon 4.0 wrote it (orderedItems twice, the first empty)", async () => {
    const me = await makeUser();
    await addAlias(me);
    const items = outboxItems({ localUri: "https://gone.example/x", localAuthor: "https://gone.example/u", png: new Uint8Array() });
    const res = await uploadArchive(me, await zipOf([{ name: "outbox.json", data: enc.encode(outboxJson(items, { emptyFirst: true })) }]));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await runQueuedJobs();
    const done = (await me.api.get(`/api/tern/archive_imports/${res.body.id}`)).body;
    expect(done).toMatchObject({ state: "finished", total_items: 10, imported_items: 8, skipped_items: 2 });
    expect((await allStatuses(me)).length).toBeGreaterThan(0);
  });

  it("reads Tern's own archive back (Tern to Tern)", async () => {
    const a = await makeUser();
    const p1 = await a.api.post("/api/v1/statuses", { status: "first #tern", visibility: "public" });
    await a.api.post("/api/v1/statuses", { status: "a reply", in_reply_to_id: p1.body.id });
    await a.api.post("/api/v1/statuses", { status: "private one", visibility: "private" });
    expect((await a.api.post("/api/tern/exports/archive")).status).toBe(202);
    await runQueuedJobs();
    const zip = await SELF.fetch(`${ORIGIN}/api/tern/exports/archive.zip`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(zip.status).toBe(200);
    const bytes = new Uint8Array(await zip.arrayBuffer());

    const b = await makeUser();
    await addAlias(b, `${ORIGIN}/users/${a.username}`);
    const res = await uploadArchive(b, bytes);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await runQueuedJobs();
    const done = (await b.api.get(`/api/tern/archive_imports/${res.body.id}`)).body;
    expect(done).toMatchObject({ state: "finished", imported_items: 3, failed_items: 0 });
    const list = await allStatuses(b);
    expect(list.map((s) => s.visibility).sort()).toEqual(["private", "public", "public"]);
    const reply = list.find((s) => s.content.includes("a reply"));
    const first = list.find((s) => s.content.includes("first"));
    expect(reply.in_reply_to_id).toBe(first.id);
    expect(first.tags.map((t: any) => t.name)).toEqual(["tern"]);
  });
});

describe("the settings page", () => {
  it("uploads with the session's CSRF token, shows the progress, and refuses a bad file with the reason", async () => {
    const { me, archive } = await setup();
    const jar = await signIn(`${me.username}@example.com`);
    const get = async () => (await SELF.fetch(`${ORIGIN}/settings/import_archive`, { headers: { cookie: jar.header() } })).text();
    const html = await get();
    expect(html).toContain('<a href="/settings/imports" aria-current="page">Import</a>');
    const post = (csrf: string, data: Uint8Array, name = "archive-20261128.zip") => {
      const form = new FormData();
      form.append("csrf", csrf);
      form.append("take_profile", "0");
      form.append("data", new File([data], name));
      return SELF.fetch(`${ORIGIN}/settings/import_archive`, {
        method: "POST",
        body: form,
        headers: { cookie: jar.header(), origin: ORIGIN },
        redirect: "manual",
      });
    };
    expect((await post("forged", archive)).status).toBe(403);
    const csrf = hidden(html, "csrf")!;
    const ok = await post(csrf, archive);
    expect(ok.status).toBe(303);
    expect(await get()).toMatch(/archive-20261128\.zip<\/strong>.*In progress · Reading the archive.*<td>0 of 0<\/td>/s);
    await runQueuedJobs();
    expect(await get()).toMatch(/archive-20261128\.zip<\/strong>.*Finished.*<td>13 of 13<\/td><td>11<\/td><td>2<\/td><td>0<\/td>/s);
    const bad = await post(csrf, enc.encode("not an archive"), "x.zip");
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("File is not a readable archive");
  });
});

describe("the settings page's upload in parts (its script's routes)", () => {
  it("begins, takes the parts and completes with the session and the CSRF token in a header; a forged token is refused", async () => {
    const { me } = await setup();
    const jar = await signIn(`${me.username}@example.com`);
    const pageRes = await SELF.fetch(`${ORIGIN}/settings/import_archive`, { headers: { cookie: jar.header() } });
    const html = await pageRes.text();
    const csrf = hidden(html, "csrf")!;
    // The page's one script runs under its nonce, and may call this server only.
    const nonce = /<script nonce="([^"]+)">/.exec(html)?.[1];
    expect(nonce).toBeTruthy();
    expect(pageRes.headers.get("content-security-policy")).toContain(`script-src 'nonce-${nonce}'`);
    expect(pageRes.headers.get("content-security-policy")).toContain("connect-src 'self'");
    const call = (method: string, path: string, token: string, body?: BodyInit, type?: string) =>
      SELF.fetch(`${ORIGIN}${path}`, {
        method,
        body,
        headers: { cookie: jar.header(), origin: ORIGIN, "x-csrf-token": token, ...(type ? { "content-type": type } : {}) },
      });
    expect((await call("POST", "/settings/import_archive/uploads", "forged", JSON.stringify({ filename: "a.zip" }), "application/json")).status).toBe(403);
    expect(await count("SELECT count(*) AS n FROM archive_imports")).toBe(0);
    const begun = await call("POST", "/settings/import_archive/uploads", csrf, JSON.stringify({ filename: "big.zip" }), "application/json");
    expect(begun.status).toBe(201);
    const id = ((await begun.json()) as { id: string }).id;
    const pngBytes = await png(8, 8);
    const bytes = await zipOf([
      {
        name: "outbox.json",
        data: enc.encode(outboxJson(outboxItems({ localUri: "https://x.example/1", localAuthor: "https://x.example/u", png: pngBytes }))),
      },
      { name: MEDIA_PATH, data: pngBytes },
      { name: "media_attachments/files/padding.bin", data: new Uint8Array(6 * 1024 * 1024).fill(7), store: true },
    ]);
    const size = 5 * 1024 * 1024;
    const parts = [];
    for (let n = 1, at = 0; at < bytes.length; n++, at += size) {
      expect((await call("PUT", `/settings/import_archive/uploads/${id}/parts/${n}`, "forged", bytes.slice(at, at + size))).status).toBe(403);
      const res = await call("PUT", `/settings/import_archive/uploads/${id}/parts/${n}`, csrf, bytes.slice(at, at + size));
      expect(res.status).toBe(200);
      parts.push(await res.json());
    }
    const done = await call("POST", `/settings/import_archive/uploads/${id}/complete`, csrf, JSON.stringify({ parts }), "application/json");
    expect(done.status).toBe(202);
    await runQueuedJobs();
    expect((await me.api.get(`/api/tern/archive_imports/${id}`)).body).toMatchObject({ state: "finished", original_filename: "big.zip" });
    // A second upload given up: gone.
    const other = (
      (await (await call("POST", "/settings/import_archive/uploads", csrf, JSON.stringify({ filename: "b.zip" }), "application/json")).json()) as { id: string }
    ).id;
    expect((await call("DELETE", `/settings/import_archive/uploads/${other}`, csrf)).status).toBe(200);
    expect((await me.api.get(`/api/tern/archive_imports/${other}`)).status).toBe(404);
  });
});

describe("bad uploads are refused whole, with nothing stored", () => {
  async function nothingStored(me: TestUser) {
    expect(await count("SELECT count(*) AS n FROM archive_imports")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(me.id))).toBe(0);
    expect((await env.MEDIA.list({ prefix: "archive_imports/" })).objects).toHaveLength(0);
    expect(queued.jobs.flatMap(unpack).filter((e) => e.type === "import_archive")).toHaveLength(0);
  }

  it("an archive of another account", async () => {
    const me = await makeUser();
    const res = await uploadArchive(me, await mastodonArchive({ localUri: "https://x.example/1", localAuthor: "https://x.example/u", png: await png(8, 8) }));
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/another account/);
    await nothingStored(me);
  });

  it("a corrupt zip, a truncated one, and JSON that is not an archive", async () => {
    const me = await makeUser();
    await addAlias(me);
    const good = await mastodonArchive({ localUri: "https://x.example/1", localAuthor: "https://x.example/u", png: await png(8, 8) });
    for (const bad of [
      good.slice(0, good.length - 30),
      Uint8Array.from([0x50, 0x4b, 3, 4, 1, 2, 3, 4, 5, 6]),
      enc.encode('{"orderedItems": ['),
      enc.encode("[1,2,3]"),
    ]) {
      const res = await uploadArchive(me, bad);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.error).toMatch(/Validation failed/);
    }
    // corrupt deflate data or a CRC that does not match is found at the split: the import fails at once (no retries),
    // nothing is imported, its files are gone, and it cannot be resumed
    for (const offset of [10, 200]) {
      const flipped = good.slice();
      const at = 30 + "outbox.json".length + offset;
      flipped[at] = (flipped[at] ?? 0) ^ 0xff;
      const res = await uploadArchive(me, flipped);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      await runQueuedJobs();
      const row = (await me.api.get(`/api/tern/archive_imports/${res.body.id}`)).body;
      expect(row).toMatchObject({ state: "failed", phase: "done", imported_items: 0 });
      expect(row.error).toMatch(/The archive cannot be read: corrupt zip file/);
      expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(me.id))).toBe(0);
      expect((await env.MEDIA.list({ prefix: `archive_imports/${res.body.id}/` })).objects).toEqual([]);
      expect((await me.api.post(`/api/tern/archive_imports/${res.body.id}/resume`)).status).toBe(422);
    }
  });

  it("path traversal in an entry name", async () => {
    const me = await makeUser();
    await addAlias(me);
    for (const name of ["../evil.json", "/etc/passwd", "media_attachments/../../x", "C:/x", "a\\..\\b"]) {
      const zip = await zipOf([
        { name: "outbox.json", data: enc.encode(outboxJson([])) },
        { name: "actor.json", data: enc.encode(actorJson()) },
        { name, data: enc.encode("x") },
      ]);
      const res = await uploadArchive(me, zip);
      expect(res.status, name).toBe(422);
      expect(res.body.error).toMatch(/unsafe path/);
    }
    await nothingStored(me);
  });

  it("a zip bomb: a declared size far beyond its compressed size, or a lie about it", async () => {
    const me = await makeUser();
    await addAlias(me);
    const zeros = new Uint8Array(4 * 1024 * 1024); // deflates ~1000 times
    const bomb = await zipOf([
      { name: "outbox.json", data: enc.encode(outboxJson([])) },
      { name: "actor.json", data: enc.encode(actorJson()) },
      { name: "media_attachments/files/zeros.png", data: zeros },
    ]);
    const res = await uploadArchive(me, bomb);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/zip bomb/);
    // declared small, inflates to more: stopped at the declared size
    const liar = await zipOf(
      [
        {
          name: "outbox.json",
          data: enc.encode(outboxJson(outboxItems({ localUri: "https://x.example/1", localAuthor: "https://x.example/u", png: new Uint8Array() }))),
        },
        { name: "actor.json", data: enc.encode(actorJson()) },
      ],
      { declaredSize: (n, s) => (n === "outbox.json" ? 100 : s) },
    );
    const res2 = await uploadArchive(me, liar);
    if (res2.status === 202) {
      await runQueuedJobs();
      const row = (await me.api.get(`/api/tern/archive_imports/${res2.body.id}`)).body;
      expect(row).toMatchObject({ state: "failed", imported_items: 0 });
      expect(row.error).toMatch(/larger than declared/);
    } else expect(res2.status).toBe(422);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(me.id))).toBe(0);
  });

  it("an oversized upload is refused before it is read", async () => {
    const me = await makeUser();
    const res = await SELF.fetch(`${ORIGIN}/api/tern/archive_imports`, {
      method: "POST",
      headers: { authorization: `Bearer ${me.token}`, "content-type": "application/zip", "content-length": String(200 * 1024 * 1024) },
      body: new Uint8Array(10),
    });
    expect(res.status).toBe(413);
    await nothingStored(me);
  });

  it("takes full write scope", async () => {
    const me = await makeUser("scoped", { scopes: "read write:statuses" });
    await addAlias(me);
    const res = await uploadArchive(me, enc.encode(outboxJson([])));
    expect(res.status).toBe(403);
  });
});
