// Roles (manage_roles): every role with its permissions and how many users hold it, an edit form per role and a form
// for a new one. src/services/admin/roles.ts applies Mastodon's rules (only roles below your own, no permission you
// lack, your own role's permissions and position stay as they are).
import type { Ctx } from "../../../context";
import type { RoleRow } from "../../../db/schema";
import { PERMISSIONS, type Permission } from "../../../lib/security/permissions";
import { listRoles, ROLE_NAME_MAX } from "../../../services/admin/roles";
import { sectionPage, type View } from "../kit";
import { Card, PostForm } from "../../form-parts";

const NAMES = Object.keys(PERMISSIONS) as Permission[];
const label = (p: string) => p.replace(/_/g, " ");

function Fields(p: { r?: RoleRow; values?: Record<string, string>; checked?: Set<string> }) {
  const v = p.values;
  const has = (name: Permission) => (p.checked ? p.checked.has(name) : !!p.r && (p.r.permissions & PERMISSIONS[name]) !== 0);
  return (
    <>
      <div class="row">
        <label>
          Name <input type="text" name="name" required maxlength={ROLE_NAME_MAX} value={v?.name ?? p.r?.name ?? ""} />
        </label>
        <label>
          Colour <input type="text" name="color" placeholder="#rrggbb" maxlength={7} value={v?.color ?? p.r?.color ?? ""} />
        </label>
        <label>
          Position <input type="number" name="position" value={v?.position ?? String(p.r?.position ?? 0)} />
        </label>
        <label>
          <input type="checkbox" name="highlighted" value="1" checked={v ? v.highlighted === "1" : !!p.r?.highlighted} /> Show the role on profiles
        </label>
      </div>
      <fieldset>
        <legend>Permissions</legend>
        <input type="hidden" name="permissions_given" value="1" />
        <div class="row">
          {NAMES.map((n) => (
            <label>
              <input type="checkbox" name="permissions[]" value={n} checked={has(n)} /> {label(n)}
            </label>
          ))}
        </div>
      </fieldset>
    </>
  );
}

export async function showRoles(c: Ctx, view: View, submitted?: Set<string>) {
  const roles = await listRoles(c.get("db"));
  const form = view.values?.form;
  return sectionPage(c, view, "/admin/roles", (f) => (
    <>
      {roles.map((r) => (
        <div class="card" data-role={r.name}>
          <h2>
            {r.name}{" "}
            <span class="muted" data-users={r.users}>
              (position {r.position}, {r.users === 1 ? "1 user" : `${r.users} users`})
            </span>
          </h2>
          <p class="muted">
            {(r.permissions & PERMISSIONS.administrator) !== 0
              ? "Every permission (administrator)"
              : NAMES.filter((n) => (r.permissions & PERMISSIONS[n]) !== 0)
                  .map(label)
                  .join(", ") || "No permissions"}
          </p>
          <details>
            <summary>Edit</summary>
            <PostForm action={`/admin/roles/${r.id}`} csrf={f.csrf} form={r.id}>
              <Fields r={r} values={form === r.id ? view.values : undefined} checked={form === r.id ? submitted : undefined} />
              <button type="submit">Save</button>
            </PostForm>
          </details>
        </div>
      ))}
      <Card title="New role">
        <PostForm action="/admin/roles" csrf={f.csrf} form="create">
          <Fields values={form === "create" ? view.values : undefined} checked={form === "create" ? submitted : undefined} />
          <button type="submit">Create role</button>
        </PostForm>
      </Card>
    </>
  ));
}
