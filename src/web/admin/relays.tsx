// Relays (manage_federation): the list with each relay's state, a form to add one by its inbox URL, and enable,
// disable and remove. Changes go through src/services/relays.ts, as the API's (/api/v1/admin/relays) do.
import type { Ctx } from "../../context";
import { listRelays } from "../../services/relays";
import { sectionPage, PostButton, when, type View } from "./kit";
import { Card, PostForm, RowsTable } from "../form-parts";

const STATE_LABEL = { idle: "disabled", pending: "waiting for the relay's approval", accepted: "enabled", rejected: "rejected by the relay" } as const;

export async function showRelays(c: Ctx, view: View) {
  const relays = await listRelays(c.get("db"));
  return sectionPage(c, view, "/admin/relays", (f) => (
    <>
      <Card title="Add a relay">
        <p class="muted">
          A relay passes public posts between the servers that subscribe to it: this server's public posts go to the relay, and the relay's posts from other
          servers appear on the federated timeline.
        </p>
        <PostForm action="/admin/relays" csrf={f.csrf} class="row">
          <label>
            Inbox URL{" "}
            <input type="text" name="inbox_url" required maxlength={2048} placeholder="https://relay.example/inbox" value={view.values?.inbox_url ?? ""} />
          </label>
          <button type="submit">Add relay</button>
        </PostForm>
      </Card>
      <Card title="Relays">
        <RowsTable
          rows={relays}
          empty="No relay."
          row={(r) => (
            <tr data-relay={r.inboxUrl}>
              <td>
                <strong>{r.inboxUrl}</strong>
                <div class="muted">
                  {STATE_LABEL[r.state]} · added {when(r.createdAt)}
                </div>
              </td>
              <td>
                {r.state === "pending" || r.state === "accepted" ? (
                  <PostButton action={`/admin/relays/${r.id}/disable`} csrf={f.csrf} label="Disable" />
                ) : (
                  <PostButton action={`/admin/relays/${r.id}/enable`} csrf={f.csrf} label="Enable" />
                )}{" "}
                <PostButton action={`/admin/relays/${r.id}/delete`} csrf={f.csrf} label="Remove" danger />
              </td>
            </tr>
          )}
        />
      </Card>
    </>
  ));
}
