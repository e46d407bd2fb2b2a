// The audit log (view_audit_log): every staff action, newest first, 50 a page (src/queries/admin-action-logs.ts).
import type { Ctx } from "../../context";
import { parseId } from "../../lib/text/ids";
import { actionLogPage } from "../../queries/admin-action-logs";
import { sectionPage, Older, when, type View } from "./kit";
import { Card, Table } from "../form-parts";

const LIMIT = 50;

export async function showLog(c: Ctx, view: View) {
  const maxId = parseId(c.req.query("max_id"));
  const rows = await actionLogPage(c.get("db"), maxId, LIMIT);
  return sectionPage(c, view, "/admin/log", () => (
    <Card>
      {rows.length ? (
        <Table headers={["When", "Who", "Action", "Target"]}>
          {rows.map((r) => (
            <tr data-log={r.id}>
              <td>{when(r.createdAt)}</td>
              <td>{r.actor ? `@${r.actor}` : "(deleted)"}</td>
              <td>{r.action}</td>
              <td>
                {r.targetType}
                {r.targetId ? ` #${r.targetId}` : ""}
              </td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">Nothing has been logged{maxId ? " before this point" : ""}.</p>
      )}
      <Older rows={rows} limit={LIMIT} href={(last) => `/admin/log?max_id=${last.id}`} />
    </Card>
  ));
}
