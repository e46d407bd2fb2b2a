// The audit log (view_audit_log): every staff action, newest first, 50 a page (src/queries/admin-action-logs.ts).
import type { Ctx } from "../../context";
import { parseId } from "../../lib/ids";
import { actionLogPage } from "../../queries/admin-action-logs";
import { adminPage, frameOf, when, type View } from "./kit";

const LIMIT = 50;

export async function showLog(c: Ctx, view: View) {
  const maxId = parseId(c.req.query("max_id"));
  const rows = await actionLogPage(c.get("db"), maxId, LIMIT);
  const last = rows.at(-1);
  return adminPage(
    c,
    { frame: frameOf(c), title: "Audit log", current: "/admin/log", view },
    <div class="card">
      {rows.length ? (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>Action</th>
              <th>Target</th>
            </tr>
          </thead>
          <tbody>
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
          </tbody>
        </table>
      ) : (
        <p class="muted">Nothing has been logged{maxId ? " before this point" : ""}.</p>
      )}
      {rows.length === LIMIT && last ? (
        <p>
          <a href={`/admin/log?max_id=${last.id}`}>Older</a>
        </p>
      ) : null}
    </div>,
  );
}
