// Security (outside review, F1): an export or import route asks for a scope that covers everything in the file. The
// archive holds every status (direct and followers-only ones too), the likes and the bookmarks, so reading it takes
// full `read` and asking for one full `write`; a CSV takes its resource's read scope; an import the write scope of what
// its rows do (a list import also follows). Each route is tried with a token of the same user lacking the scope (403,
// Mastodon's message) and with the right one.
import { SELF, env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { issueToken } from "../../src/services/auth/tokens";
import { populate } from "./export-fixtures";
import { api, db, makeApp, makeUser, ORIGIN, type TestUser } from "./helpers";
import { installQueueCapture, runQueuedJobs } from "./queues";

beforeEach(() => installQueueCapture());

const WRONG_SCOPE = { error: "This action is outside the authorized scopes" };

/** Another token of `u`'s user with exactly `scopes`. */
async function tokenFor(u: TestUser, scopes: string): Promise<string> {
  const app = await makeApp("Scoped", "read write follow push");
  const t = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: u.userId, scopes: scopes.split(" "), reuse: false });
  return t.accessToken;
}

async function get(token: string, path: string) {
  const res = await SELF.fetch(`${ORIGIN}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const type = res.headers.get("content-type");
  const text = type === "application/zip" ? `${(await res.arrayBuffer()).byteLength} bytes` : await res.text();
  return { status: res.status, text, type };
}

const READ_ALL = ["accounts", "blocks", "bookmarks", "favourites", "filters", "follows", "lists", "mutes", "notifications", "search", "statuses"].map(
  (s) => `read:${s}`,
);
const WRITE_ALL = [
  "accounts",
  "blocks",
  "bookmarks",
  "conversations",
  "favourites",
  "filters",
  "follows",
  "lists",
  "media",
  "mutes",
  "notifications",
  "reports",
  "statuses",
].map((s) => `write:${s}`);

describe("the account archive needs full read to read and full write to ask for", () => {
  it("read:accounts or write:accounts alone are refused; read and write are accepted (F1)", async () => {
    const a = await makeUser();
    const b = await makeUser();
    await b.api.post(`/api/v1/accounts/${a.id}/follow`);
    expect((await a.api.post("/api/v1/statuses", { status: "a secret", visibility: "direct" })).status).toBe(200);

    // Asking for one: write:accounts, or every write scope of the archive's parts but not `write`, is refused.
    for (const scopes of ["write:accounts", "write:accounts write:statuses write:favourites write:bookmarks", "read"]) {
      const res = await api(await tokenFor(a, scopes)).post("/api/tern/exports/archive");
      expect(res.status, scopes).toBe(403);
      expect(res.body).toEqual(WRONG_SCOPE);
    }
    const asked = await api(await tokenFor(a, "write")).post("/api/tern/exports/archive");
    expect(asked.status).toBe(202);
    await runQueuedJobs();

    // Reading it or its state: read:accounts (even with every other granular read scope but one) is refused.
    for (const scopes of ["read:accounts", "read:accounts read:favourites read:bookmarks", "write"]) {
      const t = await tokenFor(a, scopes);
      for (const path of ["/api/tern/exports/archive.zip", "/api/tern/exports/archive"]) {
        const res = await get(t, path);
        expect(res.status, `${scopes} ${path}`).toBe(403);
        expect(JSON.parse(res.text)).toEqual(WRONG_SCOPE);
      }
    }
    const full = await tokenFor(a, "read");
    const state = await get(full, "/api/tern/exports/archive");
    expect(state.status).toBe(200);
    expect(JSON.parse(state.text).state).toBe("ready");
    const zip = await get(full, "/api/tern/exports/archive.zip");
    expect(zip.status).toBe(200);
    expect(zip.type).toBe("application/zip");
  });
});

describe("CSV exports need the read scope of what the file lists", () => {
  const NEEDS: [kind: string, scope: string][] = [
    ["follows", "read:follows"],
    ["followers", "read:follows"],
    ["lists", "read:lists"],
    ["blocks", "read:blocks"],
    ["mutes", "read:mutes"],
    ["domain_blocks", "read:blocks"],
    ["bookmarks", "read:bookmarks"],
  ];

  it("each kind: every other read scope -> 403; its own scope alone -> 200 (F1)", async () => {
    const a = await makeUser();
    await populate(a);
    for (const [kind, scope] of NEEDS) {
      const lacking = await get(await tokenFor(a, READ_ALL.filter((s) => s !== scope).join(" ")), `/api/tern/exports/${kind}.csv`);
      expect(lacking.status, kind).toBe(403);
      expect(JSON.parse(lacking.text)).toEqual(WRONG_SCOPE);
      const right = await get(await tokenFor(a, scope), `/api/tern/exports/${kind}.csv`);
      expect(right.status, kind).toBe(200);
      expect(right.type).toMatch(/^text\/csv/);
      expect(right.text.length, kind).toBeGreaterThan(0);
    }
  });
});

describe("imports need the write scope of what the rows do", () => {
  const NEEDS: [type: string, scopes: string[], row: string][] = [
    ["following", ["write:follows"], "someone@remote.example\n"],
    ["blocking", ["write:blocks"], "someone@remote.example\n"],
    ["muting", ["write:mutes"], "someone@remote.example\n"],
    ["domain_blocking", ["write:blocks"], "spam.example\n"],
    ["bookmarks", ["write:bookmarks"], "https://remote.example/statuses/1\n"],
    ["lists", ["write:lists", "write:follows"], "Friends,someone@remote.example\n"],
  ];

  async function upload(token: string, type: string, row: string) {
    const form = new FormData();
    form.append("type", type);
    form.append("mode", "merge");
    form.append("data", new File([row], "file.csv", { type: "text/csv" }));
    return api(token).post("/api/tern/imports", form, "multipart");
  }

  it("each type: a token lacking one of its scopes -> 403 and nothing stored; exactly its scopes -> 202 (F1)", async () => {
    const a = await makeUser();
    let accepted = 0;
    for (const [type, scopes, row] of NEEDS) {
      for (const missing of scopes) {
        const res = await upload(await tokenFor(a, WRITE_ALL.filter((s) => s !== missing).join(" ")), type, row);
        expect(res.status, `${type} without ${missing}`).toBe(403);
        expect(res.body).toEqual(WRONG_SCOPE);
      }
      // A list import also follows: write:lists alone is not enough.
      if (scopes.length > 1) for (const one of scopes) expect((await upload(await tokenFor(a, one), type, row)).status, `${type} ${one}`).toBe(403);
      expect((await api(await tokenFor(a, "read")).get("/api/tern/imports")).body).toHaveLength(accepted);
      const ok = await upload(await tokenFor(a, scopes.join(" ")), type, row);
      expect(ok.status, type).toBe(202);
      expect(ok.body.type).toBe(type);
      accepted++;
    }
    // A read-only token is refused before its body is looked at.
    expect((await upload(await tokenFor(a, "read"), "blocking", "x\n")).status).toBe(403);
  });
});
