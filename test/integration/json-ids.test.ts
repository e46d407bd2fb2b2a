// Ids sent as JSON numbers keep every digit (snowflakes are beyond a double's 2^53), through each kind of JSON body
// that carries one; a JSON body's other numbers and strings are untouched.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { quoteLongIntegers } from "../../src/lib/http/params";
import { makeUser, ORIGIN, type TestUser } from "./helpers";

/** Sends raw JSON text, so numbers go as written. */
async function rawJson(u: TestUser, method: string, path: string, text: string) {
  const res = await SELF.fetch(`${ORIGIN}${path}`, { method, headers: { authorization: `Bearer ${u.token}`, "content-type": "application/json" }, body: text });
  return { status: res.status, body: (await res.json()) as any };
}

describe("JSON integer ids", () => {
  it("quoteLongIntegers quotes integers of 16 digits or more outside strings only", () => {
    expect(quoteLongIntegers('{"a":115546138471841234,"b":"115546138471841234","c":[1,2.5,-1234567890123456789],"d":1e21}')).toBe(
      '{"a":"115546138471841234","b":"115546138471841234","c":[1,2.5,"-1234567890123456789"],"d":1e21}',
    );
    expect(quoteLongIntegers('{"s":"a \\" 1234567890123456789"}')).toBe('{"s":"a \\" 1234567890123456789"}');
    expect(quoteLongIntegers('{"x":12345.1234567890123456}')).toBe('{"x":12345.1234567890123456}');
  });

  it("a reply, a list's accounts and a marker given as JSON numbers reach the right rows", async () => {
    const [a, b] = await Promise.all([makeUser(), makeUser()]);
    const parent = await b.api.post("/api/v1/statuses", { status: "parent" });
    expect(BigInt(parent.body.id) > 2n ** 53n).toBe(true);
    const reply = await rawJson(
      a,
      "POST",
      "/api/v1/statuses",
      `{"status":"reply","in_reply_to_id":${parent.body.id},"poll":{"options":["x","y"],"expires_in":3600}}`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.in_reply_to_id).toBe(parent.body.id);

    expect((await a.api.post(`/api/v1/accounts/${b.id}/follow`)).status).toBe(200);
    const list = await a.api.post("/api/v1/lists", { title: "l" });
    const added = await rawJson(a, "POST", `/api/v1/lists/${list.body.id}/accounts`, `{"account_ids":[${b.id}]}`);
    expect(added.status).toBe(200);
    expect((await a.api.get(`/api/v1/lists/${list.body.id}/accounts`)).body.map((x: { id: string }) => x.id)).toEqual([b.id]);

    const marker = await rawJson(a, "POST", "/api/v1/markers", `{"notifications":{"last_read_id":${parent.body.id}}}`);
    expect(marker.body.notifications.last_read_id).toBe(parent.body.id);
  });
});
