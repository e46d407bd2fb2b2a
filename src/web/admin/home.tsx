// /admin: the sections this staff member may open.
import type { Ctx } from "../../context";
import { hasPermission } from "../../lib/security/permissions";
import { sectionPage, SECTIONS, type View } from "./kit";
import { Card } from "../form-parts";

export function showHome(c: Ctx, view: View) {
  return sectionPage(c, view, "/admin", (f) => (
    <Card>
      <p>Signed in as @{f.username}.</p>
      <ul>
        {SECTIONS.filter((s) => hasPermission(f.permissions, s.permission)).map((s) => (
          <li>
            <a href={s.path}>{s.label}</a>
          </li>
        ))}
      </ul>
    </Card>
  ));
}
