// Account imports: every CSV kind exported from one account and imported into a fresh one (merge) comes back the same;
// overwrite replaces what the file does not name; rows go through the JOBS queue at most 20 a job with progress
// reported; unknown remote accounts are failed rows; bad files are refused whole with nothing stored.
import { SELF, env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { csv, populate, remoteAccount } from "./export-fixtures";
import { ORIGIN, eventually, makeUser, type TestUser } from "./helpers";
import { type Jar, hidden, signIn } from "./oauth-helpers";
import { installQueueCapture, queued, runQueuedJobs } from "./queues";

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
beforeEach(() => installQueueCapture());

async function upload(u: TestUser, type: string, data: string | Uint8Array | null, mode = "merge", filename = "file.csv") {
  const form = new FormData();
  form.append("type", type);
  form.append("mode", mode);
  if (data !== null) form.append("data", new File([data], filename, { type: "text/csv" }));
  return u.api.post("/api/tern/imports", form, "multipart");
}

const KINDS: [string, string][] = [
  ["follows", "following"],
  ["blocks", "blocking"],
  ["mutes", "muting"],
  ["domain_blocks", "domain_blocking"],
  ["bookmarks", "bookmarks"],
  ["lists", "lists"],
];

/** Header (if any) then the rows sorted: an import applies rows in file order, so the new rows' order is reversed. */
const normal = (text: string) => {
  const lines = text.split("\n").filter(Boolean);
  const head = lines[0]?.startsWith("Account address,") ? [lines.shift()] : [];
  return [...head, ...lines.sort()];
};

async function finished(u: TestUser, id: string) {
  return eventually(async () => {
    const r = await u.api.get(`/api/tern/imports/${id}`);
    expect(r.body.state).toBe("finished");
    return r.body;
  });
}

async function count(table: string): Promise<number> {
  return (await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())!.n;
}

describe("export then import", () => {
  it("brings back every CSV kind into a fresh account (merge)", async () => {
    const a = await makeUser();
    await populate(a);
    const exported = new Map<string, string>();
    for (const [kind] of KINDS) exported.set(kind, (await csv(a, kind)).text);

    const f = await makeUser();
    for (const [kind, type] of KINDS) {
      const res = await upload(f, type, exported.get(kind)!);
      expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).toBe(202);
      expect(res.body).toMatchObject({ type, mode: "merge", state: "in_progress", processed_items: 0 });
      const done = await finished(f, res.body.id);
      expect(done, `${kind}: ${exported.get(kind)}`).toMatchObject({ failed_items: 0 });
      expect(done.processed_items).toBe(done.total_items);
    }
    for (const [kind] of KINDS) expect(normal((await csv(f, kind)).text), kind).toEqual(normal(exported.get(kind)!));
    expect(await count("bulk_import_rows")).toBe(0);
  });

  it("overwrite undoes what the file does not name", async () => {
    const f = await makeUser();
    const [b, x, y] = [await makeUser(), await makeUser(), await makeUser()];
    await f.api.post(`/api/v1/accounts/${x.id}/follow`);
    await f.api.post(`/api/v1/accounts/${y.id}/follow`);
    await f.api.post(`/api/v1/accounts/${x.id}/mute`);
    await f.api.post("/api/v1/domain_blocks", { domain: "old.example" });
    const old = await f.api.post("/api/v1/lists", { title: "Old" });
    await f.api.post(`/api/v1/lists/${old.body.id}/accounts`, { account_ids: [x.id] });
    const keep = await f.api.post("/api/v1/lists", { title: "Friends" });
    await f.api.post(`/api/v1/lists/${keep.body.id}/accounts`, { account_ids: [y.id] });
    const s = await x.api.post("/api/v1/statuses", { status: "old bookmark" });
    await f.api.post(`/api/v1/statuses/${s.body.id}/bookmark`);
    const s2 = await b.api.post("/api/v1/statuses", { status: "new bookmark" });

    const runs: [string, string, string][] = [
      [
        "following",
        "follows",
        `Account address,Show boosts,Notify on new posts,Languages\n${b.username}@tern.test,false,true,\n${y.username}@tern.test,true,false,\n`,
      ],
      ["muting", "mutes", `${b.username}\n`],
      ["domain_blocking", "domain_blocks", "new.example\n"],
      ["bookmarks", "bookmarks", `${s2.body.uri}\n`],
      ["lists", "lists", `Friends,${b.username}@tern.test\n`],
    ];
    for (const [type, , text] of runs) {
      const res = await upload(f, type, text, "overwrite");
      expect(res.status).toBe(202);
      await finished(f, res.body.id);
    }
    expect(normal((await csv(f, "follows")).text)).toEqual(normal(runs[0][2]));
    expect((await csv(f, "mutes")).text).toBe(`Account address,Hide notifications\n${b.username}@tern.test,true\n`);
    expect((await csv(f, "domain_blocks")).text).toBe("new.example\n");
    expect((await csv(f, "bookmarks")).text).toBe(`${s2.body.uri}\n`);
    // "Old" is gone, "Friends" was emptied and holds the file's member only.
    expect((await csv(f, "lists")).text).toBe(`Friends,${b.username}@tern.test\n`);
    expect((await f.api.get("/api/v1/lists")).body.map((l: any) => l.title)).toEqual(["Friends"]);
  });
});

