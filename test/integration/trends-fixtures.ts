// Trend seeding shared by trends.test.ts and admin-trends.test.ts: the statements that tag a seeded status and link it
// to a stored preview card, for a batch beside the status's own INSERT.
import { env } from "cloudflare:test";
import { snowflake } from "../../src/lib/text/ids";

const pad = (id: string) => id.padStart(20, "0");

/** The tag (made usable and trendable if new) and its link to status `statusId`. */
export function tagStatements(statusId: string, tag: string): D1PreparedStatement[] {
  return [
    env.DB.prepare("INSERT OR IGNORE INTO tags (id, name, display_name, usable, trendable, created_at) VALUES (?1, ?2, ?2, 1, 1, 1)").bind(
      pad(snowflake()),
      tag,
    ),
    env.DB.prepare("INSERT INTO status_tags (status_id, tag_id) SELECT ?1, id FROM tags WHERE name = ?2").bind(pad(statusId), tag),
  ];
}

/** The link of status `statusId` to the preview card stored for `url`. */
export function cardStatement(statusId: string, url: string): D1PreparedStatement {
  return env.DB.prepare("INSERT INTO status_preview_cards (status_id, preview_card_id, url) SELECT ?1, id, url FROM preview_cards WHERE url = ?2").bind(
    pad(statusId),
    url,
  );
}
