// List entity (docs.joinmastodon.org/entities/List).
import type { lists } from "../../db/schema/index";

export type ListRow = typeof lists.$inferSelect;

export interface MastodonList {
  id: string;
  title: string;
  /** lists.replies_policy holds one of these (the list routes validate it). */
  replies_policy: "followed" | "list" | "none";
  exclusive: boolean;
}

export function renderList(l: Pick<ListRow, "id" | "title" | "repliesPolicy" | "exclusive">): MastodonList {
  return { id: l.id, title: l.title, replies_policy: l.repliesPolicy as MastodonList["replies_policy"], exclusive: l.exclusive };
}
