// /admin: the sections this staff member may open, each with what it is for.
import type { Ctx } from "../../context";
import { hasPermission } from "../../lib/security/permissions";
import { sectionPage, SECTIONS, type View } from "./kit";
import { Card } from "../form-parts";

export function showHome(c: Ctx, view: View) {
  return sectionPage(c, view, "/admin", (f) => (
    <Card>
      <p>
        Signed in as @{f.username}. <a href="/settings/profile">Your account's settings</a> are apart from these.
      </p>
      <dl class="sections">
        {SECTIONS.filter((s) => hasPermission(f.permissions, s.permission)).map((s) => (
          <>
            <dt>
              <a href={s.path}>{s.label}</a>
            </dt>
            <dd class="muted">{s.hint}</dd>
          </>
        ))}
      </dl>
    </Card>
  ));
}
