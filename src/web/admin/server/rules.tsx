// Server rules (manage_rules): the rules in their order, each editable (text, hint, priority) and deletable, and a
// form for a new one. Changes go through src/services/admin/rules.ts; the instance documents list them.
import type { Ctx } from "../../../context";
import { listRules, RULE_HINT_MAX, RULE_TEXT_MAX } from "../../../services/admin/rules";
import { sectionPage, PostButton, type View } from "../kit";
import { Card, PostForm } from "../../form-parts";
import type { RuleRow } from "../../../db/schema";

function Fields(p: { r?: RuleRow; values?: Record<string, string> }) {
  const v = p.values;
  return (
    <>
      <label>
        Rule
        <input type="text" name="text" required maxlength={RULE_TEXT_MAX} value={v?.text ?? p.r?.text ?? ""} />
      </label>
      <label>
        Hint (optional)
        <input type="text" name="hint" maxlength={RULE_HINT_MAX} value={v?.hint ?? p.r?.hint ?? ""} />
      </label>
      <label>
        Priority (lower comes first) <input type="number" name="priority" value={v?.priority ?? String(p.r?.priority ?? 0)} />
      </label>
    </>
  );
}

export async function showRules(c: Ctx, view: View) {
  const rows = await listRules(c.get("db"));
  return sectionPage(c, view, "/admin/rules", (f) => (
    <>
      <Card title="Add a rule">
        <PostForm action="/admin/rules" csrf={f.csrf} form="create">
          <Fields values={view.values?.form === "create" ? view.values : undefined} />
          <button type="submit">Add rule</button>
        </PostForm>
      </Card>
      <Card>
        {rows.length ? null : <p class="muted">No rules yet.</p>}
        <ol>
          {rows.map((r) => (
            <li data-rule={r.id}>
              <strong>{r.text}</strong>
              {r.hint ? <div class="muted">{r.hint}</div> : null}
              <details>
                <summary>Edit</summary>
                <PostForm action={`/admin/rules/${r.id}`} csrf={f.csrf} form={r.id}>
                  <Fields r={r} values={view.values?.form === r.id ? view.values : undefined} />
                  <button type="submit">Save</button>
                </PostForm>
              </details>
              <PostButton action={`/admin/rules/${r.id}/delete`} csrf={f.csrf} label="Delete" danger />
            </li>
          ))}
        </ol>
      </Card>
    </>
  ));
}