describe("processing", () => {
  it("goes through the queue at most 20 rows a job, with progress; unknown accounts are failed rows", async () => {
    const f = await makeUser();
    const domains = Array.from({ length: 45 }, (_, i) => `d${i}.example`).join("\n");
    const res = await upload(f, "domain_blocking", `#domain\n${domains}\n`);
    expect(res.status).toBe(202);
    expect(res.body.total_items).toBe(45);
    expect(queued.jobs.length).toBe(1);
    await runQueuedJobs(1);
    const partway = await f.api.get(`/api/tern/imports/${res.body.id}`);
    expect(partway.body).toMatchObject({ state: "in_progress", total_items: 45, processed_items: 20, imported_items: 20 });
    const listed = await f.api.get("/api/tern/imports");
    expect(listed.body.map((i: any) => i.id)).toEqual([res.body.id]);
    expect(await finished(f, res.body.id)).toMatchObject({ processed_items: 45, imported_items: 45, failed_items: 0 });

    // One-column legacy file: a local account, a known remote one, one that cannot be fetched, and junk.
    const known = await remoteAccount("known", "far.example");
    const b = await makeUser();
    const legacy = await upload(f, "blocking", `@${b.username}\nknown@far.example\nghost@unreachable.example\nnot an address\n`);
    expect(legacy.status).toBe(202);
    expect(await finished(f, legacy.body.id)).toMatchObject({ total_items: 4, processed_items: 4, imported_items: 2, failed_items: 2 });
    const rel = await f.api.get(`/api/v1/accounts/relationships?id[]=${known}&id[]=${b.id}`);
    expect(rel.body.map((r: any) => r.blocking)).toEqual([true, true]);

    // Another account's import is not visible.
    const other = await makeUser();
    expect((await other.api.get(`/api/tern/imports/${res.body.id}`)).status).toBe(404);
  });

  it("the web form at /settings/imports uploads with the session's CSRF token and shows progress", async () => {
    const f = await makeUser();
    const jar: Jar = await signIn(`${f.username}@example.com`);
    const page = await SELF.fetch(`${ORIGIN}/settings/imports`, { headers: { cookie: jar.header() } });
    const html = await page.text();
    expect(page.status).toBe(200);
    const post = async (csrf: string) => {
      const form = new FormData();
      form.append("csrf", csrf);
      form.append("type", "domain_blocking");
      form.append("mode", "merge");
      form.append("data", new File(["web.example\n"], "blocked_domains.csv"));
      return SELF.fetch(`${ORIGIN}/settings/imports`, { method: "POST", body: form, headers: { cookie: jar.header(), origin: ORIGIN }, redirect: "manual" });
    };
    expect((await post("forged")).status).toBe(403);
    const ok = await post(hidden(html, "csrf")!);
    expect(ok.status).toBe(303);
    await eventually(async () => expect((await csv(f, "domain_blocks")).text).toBe("web.example\n"));
    const after = await (await SELF.fetch(`${ORIGIN}/settings/imports`, { headers: { cookie: jar.header() } })).text();
    expect(after).toMatch(
      /blocked_domains\.csv<\/strong><div class="muted">Domain blocking list · [^<]+ UTC<\/div><\/td><td>Merge<\/td><td>Finished<\/td><td>1 of 1<\/td><td>0<\/td>/,
    );
    // A settings page like the others: the settings navigation, this page marked.
    expect(after).toContain('<a href="/settings/imports" aria-current="page">Import</a>');
    expect(after).toContain('<option value="domain_blocking">Domain blocking list</option>');
  });

  it("keeps each failed row with why it failed, and the settings page lists them by their row in the file", async () => {
    const f = await makeUser();
    const b = await makeUser();
    const jar: Jar = await signIn(`${f.username}@example.com`);
    const file = `Account address\n@${b.username}\nghost@unreachable.example\nnot an address\n${b.username}@tern.test\n`;
    const res = await upload(f, "blocking", file, "merge", "blocks.csv");
    expect(await finished(f, res.body.id)).toMatchObject({ total_items: 4, processed_items: 4, imported_items: 2, failed_items: 2 });
    // Applied rows are gone; failed ones stay with their reason.
    const left = await env.DB.prepare("SELECT seq, error FROM bulk_import_rows ORDER BY seq").all<{ seq: number; error: string }>();
    expect(left.results).toEqual([
      { seq: 3, error: "the account was not found on its server" },
      { seq: 4, error: "not an account address (user@domain)" },
    ]);
    const page = await (await SELF.fetch(`${ORIGIN}/settings/imports`, { headers: { cookie: jar.header() } })).text();
    expect(page).toContain("Rows of blocks.csv (Blocking list) that failed");
    expect(page).toContain("<tr><td>3</td><td><code>ghost@unreachable.example</code></td><td>the account was not found on its server</td></tr>");
    expect(page).toContain("<tr><td>4</td><td><code>not an address</code></td><td>not an account address (user@domain)</td></tr>");
    expect(page).not.toContain(`<code>${b.username}</code>`);
  });
});

