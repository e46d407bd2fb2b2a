// Seed for the federation figures, appended to the main seed (same SQL writer, same D1 file). Three local accounts:
//   fedliked   — owns the statuses the remote actor Likes (one Like per status: a second Like by the same actor of
//                the same status changes nothing, so N processed activities need N statuses);
//   fedshared  — 1,000 remote followers on 200 hosts (5 per host) that share one inbox per host → 200 deliveries;
//   fedpersonal — 1,000 other remote followers on the same hosts, personal inboxes only → 1,000 deliveries.
// Remote accounts are stored as Tern stores fetched actors (domain = host:port, uri, inbox, shared inbox, fetched_at
// now, so nothing refetches them). Ids are snowflakes ~40 days back, clear of the main seed's ranges.
import { deliveryHost } from "./fed-peers.mjs";
import { idGen, insertRemoteAccounts, insertTokenUsers, pad, SqlWriter, STATUS_COLUMNS, statusRow, unpad } from "./seed.mjs";

const DAY = 86_400_000;
export const FED_SHAPE = { hosts: 200, followersPerHost: 5 };

/**
 * A remote account on stub host `h` (bench/fed-peers.mjs, port `peerPort`), for insertRemoteAccounts: its actor URI,
 * and the host's shared inbox unless `shared` is false (personal inboxes only).
 */
export function stubAccount({ h, peerPort, username, id, at, shared = true }) {
  const host = `${deliveryHost(h)}:${peerPort}`;
  const actor = `http://${host}/users/${username}`;
  return { id, username, domain: host, actor, sharedInbox: shared ? `http://${host}/inbox` : null, at };
}

/**
 * @param {{ origin: string, peerPort: number, liked: number, now?: number }} o
 * @returns {{ sql: string, liked: { username: string, ids: string[], uris: string[] }, shared: Poster, personal: Poster, counts: object }}
 */
export function buildFedSeed({ origin, peerPort, liked, now = Date.now() }) {
  const w = new SqlWriter();
  const base = now - 40 * DAY;
  const accId = idGen();
  const uri = (u) => `${origin}/users/${u}`;
  const names = ["fedliked", "fedshared", "fedpersonal"];
  const { users: local, tokens } = insertTokenUsers(w, origin, { names, accId, base, now, app: "Tern bench (federation)", prefix: "fed" });

  // The statuses the Likes point at.
  const stId = idGen();
  const likedIds = Array.from({ length: liked }, (_, i) => stId(base + DAY + i * 1000));
  const owner = local[0];
  w.insert(
    "statuses",
    STATUS_COLUMNS,
    likedIds.map((id, i) =>
      statusRow({
        id,
        uri: `${uri(owner.username)}/statuses/${id}`,
        url: `${origin}/@${owner.username}/${id}`,
        accountId: owner.id,
        local: true,
        text: `Federation bench status ${i}`,
        at: base + DAY + i * 1000,
      }),
    ),
  );

  // Remote followers: 5 per host on 200 hosts, once with a shared inbox per host and once with personal inboxes only.
  const remote = [];
  const follows = [];
  const followId = idGen();
  const variants = [
    { prefix: "s", target: local[1], shared: true },
    { prefix: "p", target: local[2], shared: false },
  ];
  for (const v of variants) {
    for (let h = 1; h <= FED_SHAPE.hosts; h++) {
      for (let k = 0; k < FED_SHAPE.followersPerHost; k++) {
        const username = `${v.prefix}${h}_${k}`;
        const at = base + 2 * DAY + remote.length * 10;
        const a = stubAccount({ h, peerPort, username, id: accId(at), at, shared: v.shared });
        remote.push(a);
        follows.push([pad(followId(at)), pad(a.id), pad(v.target.id), 1, 0, at]);
      }
    }
  }
  insertRemoteAccounts(w, remote, { now });
  w.insert("follows", ["id", "account_id", "target_account_id", "show_reblogs", "notify", "created_at"], follows);

  const poster = (i) => ({ username: local[i].username, id: unpad(local[i].id), token: tokens[i] });
  return {
    sql: w.toString(),
    liked: { username: owner.username, ids: likedIds.map(unpad), uris: likedIds.map((id) => `${uri(owner.username)}/statuses/${id}`) },
    shared: { ...poster(1), expect: FED_SHAPE.hosts, followers: FED_SHAPE.hosts * FED_SHAPE.followersPerHost },
    personal: { ...poster(2), expect: FED_SHAPE.hosts * FED_SHAPE.followersPerHost, followers: FED_SHAPE.hosts * FED_SHAPE.followersPerHost },
    counts: { localAccounts: local.length, likedStatuses: liked, remoteAccounts: remote.length, remoteFollows: follows.length },
  };
}
