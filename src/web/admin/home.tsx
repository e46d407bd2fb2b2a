// /admin: the sections this staff member may open.
import type { Ctx } from "../../context";
import { hasPermission } from "../../lib/permissions";
import { adminPage, frameOf, SECTIONS, type View } from "./kit";
import { Card } from "../form-parts";

export function showHome(c: Ctx, view: View) {
  const f = frameOf(c);
  const sections = SECTIONS.filter((s) => hasPermission(f.permissions, s.permission));
  return adminPage(
    c,
    { frame: f, title: "Administration", current: "/admin", view },
    <Card>
      <p>Signed in as @{f.username}.</p>
      <ul>
        {sections.map((s) => (
          <li>
            <a href={s.path}>{s.label}</a>
          </li>
        ))}
      </ul>
    </Card>,
  );
}
