// Server settings (manage_settings): title, descriptions, contact e-mail, registrations mode and message, and the
// thumbnail. A blank field falls back to the operator's env default (shown as the placeholder). Saved through
// src/services/admin/settings.ts; the instance documents show them.
import type { Ctx } from "../../../context";
import { mediaUrl } from "../../../entities/urls";
import { REGISTRATIONS_MODES, TEXT_FIELDS } from "../../../services/admin/settings";
import { loadSettings, registrationsMode, SETTING } from "../../../services/instance/instance";
import { sectionPage, PostButton, type View } from "../kit";
import { Card, PostForm } from "../../form-parts";

const MODE_LABELS: Record<string, string> = { open: "Anyone can sign up", approval: "Sign-ups need approval", closed: "Nobody can sign up" };

type TextField = keyof typeof TEXT_FIELDS;

/** One setting: its label and input (the placeholder shows the env default a blank field falls back to). */
function SettingInput(p: { field: TextField; id: string; label: string; type?: "email"; placeholder?: string; value: string }) {
  return (
    <>
      <label for={p.id}>{p.label}</label>
      <input type={p.type ?? "text"} id={p.id} name={p.field} maxlength={TEXT_FIELDS[p.field].max} placeholder={p.placeholder} value={p.value} />
    </>
  );
}

export async function showSettings(c: Ctx, view: View) {
  const cfg = c.get("config");
  const s = await loadSettings(c.get("db"));
  const v = view.values?.form === "settings" ? view.values : undefined;
  const val = (field: TextField) => v?.[field] ?? s[TEXT_FIELDS[field].key] ?? "";
  const mode = v?.registrations_mode ?? registrationsMode(cfg, s);
  const thumbnail = s[SETTING.thumbnail];
  return sectionPage(c, view, "/admin/settings", (f) => (
    <>
      <Card>
        <p class="muted">A blank field uses the default of the server's configuration, shown in grey.</p>
        <PostForm action="/admin/settings" csrf={f.csrf} form="settings">
          <SettingInput field="title" id="s-title" label="Server name" placeholder={cfg.title} value={val("title")} />
          <SettingInput field="short_description" id="s-short" label="Short description" placeholder={cfg.description} value={val("short_description")} />
          <label for="s-desc">Description</label>
          <textarea id="s-desc" name="description" maxlength={TEXT_FIELDS.description.max}>
            {val("description")}
          </textarea>
          <SettingInput field="contact_email" type="email" id="s-email" label="Contact e-mail" placeholder={cfg.contactEmail} value={val("contact_email")} />
          <label for="s-mode">Registrations</label>
          <select id="s-mode" name="registrations_mode">
            {REGISTRATIONS_MODES.map((m) => (
              <option value={m} selected={m === mode}>
                {MODE_LABELS[m]}
              </option>
            ))}
          </select>
          <SettingInput field="registrations_message" id="s-regmsg" label="Message when sign-ups are closed (optional)" value={val("registrations_message")} />
          <label class="check">
            <input type="hidden" name="trendable_by_default" value="0" />
            <input
              type="checkbox"
              id="s-trendable"
              name="trendable_by_default"
              value="1"
              checked={(v?.trendable_by_default ?? s[SETTING.trendableByDefault]) === "1"}
            />{" "}
            Allow trends without prior review
          </label>
          <p class="muted">
            Off (Mastodon's default): hashtags, posts and links trend publicly only once staff approved them, and staff who want it are mailed what awaits
            review every 2 hours. On: they trend until staff reject them.
          </p>
          <button type="submit">Save settings</button>
        </PostForm>
      </Card>
      <Card title="Thumbnail">
        {thumbnail ? (
          <p>
            <img class="thumb" src={mediaUrl(cfg, thumbnail)} alt="Current thumbnail" />
          </p>
        ) : (
          <p class="muted">The default image is used.</p>
        )}
        <PostForm action="/admin/settings/thumbnail" csrf={f.csrf} enctype="multipart/form-data">
          <label for="s-thumb">Image (at most 8 MB)</label>
          <input type="file" id="s-thumb" name="thumbnail" required accept="image/*" />
          <div>
            <button type="submit">Upload thumbnail</button>
          </div>
        </PostForm>
        {thumbnail ? <PostButton action="/admin/settings/thumbnail/delete" csrf={f.csrf} label="Remove thumbnail" danger /> : null}
      </Card>
    </>
  ));
}
