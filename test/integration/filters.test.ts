// Filters API: v2 (filters, keywords_attributes, keywords, status filters) and the legacy v1 shape; validation,
// ownership (B14), expiry, scopes, and ONE filters_changed effect per call.
import { beforeEach, describe, expect, it } from "vitest";
import type { JobMessage } from "../../src/effects/types";
import { anon, makeUser, type TestUser } from "./helpers";
import { insertStatus } from "./feeds-fixtures";
import { captureJobs } from "./statuses-fixtures";

let jobs: JobMessage[];
beforeEach(() => {
  jobs = captureJobs();
});

/** filters_changed effects recorded since the last call, for `who`; clears the record. */
function changes(who: TestUser): number {
  const n = jobs.filter((j) => j.type === "filters_changed" && j.accountId === who.id).length;
  jobs.length = 0;
  return n;
}

async function create(u: TestUser, body: Record<string, unknown>) {
  const res = await u.api.post("/api/v2/filters", body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe("v2 filters", { timeout: 60000 }, () => {
  it("creates a filter with keywords, lists and shows it, one change event", async () => {
    const u = await makeUser();
    jobs.length = 0;
    const f = await create(u, {
      title: "Spoilers",
      context: ["home", "public"],
      filter_action: "hide",
      keywords_attributes: [{ keyword: "spoiler", whole_word: true }, { keyword: "leak", whole_word: false }, { keyword: "plot" }],
    });
    expect(f).toEqual({
      id: expect.stringMatching(/^\d+$/),
      title: "Spoilers",
      context: ["home", "public"],
      expires_at: null,
      filter_action: "hide",
      keywords: [
        { id: expect.any(String), keyword: "spoiler", whole_word: true },
        { id: expect.any(String), keyword: "leak", whole_word: false },
        { id: expect.any(String), keyword: "plot", whole_word: true },
      ],
      statuses: [],
    });
    expect(changes(u)).toBe(1);
    expect((await u.api.get("/api/v2/filters")).body).toEqual([f]);
    expect((await u.api.get(`/api/v2/filters/${f.id}`)).body).toEqual(f);
    expect((await u.api.get(`/api/v2/filters/${f.id}/keywords`)).body).toEqual(f.keywords);
    expect(changes(u)).toBe(0);
    // blur (Mastodon 4.4) and the warn default
    expect((await create(u, { title: "b", context: ["thread"], filter_action: "blur" })).filter_action).toBe("blur");
    expect((await create(u, { title: "w", context: ["account"] })).filter_action).toBe("warn");
  });

  it("takes Rails form brackets: context[] and keywords_attributes[][...] grouped as Rack groups them", async () => {
    const u = await makeUser();
    const form = new URLSearchParams();
    form.append("title", "test");
    form.append("context[]", "public");
    form.append("context[]", " notifications ");
    form.append("keywords_attributes[][keyword]", "foo");
    form.append("keywords_attributes[][whole_word]", "false");
    form.append("keywords_attributes[][keyword]", "bar");
    form.append("keywords_attributes[][whole_word]", "true");
    const res = await u.api.post("/api/v2/filters", form, "form");
    expect(res.status).toBe(200);
    expect(res.body.context).toEqual(["public", "notifications"]);
    expect(res.body.keywords.map((k: any) => [k.keyword, k.whole_word])).toEqual([
      ["foo", false],
      ["bar", true],
    ]);
    // indexed form
    const idx = new URLSearchParams({
      title: "t2",
      "context[]": "home",
      "keywords_attributes[0][keyword]": "x",
      "keywords_attributes[1][keyword]": "y",
      "keywords_attributes[1][whole_word]": "0",
    });
    const r2 = await u.api.post("/api/v2/filters", idx, "form");
    expect(r2.body.keywords.map((k: any) => [k.keyword, k.whole_word])).toEqual([
      ["x", true],
      ["y", false],
    ]);
  });

  it("edits, destroys and adds keywords in one PUT, with one change event", async () => {
    const u = await makeUser();
    const f = await create(u, {
      title: "t",
      context: ["home"],
      keywords_attributes: [{ keyword: "foo" }, { keyword: "bar", whole_word: false }, { keyword: "baz" }],
    });
    const [foo, bar, baz] = f.keywords;
    jobs.length = 0;
    const res = await u.api.put(`/api/v2/filters/${f.id}`, {
      title: "renamed",
      context: ["home", "thread"],
      filter_action: "warn",
      keywords_attributes: [
        { id: foo.id, _destroy: true },
        { id: bar.id, keyword: "bar2", whole_word: true },
        { keyword: "new", whole_word: false },
        { keyword: "", _destroy: true }, // nothing to attach
        {}, // all blank: skipped
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: f.id, title: "renamed", context: ["home", "thread"] });
    expect(res.body.keywords.map((k: any) => [k.id === bar.id || k.id === baz.id ? k.id : "new", k.keyword, k.whole_word])).toEqual([
      [bar.id, "bar2", true],
      [baz.id, "baz", true],
      ["new", "new", false],
    ]);
    expect(changes(u)).toBe(1);
    expect((await u.api.get(`/api/v2/filters/${f.id}`)).body).toEqual(res.body);
    // Mastodon's documented call: brackets in the query string
    const q = await u.api.put(
      `/api/v2/filters/${f.id}?keywords_attributes[][id]=${baz.id}&keywords_attributes[][_destroy]=true&keywords_attributes[][id]=${bar.id}&keywords_attributes[][keyword]=baz`,
    );
    expect(q.status).toBe(200);
    expect(q.body.keywords.map((k: any) => [k.keyword, k.whole_word])).toEqual([
      ["baz", true],
      ["new", false],
    ]);
    expect(changes(u)).toBe(1);
    // PATCH behaves like PUT; a partial update keeps what it does not name
    const p = await u.api.patch(`/api/v2/filters/${f.id}`, { filter_action: "blur" });
    expect(p.body).toMatchObject({ title: "renamed", context: ["home", "thread"], filter_action: "blur", keywords: q.body.keywords });
    expect(changes(u)).toBe(1);
  });

  it("answers 404 for a keyword id that is not the filter's, and writes nothing", async () => {
    const u = await makeUser();
    const f1 = await create(u, { title: "a", context: ["home"], keywords_attributes: [{ keyword: "one" }] });
    const f2 = await create(u, { title: "b", context: ["home"], keywords_attributes: [{ keyword: "two" }] });
    jobs.length = 0;
    const res = await u.api.put(`/api/v2/filters/${f1.id}`, {
      title: "changed",
      keywords_attributes: [{ keyword: "added" }, { id: f2.keywords[0].id, keyword: "stolen" }],
    });
    expect(res.status).toBe(404);
    expect((await u.api.get(`/api/v2/filters/${f1.id}`)).body).toEqual(f1);
    expect((await u.api.get(`/api/v2/filters/${f2.id}`)).body).toEqual(f2);
    // on create, naming a keyword id is a 404 too (Mastodon)
    expect(
      (await u.api.post("/api/v2/filters", { title: "c", context: ["home"], keywords_attributes: [{ id: f1.keywords[0].id, keyword: "x" }] })).status,
    ).toBe(404);
    expect(changes(u)).toBe(0);
  });

  it("validates with 422s and records nothing", async () => {
    const u = await makeUser();
    jobs.length = 0;
    const err = async (body: Record<string, unknown>) => {
      const r = await u.api.post("/api/v2/filters", body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      return r.body.error as string;
    };
    expect(await err({ context: ["home"] })).toBe("Validation failed: Title can't be blank");
    expect(await err({ title: "   ", context: ["home"] })).toBe("Validation failed: Title can't be blank");
    expect(await err({ title: "x" })).toBe("Validation failed: Context can't be blank, Context None or invalid context supplied");
    expect(await err({ title: "x", context: [" "] })).toBe("Validation failed: Context can't be blank, Context None or invalid context supplied");
    expect(await err({ title: "x", context: ["home", "timeline"] })).toBe("Validation failed: Context None or invalid context supplied");
    expect(await err({})).toBe("Validation failed: Title can't be blank, Context can't be blank, Context None or invalid context supplied");
    expect(await err({ title: "x", context: ["home"], filter_action: "delete" })).toBe("Validation failed: Action is not included in the list");
    expect(await err({ title: "x", context: ["home"], keywords_attributes: [{ keyword: " ", whole_word: true }] })).toBe(
      "Validation failed: Keywords keyword can't be blank",
    );
    expect(await err({ title: "x".repeat(257), context: ["home"] })).toBe("Validation failed: Title is too long (maximum is 256 characters)");
    expect(await err({ title: "x", context: ["home"], keywords_attributes: [{ keyword: "k".repeat(513) }] })).toContain("too long (maximum is 512 characters)");
    await err({ title: "x".repeat(100_001), context: ["home"] }); // A22
    await err({ title: ["a", "b"], context: ["home"] }); // A13
    await err({ title: "x", context: { $gt: "" } });
    await err({ title: "x", context: ["home"], expires_in: "soon" });
    await err({ title: "x", context: ["home"], keywords_attributes: ["word"] });
    expect((await create(u, { title: "é".repeat(256), context: ["home"] })).title).toHaveLength(256);
    jobs.length = 0;
    const f = await create(u, { title: "ok", context: ["home"] });
    jobs.length = 0;
    expect((await u.api.put(`/api/v2/filters/${f.id}`, { title: "" })).status).toBe(422);
    expect((await u.api.put(`/api/v2/filters/${f.id}`, { context: [] })).status).toBe(422);
    expect((await u.api.put(`/api/v2/filters/${f.id}`, { filter_action: "nope" })).status).toBe(422);
    expect((await u.api.put(`/api/v2/filters/${f.id}`, { keywords_attributes: [{ whole_word: true }] })).body.error).toBe(
      "Validation failed: Keywords keyword can't be blank",
    );
    expect(changes(u)).toBe(0);
    expect((await u.api.get(`/api/v2/filters/${f.id}`)).body).toEqual(f);
  });

  it("sets expires_at from expires_in, and clears it with an empty value", async () => {
    const u = await makeUser();
    const before = Date.now();
    const f = await create(u, { title: "t", context: ["home"], expires_in: 3600 });
    const at = Date.parse(f.expires_at);
    expect(f.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(at).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    const form = await u.api.put(`/api/v2/filters/${f.id}`, new URLSearchParams({ expires_in: "86400" }), "form");
    expect(Date.parse(form.body.expires_at)).toBeGreaterThan(at);
    expect((await u.api.put(`/api/v2/filters/${f.id}`, { title: "kept" })).body.expires_at).toBe(form.body.expires_at);
    expect((await u.api.put(`/api/v2/filters/${f.id}`, { expires_in: "" })).body.expires_at).toBeNull();
    const huge = await create(u, { title: "t", context: ["home"], expires_in: 99_999_999_999 });
    expect(Date.parse(huge.expires_at)).toBeGreaterThan(Date.now());
  });

  it("keyword routes: list, add, show, update, delete, each one change event", async () => {
    const u = await makeUser();
    const f = await create(u, { title: "t", context: ["home"] });
    jobs.length = 0;
    const add = await u.api.post(`/api/v2/filters/${f.id}/keywords`, { keyword: "some", whole_word: false });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({ id: expect.any(String), keyword: "some", whole_word: false });
    expect(changes(u)).toBe(1);
    expect((await u.api.get(`/api/v2/filters/keywords/${add.body.id}`)).body).toEqual(add.body);
    const upd = await u.api.put(`/api/v2/filters/keywords/${add.body.id}`, { keyword: "other" });
    expect(upd.body).toEqual({ id: add.body.id, keyword: "other", whole_word: false });
    expect(changes(u)).toBe(1);
    expect((await u.api.put(`/api/v2/filters/keywords/${add.body.id}`, { keyword: "" })).body.error).toBe("Validation failed: Keyword can't be blank");
    expect((await u.api.post(`/api/v2/filters/${f.id}/keywords`, {})).body.error).toBe("Validation failed: Keyword can't be blank");
    expect(changes(u)).toBe(0);
    expect((await u.api.get(`/api/v2/filters/${f.id}/keywords`)).body).toEqual([upd.body]);
    expect((await u.api.delete(`/api/v2/filters/keywords/${add.body.id}`)).body).toEqual({});
    expect(changes(u)).toBe(1);
    expect((await u.api.get(`/api/v2/filters/keywords/${add.body.id}`)).status).toBe(404);
    expect((await u.api.delete(`/api/v2/filters/keywords/${add.body.id}`)).status).toBe(404);
    expect(changes(u)).toBe(0);
  });

  it("status filters: add a visible status, list, show, delete; invisible or repeated is 422", async () => {
    const [u, other] = await Promise.all([makeUser(), makeUser()]);
    const f = await create(u, { title: "t", context: ["home"] });
    const s = await insertStatus(other);
    const hidden = await insertStatus(other, { visibility: "private" });
    jobs.length = 0;
    const add = await u.api.post(`/api/v2/filters/${f.id}/statuses`, { status_id: s });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({ id: expect.any(String), status_id: s });
    expect(changes(u)).toBe(1);
    expect((await u.api.post(`/api/v2/filters/${f.id}/statuses`, { status_id: s })).body.error).toBe("Validation failed: Status has already been taken");
    const inv = await u.api.post(`/api/v2/filters/${f.id}/statuses`, { status_id: hidden });
    const none = await u.api.post(`/api/v2/filters/${f.id}/statuses`, { status_id: "12345" });
    expect([inv.status, none.status]).toEqual([422, 422]);
    expect(inv.body).toEqual(none.body); // existence does not leak
    expect(changes(u)).toBe(0);
    expect((await u.api.get(`/api/v2/filters/${f.id}/statuses`)).body).toEqual([add.body]);
    expect((await u.api.get(`/api/v2/filters/statuses/${add.body.id}`)).body).toEqual(add.body);
    expect((await u.api.get(`/api/v2/filters/${f.id}`)).body.statuses).toEqual([add.body]);
    expect((await u.api.delete(`/api/v2/filters/statuses/${add.body.id}`)).body).toEqual({});
    expect(changes(u)).toBe(1);
    expect((await u.api.get(`/api/v2/filters/statuses/${add.body.id}`)).status).toBe(404);
  });

  it("deletes a filter with its keywords and statuses", async () => {
    const [u, other] = await Promise.all([makeUser(), makeUser()]);
    const f = await create(u, { title: "t", context: ["home"], keywords_attributes: [{ keyword: "a" }] });
    const st = (await u.api.post(`/api/v2/filters/${f.id}/statuses`, { status_id: await insertStatus(other) })).body;
    jobs.length = 0;
    expect((await u.api.delete(`/api/v2/filters/${f.id}`)).body).toEqual({});
    expect(changes(u)).toBe(1);
    expect((await u.api.get(`/api/v2/filters/${f.id}`)).status).toBe(404);
    expect((await u.api.get(`/api/v2/filters/keywords/${f.keywords[0].id}`)).status).toBe(404);
    expect((await u.api.get(`/api/v2/filters/statuses/${st.id}`)).status).toBe(404);
    expect((await u.api.delete(`/api/v2/filters/${f.id}`)).status).toBe(404);
    expect((await u.api.get("/api/v2/filters")).body).toEqual([]);
  });

  it("B14: another user's filter, keyword and status filter are 404 everywhere", async () => {
    const [a, b, x] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const f = await create(a, { title: "mine", context: ["home"], keywords_attributes: [{ keyword: "secret" }] });
    const kw = f.keywords[0].id;
    const st = (await a.api.post(`/api/v2/filters/${f.id}/statuses`, { status_id: await insertStatus(x) })).body;
    const mineB = await create(b, { title: "b's", context: ["home"] });
    jobs.length = 0;
    const statusesOf = await Promise.all([
      b.api.get(`/api/v2/filters/${f.id}`),
      b.api.put(`/api/v2/filters/${f.id}`, { title: "pwned" }),
      b.api.delete(`/api/v2/filters/${f.id}`),
      b.api.get(`/api/v2/filters/${f.id}/keywords`),
      b.api.post(`/api/v2/filters/${f.id}/keywords`, { keyword: "x" }),
      b.api.get(`/api/v2/filters/keywords/${kw}`),
      b.api.put(`/api/v2/filters/keywords/${kw}`, { keyword: "x" }),
      b.api.delete(`/api/v2/filters/keywords/${kw}`),
      b.api.get(`/api/v2/filters/${f.id}/statuses`),
      b.api.post(`/api/v2/filters/${f.id}/statuses`, { status_id: await insertStatus(x) }),
      b.api.get(`/api/v2/filters/statuses/${st.id}`),
      b.api.delete(`/api/v2/filters/statuses/${st.id}`),
      b.api.put(`/api/v2/filters/${mineB.id}`, { keywords_attributes: [{ id: kw, _destroy: true }] }),
      b.api.get(`/api/v1/filters/${kw}`),
      b.api.put(`/api/v1/filters/${kw}`, { phrase: "x", context: ["home"] }),
      b.api.delete(`/api/v1/filters/${kw}`),
      b.api.get("/api/v2/filters/abc"),
      b.api.get("/api/v2/filters/99999999999999999999"),
    ]);
    expect(statusesOf.map((r) => r.status)).toEqual(statusesOf.map(() => 404));
    expect(changes(a) + changes(b)).toBe(0);
    expect((await b.api.get("/api/v2/filters")).body.map((x: any) => x.id)).toEqual([mineB.id]);
    expect((await b.api.get("/api/v1/filters")).body).toEqual([]);
    expect((await a.api.get(`/api/v2/filters/${f.id}`)).body).toMatchObject({ title: "mine", keywords: f.keywords, statuses: [st] });
  });

  it("needs a user token with read:filters / write:filters", async () => {
    expect((await anon.get("/api/v2/filters")).status).toBe(401);
    expect((await anon.get("/api/v1/filters")).status).toBe(401);
    const r = await makeUser(undefined, { scopes: "read" });
    expect((await r.api.get("/api/v2/filters")).status).toBe(200);
    expect((await r.api.post("/api/v2/filters", { title: "x", context: ["home"] })).status).toBe(403);
    expect((await r.api.post("/api/v1/filters", { phrase: "x", context: ["home"] })).status).toBe(403);
    const g = await makeUser(undefined, { scopes: "read:filters write:filters" });
    expect((await g.api.post("/api/v2/filters", { title: "x", context: ["home"] })).status).toBe(200);
    expect((await g.api.get("/api/v1/filters")).status).toBe(200);
    const w = await makeUser(undefined, { scopes: "write:statuses" });
    expect((await w.api.get("/api/v2/filters")).status).toBe(403);
  });
});

describe("v1 filters (legacy shape: one keyword of a filter)", { timeout: 60000 }, () => {
  it("creates a one-keyword filter and shows it in both shapes", async () => {
    const u = await makeUser();
    jobs.length = 0;
    const res = await u.api.post("/api/v1/filters", {
      phrase: "eurovision",
      context: ["home", "notifications"],
      irreversible: true,
      whole_word: false,
      expires_in: 600,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("deprecation")).toBe("@1668384000");
    expect(res.body).toEqual({
      id: expect.any(String),
      phrase: "eurovision",
      context: ["home", "notifications"],
      whole_word: false,
      expires_at: expect.any(String),
      irreversible: true,
    });
    expect(changes(u)).toBe(1);
    const [v2] = (await u.api.get("/api/v2/filters")).body;
    expect(v2).toMatchObject({ title: "eurovision", filter_action: "hide", context: ["home", "notifications"], expires_at: res.body.expires_at });
    expect(v2.keywords).toEqual([{ id: res.body.id, keyword: "eurovision", whole_word: false }]);
    expect((await u.api.get("/api/v1/filters")).body).toEqual([res.body]);
    expect((await u.api.get(`/api/v1/filters/${res.body.id}`)).body).toEqual(res.body);
    // form encoding, defaults: not irreversible, whole_word (Mastodon's column default), never expires
    const form = new URLSearchParams({ phrase: "x", "context[]": "public" });
    expect((await u.api.post("/api/v1/filters", form, "form")).body).toMatchObject({ phrase: "x", whole_word: true, irreversible: false, expires_at: null });
  });

  it("updates phrase and filter fields; refuses filter changes when the filter has several keywords", async () => {
    const u = await makeUser();
    const one = (await u.api.post("/api/v1/filters", { phrase: "old", context: ["home"] })).body;
    jobs.length = 0;
    const upd = await u.api.put(`/api/v1/filters/${one.id}`, { phrase: "new", context: ["public", "thread"], irreversible: true, whole_word: false });
    expect(upd.body).toEqual({ ...one, phrase: "new", context: ["public", "thread"], irreversible: true, whole_word: false });
    expect(changes(u)).toBe(1);
    expect((await u.api.get("/api/v2/filters")).body[0]).toMatchObject({ title: "new", filter_action: "hide", context: ["public", "thread"] });

    const multi = await create(u, { title: "group", context: ["home"], keywords_attributes: [{ keyword: "a" }, { keyword: "b" }] });
    const v1 = (await u.api.get("/api/v1/filters")).body;
    expect(v1.map((x: any) => x.phrase)).toEqual(["new", "a", "b"]);
    expect(v1[1]).toEqual({ id: multi.keywords[0].id, phrase: "a", context: ["home"], whole_word: true, expires_at: null, irreversible: false });
    jobs.length = 0;
    const refused = await u.api.put(`/api/v1/filters/${multi.keywords[0].id}`, { phrase: "a", context: ["public"] });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toContain("apply to more than one filter keyword");
    expect(changes(u)).toBe(0);
    // phrase and whole_word are always safe; restating the same filter fields changes nothing
    const ok = await u.api.put(`/api/v1/filters/${multi.keywords[0].id}`, { phrase: "a2", context: ["home"], whole_word: false });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ phrase: "a2", whole_word: false, context: ["home"] });
    expect((await u.api.get(`/api/v2/filters/${multi.id}`)).body).toMatchObject({ title: "group", keywords: [{ keyword: "a2" }, { keyword: "b" }] });
  });

  it("deletes only the keyword; validates like Mastodon", async () => {
    const u = await makeUser();
    const one = (await u.api.post("/api/v1/filters", { phrase: "gone", context: ["home"] })).body;
    jobs.length = 0;
    expect((await u.api.delete(`/api/v1/filters/${one.id}`)).body).toEqual({});
    expect(changes(u)).toBe(1);
    expect((await u.api.get("/api/v1/filters")).body).toEqual([]);
    expect((await u.api.get("/api/v2/filters")).body).toMatchObject([{ title: "gone", keywords: [] }]);
    expect((await u.api.get(`/api/v1/filters/${one.id}`)).status).toBe(404);
    expect((await u.api.post("/api/v1/filters", { context: ["home"] })).body.error).toBe("Validation failed: Phrase can't be blank");
    expect((await u.api.post("/api/v1/filters", { phrase: "x", context: ["nowhere"] })).body.error).toBe(
      "Validation failed: Context None or invalid context supplied",
    );
    expect((await u.api.post("/api/v1/filters", { phrase: "x" })).body.error).toBe(
      "Validation failed: Context can't be blank, Context None or invalid context supplied",
    );
    expect(changes(u)).toBe(0);
  });
});
