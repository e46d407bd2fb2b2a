// The dashboard (view_dashboard): the measures of the last 30 days against the 30 before, from
// src/services/admin/measures.ts (one D1 batch), as Mastodon's admin dashboard shows them.
import type { Ctx } from "../../context";
import { SOFTWARE_VERSION, TERN_VERSION } from "../../env";
import { adminMeasures, readSpan } from "../../services/admin/measures";
import { sectionPage, type View } from "./kit";
import { Card } from "../form-parts";

const KEYS = ["new_users", "active_users", "interactions", "opened_reports", "resolved_reports"];
const LABELS: Record<string, string> = {
  new_users: "New users",
  active_users: "Active users",
  interactions: "Interactions",
  opened_reports: "Reports opened",
  resolved_reports: "Reports resolved",
};
const DAY = 86_400_000;

export async function showDashboard(c: Ctx, view: View) {
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const span = readSpan(iso(now - 29 * DAY), iso(now));
  const measures = (await adminMeasures(c.get("db"), KEYS, span, {})) as { key: string; total: string; previous_total?: string }[];
  return sectionPage(c, view, "/admin/dashboard", () => (
    <>
      <Card>
        <h2>
          Last 30 days ({iso(span.start)} to {iso(span.end - DAY)})
        </h2>
        {measures.map((m) => (
          <div class="stat" data-measure={m.key}>
            <strong>{m.total}</strong>
            {LABELS[m.key] ?? m.key}
            {m.previous_total !== undefined ? <span class="muted"> (previous 30 days: {m.previous_total})</span> : null}
          </div>
        ))}
      </Card>
      <Card>
        <p class="muted">
          Tern {TERN_VERSION}, Mastodon API {SOFTWARE_VERSION}.
        </p>
      </Card>
    </>
  ));
}
