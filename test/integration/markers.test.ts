import { describe, expect, it } from "vitest";
import { anon, makeUser } from "./helpers";

describe("markers", { timeout: 30000 }, () => {
  it("saves JSON bodies, increments version on change, and reads them back by timeline[]", async () => {
    const me = await makeUser();
    expect((await me.api.get("/api/v1/markers?timeline[]=home")).body).toEqual({});
    const r1 = await me.api.post("/api/v1/markers", { home: { last_read_id: "1000" }, notifications: { last_read_id: "2000" } });
    expect(r1.status).toBe(200);
    expect(r1.body.home).toMatchObject({ last_read_id: "1000", version: 0 });
    expect(r1.body.notifications).toMatchObject({ last_read_id: "2000", version: 0 });
    expect(r1.body.home.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const r2 = await me.api.post("/api/v1/markers", { home: { last_read_id: "1001" } });
    expect(r2.body).toEqual({ home: expect.objectContaining({ last_read_id: "1001", version: 1 }) });
    const same = await me.api.post("/api/v1/markers", { home: { last_read_id: "1001" } });
    expect(same.body.home.version).toBe(1);
    const both = await me.api.get("/api/v1/markers?timeline[]=home&timeline[]=notifications");
    expect(Object.keys(both.body).sort()).toEqual(["home", "notifications"]);
    expect(both.body.home.last_read_id).toBe("1001");
    const one = await me.api.get("/api/v1/markers?timeline=notifications");
    expect(Object.keys(one.body)).toEqual(["notifications"]);
  });

  it("accepts Tusky's form body home[last_read_id]=", async () => {
    const me = await makeUser();
    const r = await me.api.post("/api/v1/markers", new URLSearchParams({ "home[last_read_id]": "42", "notifications[last_read_id]": "43" }), "form");
    expect(r.status).toBe(200);
    expect(r.body.home.last_read_id).toBe("42");
    expect(r.body.notifications.last_read_id).toBe("43");
  });

  it("keeps markers per user; refuses bad ids, missing tokens and wrong scopes", async () => {
    const [me, other] = await Promise.all([makeUser(), makeUser()]);
    await me.api.post("/api/v1/markers", { home: { last_read_id: "5" } });
    expect((await other.api.get("/api/v1/markers?timeline[]=home")).body).toEqual({});
    expect((await me.api.post("/api/v1/markers", { home: { last_read_id: "abc" } })).status).toBe(422);
    expect((await anon.get("/api/v1/markers?timeline[]=home")).status).toBe(401);
    const readOnly = await makeUser(undefined, { scopes: "read" });
    expect((await readOnly.api.post("/api/v1/markers", { home: { last_read_id: "5" } })).status).toBe(403);
    const noRead = await makeUser(undefined, { scopes: "write" });
    expect((await noRead.api.get("/api/v1/markers?timeline[]=home")).status).toBe(403);
  });
});
