// Pending sign-ups (manage_users): local accounts awaiting approval, newest first, 50 a page, with approve and reject
// (src/services/admin/accounts.ts approveAccount / rejectAccount).
import type { Ctx } from "../../../context";
import { parseId } from "../../../lib/text/ids";
import { adminAccountsPage } from "../../../services/admin/accounts";
import { sectionPage, Older, PostButton, when, type View } from "../kit";
import { Card, Table } from "../../form-parts";

const LIMIT = 50;

export async function showPending(c: Ctx, view: View) {
  const maxId = parseId(c.req.query("max_id"));
  const rows = await adminAccountsPage(c.get("db"), { origin: "local", status: "pending" }, { limit: LIMIT, ...(maxId ? { maxId } : {}) });
  return sectionPage(c, view, "/admin/pending", (f) => (
    <Card>
      {rows.length ? (
        <Table headers={["Account", "E-mail", "Reason", "Signed up", "Actions"]}>
          {rows.map((r) => (
            <tr data-account={r.account.username}>
              <td>@{r.account.username}</td>
              <td>{r.user?.email ?? ""}</td>
              <td>{r.user?.reason ?? ""}</td>
              <td>
                {when(r.account.createdAt)}
                {r.user?.signUpIp ? <div class="muted">{r.user.signUpIp}</div> : null}
              </td>
              <td>
                <PostButton action={`/admin/pending/${r.account.id}/approve`} csrf={f.csrf} label="Approve" />{" "}
                <PostButton action={`/admin/pending/${r.account.id}/reject`} csrf={f.csrf} label="Reject" danger />
              </td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No one is waiting for approval.</p>
      )}
      <Older rows={rows} limit={LIMIT} href={(last) => `/admin/pending?max_id=${last.account.id}`} />
    </Card>
  ));
}
