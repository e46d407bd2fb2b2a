// Security rows C15 and D4, not covered elsewhere.
import { fetchMock } from "../support/fetch-mock";
import { beforeAll, describe, expect, it } from "vitest";
import { FetchRefused, safeFetch } from "../../src/net/safe-fetch";
import { AS_PUBLIC, create, installFetchMock, note, postInbox, remoteActor, runJobs, sql } from "./federation-inbox-fixtures";

beforeAll(() => installFetchMock());

const count = async (q: string) => Number((await sql(q))[0].n);

describe("C15: Linked Data signatures are never trusted", () => {
  it("a relayed Create signed over HTTP by someone else, carrying an LD signature for the author, creates nothing", async () => {
    const author = await remoteActor("ldauthor");
    const relay = await remoteActor("relay", "relay.example");
    const n = note(author, { content: "<p>relayed</p>" });
    const relayed = {
      ...create(author, n),
      signature: { type: "RsaSignature2017", creator: author.keyId, created: new Date().toISOString(), signatureValue: "Zm9yZ2Vk" },
    };
    const res = await postInbox(relay, relayed);
    expect([401, 202]).toContain(res.status);
    await runJobs();
    expect(await count("SELECT count(*) AS n FROM statuses")).toBe(0);
  });

  it("@graph, @included and @reverse wrappers do not smuggle objects in", async () => {
    const a = await remoteActor("graphy");
    const inner = create(a, note(a, { content: "<p>graph</p>" }));
    for (const key of ["@graph", "@included", "@reverse"]) {
      const wrapped = {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${a.uri}/wrap/${key}`,
        type: "Create",
        actor: a.uri,
        to: [AS_PUBLIC],
        [key]: [inner],
      };
      const res = await postInbox(a, wrapped);
      expect([202, 400]).toContain(res.status);
    }
    await runJobs();
    expect(await count("SELECT count(*) AS n FROM statuses")).toBe(0);
  });
});

describe("D4: a slow remote is cut off by the total deadline", () => {
  it("aborts when the answer takes longer than the timeout (30 s in production)", async () => {
    fetchMock.get("https://slow.example").intercept({ path: "/users/slow" }).reply(200, "{}").delay(6_000);
    const t0 = Date.now();
    await expect(safeFetch("https://slow.example/users/slow", { timeoutMs: 200 })).rejects.toBeInstanceOf(FetchRefused);
    // Cut at 200 ms, long before the answer: the margin is a busy machine's.
    expect(Date.now() - t0).toBeLessThan(4_000);
  });
});
