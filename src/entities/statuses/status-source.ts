// StatusSource entity (docs.joinmastodon.org/entities/StatusSource): the plain text of the viewer's own status and
// its content warning, as GET /api/v1/statuses/:id/source answers them for editing.
import type { StatusRow } from "./status";

export interface MastodonStatusSource {
  id: string;
  text: string;
  spoiler_text: string;
}

export function renderStatusSource(s: Pick<StatusRow, "id" | "text" | "spoilerText">): MastodonStatusSource {
  return { id: s.id, text: s.text, spoiler_text: s.spoilerText };
}
