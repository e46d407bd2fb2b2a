// Domain blocks and allows (manage_federation): the lists, a form to block a domain (severity, reject media and
// reports, obfuscation, private and public comments), an edit form per block, delete; allows with add and delete.
// Changes go through src/services/admin/blocks/domain-blocks.ts and admin-domain-allows.ts, as the API's do.
import type { Ctx } from "../../../context";
import { domainAllowsPage } from "../../../services/admin/blocks/domain-allows";
import { DOMAIN_BLOCK_SEVERITIES, domainBlocksPage } from "../../../services/admin/blocks/domain-blocks";
import { sectionPage, PostButton, when, type View } from "../kit";
import { Card, NamedCell, PostForm, RowsTable } from "../../form-parts";
import type { DomainBlockRow } from "../../../db/schema";

const LIMIT = 200;

/** The severities as Mastodon's form names them. */
const SEVERITY: Record<string, string> = { silence: "Limit", suspend: "Suspend", noop: "None (only the options below)" };

function BlockFields(p: { b?: Partial<DomainBlockRow>; values?: Record<string, string> }) {
  const v = p.values;
  const severity = v?.severity ?? p.b?.severity ?? "silence";
  const checked = (name: string, current: boolean | undefined) => (v ? v[name] === "1" : !!current);
  return (
    <>
      <div class="row">
        <label>
          Severity{" "}
          <select name="severity">
            {DOMAIN_BLOCK_SEVERITIES.map((s) => (
              <option value={s} selected={s === severity}>
                {SEVERITY[s] ?? s}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" name="reject_media" value="1" checked={checked("reject_media", p.b?.rejectMedia)} /> Reject media
        </label>
        <label>
          <input type="checkbox" name="reject_reports" value="1" checked={checked("reject_reports", p.b?.rejectReports)} /> Reject reports
        </label>
        <label>
          <input type="checkbox" name="obfuscate" value="1" checked={checked("obfuscate", p.b?.obfuscate)} /> Obfuscate domain name
        </label>
      </div>
      <label>
        Private comment
        <input type="text" name="private_comment" maxlength={5000} value={v?.private_comment ?? p.b?.privateComment ?? ""} />
      </label>
      <label>
        Public comment
        <input type="text" name="public_comment" maxlength={5000} value={v?.public_comment ?? p.b?.publicComment ?? ""} />
      </label>
    </>
  );
}

export async function showDomains(c: Ctx, view: View) {
  const db = c.get("db");
  const [blocks, allows] = await Promise.all([domainBlocksPage(db, { limit: LIMIT }), domainAllowsPage(db, { limit: LIMIT })]);
  const creating = view.values?.form === "block" ? view.values : undefined;
  return sectionPage(c, view, "/admin/domains", (f) => (
    <>
      <Card title="Block a domain">
        <PostForm action="/admin/domains/blocks" csrf={f.csrf} form="block">
          <label for="block-domain">Domain</label>
          <input type="text" id="block-domain" name="domain" required maxlength={300} value={creating?.domain ?? ""} />
          <BlockFields values={creating} />
          <button type="submit">Block domain</button>
        </PostForm>
      </Card>
      <Card title="Domain blocks">
        <RowsTable
          rows={blocks}
          empty="No domain is blocked."
          row={(b) => (
            <tr data-domain-block={b.domain}>
              <NamedCell
                name={b.domain}
                detail={
                  <>
                    {SEVERITY[b.severity]?.replace(/ \(.*/, "") ?? b.severity}
                    {b.rejectMedia ? " · reject media" : ""}
                    {b.rejectReports ? " · reject reports" : ""}
                    {b.obfuscate ? " · obfuscated" : ""} · {when(b.createdAt)}
                  </>
                }
              >
                {b.publicComment ? <div>Public: {b.publicComment}</div> : null}
                {b.privateComment ? <div class="muted">Private: {b.privateComment}</div> : null}
                <details>
                  <summary>Edit</summary>
                  <PostForm action={`/admin/domains/blocks/${b.id}`} csrf={f.csrf}>
                    <BlockFields b={b} />
                    <button type="submit">Save</button>
                  </PostForm>
                </details>
              </NamedCell>
              <td>
                <PostButton action={`/admin/domains/blocks/${b.id}/delete`} csrf={f.csrf} label="Unblock" danger />
              </td>
            </tr>
          )}
        />
      </Card>
      <Card title="Allowed domains">
        <p class="muted">Used in limited federation mode (LIMITED_FEDERATION): only these domains federate.</p>
        <PostForm action="/admin/domains/allows" csrf={f.csrf} form="allow" class="row">
          <label>
            Domain <input type="text" name="domain" required maxlength={300} value={view.values?.form === "allow" ? (view.values.domain ?? "") : ""} />
          </label>
          <button type="submit">Allow domain</button>
        </PostForm>
        <RowsTable
          rows={allows}
          empty="No domain is on the allow list."
          row={(a) => (
            <tr data-domain-allow={a.domain}>
              <td>{a.domain}</td>
              <td class="muted">{when(a.createdAt)}</td>
              <td>
                <PostButton action={`/admin/domains/allows/${a.id}/delete`} csrf={f.csrf} label="Remove" danger />
              </td>
            </tr>
          )}
        />
      </Card>
    </>
  ));
}
