import type { lists } from "../db/schema";

export type ListRow = typeof lists.$inferSelect;

export function renderList(l: ListRow) {
  return { id: l.id, title: l.title, replies_policy: l.repliesPolicy, exclusive: l.exclusive };
}
