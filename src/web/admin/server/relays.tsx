// Relays (manage_federation): the list with each relay's state, a form to add one by its inbox URL, and enable,
// disable and remove. Changes go through src/services/admin/relays.ts, as the API's (/api/v1/admin/relays) do.
import type { Ctx } from "../../../context";
import { listRelays } from "../../../services/admin/relays";
import { sectionPage, PostButton, when, type View } from "../kit";
import { Card, NamedCell, PostForm, RowsTable } from "../../form-parts";
import type { RelayRow } from "../../../db/schema";

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
        <RowsTable rows={relays} empty="No relay." row={(r) => <RelayItem r={r} csrf={f.csrf} />} />
      </Card>
    </>
  ));
}

/** One relay: its inbox and state, and the buttons that change it. */
function RelayItem({ r, csrf }: { r: RelayRow; csrf: string }) {
  const on = r.state === "pending" || r.state === "accepted";
  return (
    <tr data-relay={r.inboxUrl}>
      <NamedCell name={r.inboxUrl} detail={`${STATE_LABEL[r.state]} · added ${when(r.createdAt)}`} />
      <td>
        <PostButton action={`/admin/relays/${r.id}/${on ? "disable" : "enable"}`} csrf={csrf} label={on ? "Disable" : "Enable"} />{" "}
        <PostButton action={`/admin/relays/${r.id}/delete`} csrf={csrf} label="Remove" danger />
      </td>
    </tr>
  );
}
