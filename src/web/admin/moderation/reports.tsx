// The reports queue (manage_reports): open reports (or resolved ones with ?resolved=1), newest first, 20 a page, each
// with what was reported and the actions: assign to me / unassign, resolve / reopen (src/services/admin/reports.ts),
// and an action on the reported account that resolves the report (admin-accounts accountAction with the report id).
// Reported statuses are shown as plain text (their HTML is reduced to text, then escaped).
import type { Ctx } from "../../../context";
import type { MastodonAdminAccount } from "../../../entities/admin/admin-account";
import { renderAdminReports } from "../../../entities/admin/admin-report";
import { parseId } from "../../../lib/text/ids";
import { adminReportsPage } from "../../../services/admin/reports";
import { htmlToText } from "../../public-pages";
import { sectionPage, Older, PostButton, when, type View } from "../kit";
import { Card, PostForm } from "../../form-parts";

const LIMIT = 20;

const acct = (a: MastodonAdminAccount | null) => (a ? `@${a.account.acct}` : "");

export async function showReports(c: Ctx, view: View) {
  const db = c.get("db");
  const resolved = c.req.query("resolved") === "1";
  const maxId = parseId(c.req.query("max_id"));
  const rows = await adminReportsPage(db, { resolved }, { limit: LIMIT, ...(maxId ? { maxId } : {}) });
  const reports = await renderAdminReports(db, c.get("config"), rows);
  const base = resolved ? "/admin/reports?resolved=1" : "/admin/reports";
  return sectionPage(
    c,
    view,
    "/admin/reports",
    (f) => (
      <>
        <Card>
          <p>{resolved ? <a href="/admin/reports">Show open reports</a> : <a href="/admin/reports?resolved=1">Show resolved reports</a>}</p>
          {reports.length ? null : <p class="muted">{resolved ? "No resolved reports." : "No open reports."}</p>}
        </Card>
        {reports.map((r) => (
          <div class="card" data-report={r.id}>
            <h2>{acct(r.target_account)}</h2>
            <p class="muted">
              Report #{r.id} · {r.category} · reported by {acct(r.account)} · {when(Date.parse(r.created_at))}
              {r.forwarded ? " · forwarded" : ""}
            </p>
            {r.comment ? <blockquote>{r.comment}</blockquote> : null}
            {r.rules.length ? <p>Rules: {r.rules.map((x) => x.text).join("; ")}</p> : null}
            {r.statuses.map((s) => (
              <div class="status">
                <p>{htmlToText(s.spoiler_text ? `${s.spoiler_text} — ${s.content}` : s.content, 500)}</p>
                <p class="muted">
                  {s.media_attachments.length ? `${s.media_attachments.length} attachment(s) · ` : ""}
                  {when(Date.parse(s.created_at))}
                </p>
              </div>
            ))}
            <p class="muted">
              {r.assigned_account ? `Assigned to ${acct(r.assigned_account)}. ` : "Not assigned. "}
              {r.action_taken ? `Resolved by ${acct(r.action_taken_by_account) || "someone"} at ${when(Date.parse(r.action_taken_at ?? ""))}.` : "Open."}
            </p>
            <div class="row">
              {r.assigned_account?.id === f.accountId ? (
                <PostButton action={`/admin/reports/${r.id}/unassign`} csrf={f.csrf} label="Unassign" />
              ) : (
                <PostButton action={`/admin/reports/${r.id}/assign_to_self`} csrf={f.csrf} label="Assign to me" />
              )}
              {r.action_taken ? (
                <PostButton action={`/admin/reports/${r.id}/reopen`} csrf={f.csrf} label="Reopen" />
              ) : (
                <PostButton action={`/admin/reports/${r.id}/resolve`} csrf={f.csrf} label="Resolve" />
              )}
              <PostForm action={`/admin/reports/${r.id}/action`} csrf={f.csrf} class="inline">
                <label>
                  Action on {acct(r.target_account)}:{" "}
                  <select name="type">
                    <option value="sensitive">Mark media as sensitive</option>
                    <option value="silence">Limit (silence)</option>
                    <option value="suspend">Suspend</option>
                    {r.target_account?.domain ? null : <option value="disable">Disable login</option>}
                  </select>
                </label>{" "}
                <button type="submit" class="danger">
                  Apply and resolve
                </button>
              </PostForm>
            </div>
          </div>
        ))}
        <Older rows={rows} limit={LIMIT} href={(last) => `${base}${resolved ? "&" : "?"}max_id=${last.id}`} card />
      </>
    ),
    resolved ? "Resolved reports" : "Open reports",
  );
}
