// ScheduledStatus (Mastodon's REST::ScheduledStatusSerializer): id, scheduled_at, the stored params (without
// application_id) and the media reserved for it, in the order of params.media_ids.
import type { MediaRow } from "./status";
import type { ScheduledParams, ScheduledStatusRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderMedia, type MastodonMediaAttachment } from "./media";
import { isoTime } from "../urls";

/** ScheduledStatus (docs.joinmastodon.org/entities/ScheduledStatus). */
export interface MastodonScheduledStatus {
  id: string;
  scheduled_at: string;
  params: ScheduledParams;
  media_attachments: MastodonMediaAttachment[];
}

export function renderScheduledStatus(cfg: Config, row: ScheduledStatusRow, media: MediaRow[]): MastodonScheduledStatus {
  const byId = new Map(media.filter((m) => m.scheduledStatusId === row.id).map((m) => [m.id, m]));
  const attached = (row.params.media_ids ?? []).map((id) => byId.get(id)).filter((m): m is MediaRow => !!m);
  return {
    id: row.id,
    scheduled_at: isoTime(row.scheduledAt),
    params: { ...row.params },
    media_attachments: attached.map((m) => renderMedia(cfg, m)),
  };
}

export type ScheduledStatusJson = MastodonScheduledStatus;
