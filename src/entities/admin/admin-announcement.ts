// Tern's own admin announcement (/api/v1/admin/announcements; Mastodon manages announcements in its admin pages, with
// no API): the Announcement as staff see it, published or not, with its source text beside the rendered content.
import type { DB } from "../../db/client";
import type { AnnouncementRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderAnnouncements, type MastodonAnnouncement } from "../instance/announcement";

export interface TernAdminAnnouncement extends MastodonAnnouncement {
  published: boolean;
  /** The text as staff wrote it (`content` is its HTML). */
  text: string;
}

export async function renderAdminAnnouncements(db: DB, cfg: Config, rows: AnnouncementRow[]): Promise<TernAdminAnnouncement[]> {
  const out = await renderAnnouncements(db, cfg, rows, null);
  return out.map((a, i) => ({ ...a, published: rows[i]?.published ?? false, text: rows[i]?.text ?? "" }));
}
