// Mastodon's Report entity, the fields every rendering shares: the reporter's answer to POST /api/v1/reports, the
// report in an admin.report notification, and staff's Admin::Report (./admin-report.ts) add their own around these.
import { isoTime } from "./urls";
import type { ReportRow } from "../db/schema";

export function reportFields(r: ReportRow) {
  return {
    id: r.id,
    action_taken: r.actionTakenAt != null,
    action_taken_at: isoTime(r.actionTakenAt),
    category: r.category,
    comment: r.comment,
    forwarded: r.forward,
    created_at: isoTime(r.createdAt),
  };
}