describe("bad files", () => {
  it("are refused whole with a clear 4xx, and nothing is stored", async () => {
    const f = await makeUser();
    const refused = async (type: string, data: string | Uint8Array | null, status: number, message: RegExp, mode = "merge") => {
      const res = await upload(f, type, data, mode);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error).toMatch(message);
    };
    await refused("domain_blocking", "Account address,Show boosts\nx@y.example,true\n", 422, /columns of a domain_blocking file/);
    await refused("lists", "List name\nFriends\n", 422, /columns of a lists file/);
    await refused("blocking", `${Array.from({ length: 20_001 }, (_, i) => `u${i}@x.example`).join("\n")}\n`, 422, /more than 20000 rows/);
    await refused("blocking", new Uint8Array([0xff, 0xfe, 0x41]), 422, /UTF-8/);
    await refused("blocking", "\n\n", 422, /empty/);
    await refused("blocking", '"unclosed\n', 422, /CSV/);
    // Malformed as Ruby's CSV (Mastodon's parser) finds it: the whole file is refused, with where.
    await refused("blocking", 'alice@a.example\nbo"b@b.example\ncarol@c.example\n', 422, /not a valid CSV file \(a quote inside an unquoted field on line 2\)/);
    await refused("blocking", '"alice@a.example"x\nbob@b.example\n', 422, /text after a closing quote on line 1/);
    await refused("blocking", 'alice@a.example\n"bob@b.example\ncarol@c.example\n', 422, /the quote opened on line 2 is never closed/);
    await refused("following", 'Account address,Show boosts\nalice@a.example,"true\nbob@b.example,true\n', 422, /never closed/);
    await refused("blocking", `${"x".repeat(3000)}\n`, 422, /over 2048 characters/);
    await refused("blocking", null, 422, /Data must be a CSV file/);
    await refused("everything", "a\n", 422, /Type must be one of/);
    await refused("blocking", "a@b.example\n", 422, /Mode must be/, "replace");
    await refused("blocking", new Uint8Array(20 * 1024 * 1024 + 1), 413, /too large/i);
    expect(await count("bulk_imports")).toBe(0);
    expect(await count("bulk_import_rows")).toBe(0);
    expect(queued.jobs.length).toBe(0);
    // An app token cannot import; a read-only token cannot either.
    const ro = await makeUser(undefined, { scopes: "read" });
    expect((await upload(ro, "blocking", "a@b.example\n")).status).toBe(403);
  });
});
