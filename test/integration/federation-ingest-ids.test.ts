// Remote statuses get snowflake ids from their published time, so two statuses published in the same millisecond
// (a server's batch, or two requests in different isolates) can draw the same id. The second one must still be
// stored, under another id, not dropped as if it were a duplicate of the first.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { accounts } from "../../src/db/schema";
import { Effects } from "../../src/effects/collector";
import { normalizeNote } from "../../src/federation/remote/normalize";
import { ingestNote } from "../../src/federation/remote/remote-statuses";
import { newResolution } from "../../src/federation/remote/resolve-status";
import { padId, snowflake } from "../../src/lib/text/ids";
import { eq } from "drizzle-orm";
import { cfg, db, ORIGIN } from "./helpers";

const HOST = "https://ids.example";
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

afterEach(() => vi.restoreAllMocks());

describe("remote status ids", () => {
  it("a status whose id was taken by another published in the same millisecond is stored under a new id", async () => {
    const authorId = snowflake();
    const uri = `${HOST}/users/gil`;
    const now = Date.now();
    await env.DB.prepare(
      `INSERT INTO accounts (id, username, domain, uri, url, inbox_url, followers_url, fetched_at, created_at, updated_at)
       VALUES (?1, 'gil', 'ids.example', ?2, ?2, ?3, ?4, ?5, ?5, ?5)`,
    )
      .bind(padId(authorId), uri, `${uri}/inbox`, `${uri}/followers`, now)
      .run();
    const [author] = await db().select().from(accounts).where(eq(accounts.id, authorId));
    const published = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
    // Another status already holds the id this note's first draw will give (the draw's random part forced to 0).
    const taken = (BigInt(published) << 16n).toString();
    await env.DB.prepare(
      `INSERT INTO statuses (id, uri, account_id, local, visibility, content, created_at, updated_at)
       VALUES (?1, ?2, ?3, 0, 'public', '<p>first</p>', ?4, ?4)`,
    )
      .bind(padId(taken), `${HOST}/users/gil/statuses/1`, padId(authorId), published)
      .run();
    const real = crypto.getRandomValues.bind(crypto);
    let forced = false;
    vi.spyOn(crypto, "getRandomValues").mockImplementation(<T extends ArrayBufferView | null>(a: T): T => {
      if (!forced && a instanceof Uint16Array && a.length === 1) {
        forced = true;
        a[0] = 0;
        return a;
      }
      return real(a as never) as T;
    });
    const note = normalizeNote({
      id: `${HOST}/users/gil/statuses/2`,
      type: "Note",
      attributedTo: uri,
      content: "<p>second, same millisecond</p>",
      published: new Date(published).toISOString(),
      to: [PUBLIC],
      cc: [`${uri}/followers`],
    });
    const stored = await ingestNote(newResolution(db(), cfg(), new Effects(ORIGIN)), note!, author!);
    expect(forced).toBe(true);
    expect(stored?.uri).toBe(note!.id);
    expect(stored?.id).not.toBe(taken);
    const rows = await env.DB.prepare("SELECT uri FROM statuses WHERE account_id = ? ORDER BY id").bind(padId(authorId)).all<{ uri: string }>();
    expect(rows.results.map((r) => r.uri)).toEqual([`${HOST}/users/gil/statuses/1`, note!.id]);
  });
});
