import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, cfg, makeUser } from "./helpers";

const wf = (resource: string) => SELF.fetch(`${ORIGIN}/.well-known/webfinger?resource=${encodeURIComponent(resource)}`);

describe("host-meta", () => {
  it("is XRD with the lrdd template, cross-origin readable", async () => {
    const res = await SELF.fetch(`${ORIGIN}/.well-known/host-meta`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/xrd+xml; charset=utf-8");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const xml = await res.text();
    expect(xml).toContain('<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">');
    expect(xml).toContain(`<Link rel="lrdd" template="${ORIGIN}/.well-known/webfinger?resource={uri}"/>`);
  });
});

describe("webfinger", () => {
  it("describes a local account by acct:, plain acct and profile URLs", async () => {
    const u = await makeUser("alice");
    const domain = cfg().domain;
    for (const resource of [`acct:alice@${domain}`, `alice@${domain}`, `acct:ALICE@${domain.toUpperCase()}`, `${ORIGIN}/users/alice`, `${ORIGIN}/@alice`]) {
      const res = await wf(resource);
      expect(res.status, resource).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/jrd+json; charset=utf-8");
      const jrd = (await res.json()) as any;
      expect(jrd).toEqual({
        subject: `acct:alice@${domain}`,
        aliases: [`${ORIGIN}/@alice`, `${ORIGIN}/users/alice`],
        links: [
          { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: `${ORIGIN}/@alice` },
          { rel: "self", type: "application/activity+json", href: `${ORIGIN}/users/alice` },
          { rel: "http://ostatus.org/schema/1.0/subscribe", template: `${ORIGIN}/authorize_interaction?uri={uri}` },
        ],
      });
    }
    void u;
  });

  it("finds the instance actor (the key that signs Tern's fetches) by domain@domain and by its id", async () => {
    const domain = cfg().domain;
    for (const resource of [`acct:${domain}@${domain}`, `${domain}@${domain}`, `${ORIGIN}/actor`]) {
      const res = await wf(resource);
      expect(res.status, resource).toBe(200);
      const jrd = (await res.json()) as any;
      expect(jrd.subject).toBe(`acct:${domain}@${domain}`);
      expect(jrd.links).toContainEqual({ rel: "self", type: "application/activity+json", href: `${ORIGIN}/actor` });
    }
    // Its key id, its actor document and the WebFinger of its handle all name the same actor.
    const actor = (await (await SELF.fetch(`${ORIGIN}/actor`, { headers: { accept: "application/activity+json" } })).json()) as any;
    expect(actor.id).toBe(`${ORIGIN}/actor`);
    expect(actor.publicKey.id).toBe(`${ORIGIN}/actor#main-key`);
    expect(actor.publicKey.owner).toBe(actor.id);
    const byHandle = (await (await wf(`acct:${actor.preferredUsername}@${domain}`)).json()) as any;
    expect(byHandle.links.find((l: any) => l.rel === "self").href).toBe(actor.id);
    // No null collections for peers to trip over; its outbox answers (empty).
    for (const k of ["featured", "featuredTags", "following", "followers"]) expect(actor[k], k).not.toBeNull();
    const outbox = await SELF.fetch(actor.outbox, { headers: { accept: "application/activity+json" } });
    expect(outbox.status).toBe(200);
    expect(await outbox.json()).toMatchObject({ id: actor.outbox, type: "OrderedCollection", totalItems: 0 });
  });

  it("is 404 for unknown users and other domains, 400 for malformed resources", async () => {
    await makeUser("bob");
    expect((await wf(`acct:nobody@${cfg().domain}`)).status).toBe(404);
    expect((await wf("acct:bob@elsewhere.example")).status).toBe(404);
    expect((await wf("https://elsewhere.example/users/bob")).status).toBe(404);
    expect((await wf("acct:bob")).status).toBe(400);
    expect((await wf("acct:b o b@x")).status).toBe(400);
    expect((await SELF.fetch(`${ORIGIN}/.well-known/webfinger`)).status).toBe(400);
  });

  it("rejects CR/LF in the resource (D7)", async () => {
    await makeUser("carol");
    const res = await SELF.fetch(`${ORIGIN}/.well-known/webfinger?resource=acct:carol@${cfg().domain}%0d%0aX-Injected:%20yes`);
    expect(res.status).toBe(400);
    expect(res.headers.get("x-injected")).toBeNull();
  });

  it("is 410 for a suspended account", async () => {
    const u = await makeUser("dave");
    await env.DB.prepare("UPDATE accounts SET suspended_at = ? WHERE id = ?").bind(Date.now(), u.id.padStart(20, "0")).run();
    expect((await wf(`acct:dave@${cfg().domain}`)).status).toBe(410);
  });
});
