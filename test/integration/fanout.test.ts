import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Effects } from "../../src/effects/collector";
import { createDb } from "../../src/db/client";
import { FANOUT_CHUNK, fanOut } from "../../src/timelines/fanout";
import { unmergeFromHome } from "../../src/timelines/feed-merge";
import { countingD1, type D1Count } from "../../src/lib/limits/d1-counter";
import { db, eventually, makeUser } from "./helpers";
import { exec, follow, homeRows, insertStatus, listRows, nextId, pad, post } from "./feeds-fixtures";

/** Waits until the author's own feed has the status: the whole first fan-out batch has then been written. */
async function delivered(authorId: string, statusId: string) {
  await eventually(async () => expect(await homeRows(authorId)).toContain(statusId));
}

describe("fan-out on write", { timeout: 30000 }, () => {
  it("delivers by visibility: followers get public and private, others nothing; direct only to the mentioned", async () => {
    const [a, f, n, m] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(f, a);
    const pub = await post(a, { visibility: "public" });
    const unl = await post(a, { visibility: "unlisted" });
    const priv = await post(a, { visibility: "private" });
    const dm = await post(a, { visibility: "direct", mentions: [m.id] });
    await delivered(a.id, dm);
    await eventually(async () => expect(await homeRows(f.id)).toEqual(expect.arrayContaining([pub, unl, priv])));
    await eventually(async () => expect(await homeRows(m.id)).toEqual([dm]));
    expect(await homeRows(f.id)).not.toContain(dm);
    expect(await homeRows(n.id)).toEqual([]);
    expect(await homeRows(a.id)).toEqual(expect.arrayContaining([pub, unl, priv, dm]));
  });

  it("mentioned local accounts that do not follow get nothing in home for non-direct statuses", async () => {
    const [a, m] = await Promise.all([makeUser(), makeUser()]);
    const s = await post(a, { visibility: "public", mentions: [m.id] });
    await delivered(a.id, s);
    expect(await homeRows(m.id)).toEqual([]);
  });

  it("applies Mastodon's reply rule", async () => {
    const [a, x, onlyA, both] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(onlyA, a);
    await follow(both, a);
    await follow(both, x);
    const xs = await insertStatus(x);
    const toX = await post(a, { inReplyTo: { id: xs, accountId: x.id } });
    const own = await insertStatus(a);
    const self = await post(a, { inReplyTo: { id: own, accountId: a.id } });
    await delivered(a.id, toX);
    await delivered(a.id, self);
    await eventually(async () => expect(await homeRows(both.id)).toEqual(expect.arrayContaining([toX, self])));
    await eventually(async () => expect(await homeRows(onlyA.id)).toContain(self));
    expect(await homeRows(onlyA.id)).not.toContain(toX);
  });

  it("never holds a status and its boost together, whichever fan-out runs first", async () => {
    const [x, booster, f1, f2] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    for (const f of [f1, f2]) {
      await follow(f, x);
      await follow(f, booster);
    }
    const d = createDb(env.DB);
    // Boost first, then the original (a slow original fan-out): f1 keeps the boost only.
    const orig1 = await insertStatus(x);
    const boost1 = await insertStatus(booster, { reblogOf: orig1 });
    await fanOut(d, new Effects(""), boost1, undefined);
    await fanOut(d, new Effects(""), orig1, undefined);
    expect(await homeRows(f1.id)).toEqual([boost1]);
    // Original first, then the boost: f2 keeps the original only.
    const orig2 = await insertStatus(x);
    const boost2 = await insertStatus(booster, { reblogOf: orig2 });
    await fanOut(d, new Effects(""), orig2, undefined);
    await fanOut(d, new Effects(""), boost2, undefined);
    expect(await homeRows(f2.id)).toEqual([orig2, boost1]);
    // The author still has their own original, whoever boosted it.
    expect(await homeRows(x.id)).toEqual(expect.arrayContaining([orig1, orig2]));
  });

  it("handles reblogs: show_reblogs=false, own statuses, and one entry per boosted status", async () => {
    const [a, x, noBoosts, boosts, fan] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(noBoosts, a, { showReblogs: false });
    await follow(boosts, a);
    await follow(fan, a);
    await follow(fan, x);
    const orig = await post(x);
    await eventually(async () => expect(await homeRows(fan.id)).toContain(orig));
    const rb = await post(a, { reblogOf: orig });
    // A reblog of boosts' own status never lands in boosts' feed.
    const mine = await insertStatus(boosts);
    const rbMine = await post(a, { reblogOf: mine });
    await eventually(async () => expect(await homeRows(boosts.id)).toContain(rb));
    await eventually(async () => {
      const rows = await env.DB.prepare("SELECT count(*) AS n FROM home_feed WHERE status_id IN (?1, ?2)").bind(pad(rb), pad(rbMine)).first<{ n: number }>();
      expect(rows?.n).toBeGreaterThanOrEqual(2);
    });
    expect(await homeRows(noBoosts.id)).toEqual([]);
    expect(await homeRows(boosts.id)).not.toContain(rbMine);
    // fan already has the original: the boost is not added again.
    expect(await homeRows(fan.id)).not.toContain(rb);
    expect(await homeRows(fan.id)).toContain(rbMine);
  });

  it("skips followers who mute or block the author, or whose language filter excludes the status", async () => {
    const [a, muter, blocker, german, ok] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    for (const u of [muter, blocker, ok]) await follow(u, a);
    await follow(german, a, { languages: ["de"] });
    await exec(
      "INSERT INTO mutes (id, account_id, target_account_id, hide_notifications, created_at) VALUES (?1, ?2, ?3, 1, 0)",
      pad(nextId()),
      pad(muter.id),
      pad(a.id),
    );
    await exec("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, 0)", pad(nextId()), pad(blocker.id), pad(a.id));
    const en = await post(a, { language: "en" });
    const de = await post(a, { language: "de" });
    await delivered(a.id, de);
    await eventually(async () => expect(await homeRows(ok.id)).toEqual(expect.arrayContaining([en, de])));
    expect(await homeRows(muter.id)).toEqual([]);
    expect(await homeRows(blocker.id)).toEqual([]);
    expect(await homeRows(german.id)).toEqual([de]);
  });

  it("other people's mutes and exclusive lists do not affect a receiver", async () => {
    const [a, m, bystander, owner] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(owner, a);
    await follow(bystander, a);
    await exec(
      "INSERT INTO mutes (id, account_id, target_account_id, hide_notifications, created_at) VALUES (?1, ?2, ?3, 1, 0)",
      pad(nextId()),
      pad(bystander.id),
      pad(a.id),
    );
    const [mine, theirs] = [nextId(), nextId()];
    await exec(
      "INSERT INTO lists (id, account_id, title, exclusive, created_at) VALUES (?1, ?2, 'mine', 0, 0), (?3, ?4, 'excl', 1, 0)",
      pad(mine),
      pad(owner.id),
      pad(theirs),
      pad(bystander.id),
    );
    await exec(
      "INSERT INTO list_accounts (id, list_id, account_id) VALUES (?1, ?2, ?4), (?3, ?5, ?4)",
      pad(nextId()),
      pad(mine),
      pad(nextId()),
      pad(a.id),
      pad(theirs),
    );
    const dm = await post(a, { visibility: "direct", mentions: [m.id] });
    const pub = await post(a);
    await delivered(a.id, pub);
    await eventually(async () => expect(await homeRows(m.id)).toEqual([dm]));
    expect(await listRows(mine)).toEqual([pub]);
    expect(await homeRows(owner.id)).toEqual([pub]);
    // The bystander mutes the author and lists them exclusively: nothing in their home.
    expect(await homeRows(bystander.id)).toEqual([]);
  });

  it("creates 'status' notifications for followers with notify, only for original non-reply statuses", async () => {
    const [a, bell, quiet] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(bell, a, { notify: true });
    await follow(quiet, a);
    const s = await post(a);
    const other = await insertStatus(quiet);
    const reply = await post(a, { inReplyTo: { id: other, accountId: quiet.id } });
    await delivered(a.id, s);
    await delivered(a.id, reply);
    await eventually(async () => {
      const r = await bell.api.get("/api/v1/notifications?types[]=status");
      expect(r.status).toBe(200);
      expect(r.body.map((n: any) => n.status?.id)).toEqual([s]);
      expect(r.body[0]).toMatchObject({ type: "status", account: { id: a.id } });
    });
    expect((await quiet.api.get("/api/v1/notifications")).body).toEqual([]);
  });

  it("fills list feeds by replies_policy and home feeds of hashtag followers", async () => {
    const [a, owner, x, tagger] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(owner, a);
    const listFollowed = nextId();
    const listNone = nextId();
    await exec(
      "INSERT INTO lists (id, account_id, title, replies_policy, exclusive, created_at) VALUES (?1, ?2, 'f', 'followed', 0, 0), (?3, ?2, 'n', 'none', 0, 0)",
      pad(listFollowed),
      pad(owner.id),
      pad(listNone),
    );
    await exec(
      "INSERT INTO list_accounts (id, list_id, account_id) VALUES (?1, ?2, ?4), (?3, ?5, ?4)",
      pad(nextId()),
      pad(listFollowed),
      pad(nextId()),
      pad(a.id),
      pad(listNone),
    );
    await follow(owner, x);
    const xs = await insertStatus(x);
    const plain = await post(a);
    const reply = await post(a, { inReplyTo: { id: xs, accountId: x.id } });
    await delivered(a.id, reply);
    await eventually(async () => expect(await listRows(listFollowed)).toEqual([reply, plain]));
    expect(await listRows(listNone)).toEqual([plain]);

    const tagId = nextId();
    await exec("INSERT INTO tags (id, name, display_name, created_at) VALUES (?1, 'terns', 'Terns', 0)", pad(tagId));
    await exec("INSERT INTO tag_follows (id, account_id, tag_id, created_at) VALUES (?1, ?2, ?3, 0)", pad(nextId()), pad(tagger.id), pad(tagId));
    const tagged = await insertStatus(a, { text: "#terns" });
    const taggedPrivate = await insertStatus(a, { visibility: "private" });
    await exec("INSERT INTO status_tags (status_id, tag_id) VALUES (?1, ?3), (?2, ?3)", pad(tagged), pad(taggedPrivate), pad(tagId));
    await env.JOBS.send({ type: "fanout", statusId: tagged });
    await env.JOBS.send({ type: "fanout", statusId: taggedPrivate });
    await eventually(async () => expect(await homeRows(tagger.id)).toEqual([tagged]));
    await delivered(a.id, taggedPrivate);
    expect(await homeRows(tagger.id)).toEqual([tagged]);
  });

  it("unfanout removes a deleted status and boosts of it from every feed", async () => {
    const [a, f] = await Promise.all([makeUser(), makeUser()]);
    await follow(f, a);
    const s = await post(a);
    await eventually(async () => expect(await homeRows(f.id)).toContain(s));
    await exec("DELETE FROM statuses WHERE id = ?1", pad(s));
    await env.JOBS.send({ type: "unfanout", statusId: s, accountId: a.id, reblogOfId: null });
    await eventually(async () => {
      expect(await homeRows(f.id)).toEqual([]);
      expect(await homeRows(a.id)).toEqual([]);
    });
  });

  it("merge_feed brings the target's recent statuses in; unmerge_feed takes them out", async () => {
    const [a, f, g] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const ids = [];
    for (let i = 0; i < 45; i++) ids.push(await insertStatus(a, { visibility: i % 2 ? "public" : "private" }));
    const dm = await insertStatus(a, { visibility: "direct", mentions: [g.id] });
    const gs = await insertStatus(g);
    await follow(f, a);
    await follow(f, g);
    await env.JOBS.send({ type: "merge_feed", accountId: f.id, targetAccountId: a.id });
    await env.JOBS.send({ type: "merge_feed", accountId: f.id, targetAccountId: g.id });
    await eventually(async () => expect((await homeRows(f.id)).length).toBe(41));
    const rows = await homeRows(f.id);
    expect(rows).toContain(gs);
    expect(rows).not.toContain(dm);
    expect(rows).toContain(ids[44]);
    expect(rows).not.toContain(ids[0]);
    await env.JOBS.send({ type: "unmerge_feed", accountId: f.id, targetAccountId: a.id });
    await eventually(async () => expect(await homeRows(f.id)).toEqual([gs]));
  });

  it("an unfollow's unmerge reads the one feed it changes, whatever the other feeds hold", async () => {
    // No (account, author) index (migrations/0060: it cost a row written with every entry): the delete walks the
    // feed's key, so its rows read are bounded by that feed (≤ 800 kept), not by home_feed.
    const [a, b, f, g] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    const stmt = env.DB.prepare("INSERT INTO home_feed (account_id, status_id, author_id) VALUES (?1, ?2, ?3)");
    const rows = (owner: string, author: string, n: number) => Array.from({ length: n }, () => stmt.bind(pad(owner), pad(nextId()), pad(author)));
    await env.DB.batch([...rows(f.id, a.id, 5), ...rows(f.id, b.id, 300)]);
    const readOne = async () => {
      const counter: D1Count = { n: 0 };
      await unmergeFromHome(createDb(countingD1(env.DB, counter, { rows: true })), f.id, a.id);
      return counter.r ?? 0;
    };
    const small = await readOne();
    expect(await homeRows(f.id)).toHaveLength(300);
    await env.DB.batch(rows(g.id, a.id, 2000));
    await env.DB.batch(rows(f.id, a.id, 5));
    const large = await readOne();
    expect(await homeRows(f.id)).toHaveLength(300);
    expect(await homeRows(g.id)).toHaveLength(2000);
    expect(small).toBeLessThanOrEqual(310);
    // One more at most: the walk stops on the first key past the feed's range, which another feed may now hold.
    expect(large).toBeLessThanOrEqual(small + 1);
  });

  it("trims a grown feed to the newest 800 entries", async () => {
    const [a, f] = await Promise.all([makeUser(), makeUser()]);
    const old = Array.from({ length: 820 }, () => nextId());
    const stmt = env.DB.prepare("INSERT INTO home_feed (account_id, status_id, author_id) VALUES (?1, ?2, ?3)");
    await env.DB.batch(old.map((id) => stmt.bind(pad(f.id), pad(id), pad(a.id))));
    const s = await insertStatus(a);
    await follow(f, a);
    await env.JOBS.send({ type: "merge_feed", accountId: f.id, targetAccountId: a.id });
    await eventually(async () => expect(await homeRows(f.id)).toContain(s));
    const rows = await homeRows(f.id);
    expect(rows.length).toBe(800);
    expect(rows[0]).toBe(s);
    expect(rows).not.toContain(old[20]);
    expect(rows).toContain(old[21]);
  });

  it("a fan-out that trims keeps each grown feed at 800 entries", async () => {
    const [a, f] = await Promise.all([makeUser(), makeUser()]);
    await follow(f, a);
    const old = Array.from({ length: 805 }, () => nextId());
    const stmt = env.DB.prepare("INSERT INTO home_feed (account_id, status_id, author_id) VALUES (?1, ?2, ?3)");
    await env.DB.batch(old.map((id) => stmt.bind(pad(f.id), pad(id), pad(a.id))));
    const s = await insertStatus(a);
    await fanOut(createDb(env.DB), new Effects(""), s, undefined, { trim: true });
    const rows = await homeRows(f.id);
    expect(rows.length).toBe(800);
    expect(rows[0]).toBe(s);
    expect(await homeRows(a.id)).toEqual([s]);
  });

  it(`continues past ${FANOUT_CHUNK} followers with a cursor`, async () => {
    const a = await makeUser();
    const n = FANOUT_CHUNK + 3;
    const stmts: D1PreparedStatement[] = [];
    const followers: string[] = [];
    const now = Date.now();
    for (let i = 0; i < n; i++) {
      const acct = nextId();
      followers.push(acct);
      stmts.push(
        env.DB.prepare("INSERT INTO accounts (id, username, uri, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)").bind(
          pad(acct),
          `bulk${acct}`,
          `http://tern.test/users/bulk${acct}`,
          now,
        ),
        env.DB.prepare("INSERT INTO users (id, account_id, email, password_hash, created_at, updated_at) VALUES (?1, ?2, ?3, 'x', ?4, ?4)").bind(
          pad(nextId()),
          pad(acct),
          `bulk${acct}@example.com`,
          now,
        ),
        env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, ?4)").bind(
          pad(nextId()),
          pad(acct),
          pad(a.id),
          now,
        ),
      );
    }
    for (let i = 0; i < stmts.length; i += 300) await env.DB.batch(stmts.slice(i, i + 300));
    const s = await post(a);
    await eventually(async () => {
      const r = await env.DB.prepare("SELECT count(*) AS n FROM home_feed WHERE status_id = ?1").bind(pad(s)).first<{ n: number }>();
      expect(r?.n).toBe(n + 1);
    }, 15000);
    expect(await homeRows(followers[n - 1])).toEqual([s]);
    void db;
  });
});
