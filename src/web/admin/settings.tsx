// Server settings (manage_settings): title, descriptions, contact e-mail, registrations mode and message, and the
// thumbnail. A blank field falls back to the operator's env default (shown as the placeholder). Saved through
// src/services/admin-settings.ts; the instance documents show them.
import type { Ctx } from "../../context";
import { mediaUrl } from "../../entities/urls";
import { REGISTRATIONS_MODES, readSettings } from "../../services/admin-settings";
import { SETTING } from "../../services/instance";
import { adminPage, frameOf, PostButton, type View } from "./kit";
import { PostForm } from "../form-parts";

const MODE_LABELS: Record<string, string> = { open: "Anyone can sign up", approval: "Sign-ups need approval", closed: "Nobody can sign up" };

export async function showSettings(c: Ctx, view: View) {
  const f = frameOf(c);
  const cfg = c.get("config");
  const s = await readSettings(c.get("db"));
  const v = view.values?.form === "settings" ? view.values : undefined;
  const val = (field: string, key: string) => v?.[field] ?? s[key] ?? "";
  const mode = v?.registrations_mode ?? s[SETTING.registrationsMode] ?? cfg.registrations;
  const thumbnail = s[SETTING.thumbnail];
  return adminPage(
    c,
    { frame: f, title: "Server settings", current: "/admin/settings", view },
    <>
      <div class="card">
        <PostForm action="/admin/settings" csrf={f.csrf} form="settings">
          <label for="s-title">Server name</label>
          <input type="text" id="s-title" name="title" maxlength={200} placeholder={cfg.title} value={val("title", SETTING.title)} />
          <label for="s-short">Short description</label>
          <input
            type="text"
            id="s-short"
            name="short_description"
            maxlength={500}
            placeholder={cfg.description}
            value={val("short_description", SETTING.shortDescription)}
          />
          <label for="s-desc">Description</label>
          <textarea id="s-desc" name="description" maxlength={10000}>
            {val("description", SETTING.description)}
          </textarea>
          <label for="s-email">Contact e-mail</label>
          <input
            type="email"
            id="s-email"
            name="contact_email"
            maxlength={320}
            placeholder={cfg.contactEmail}
            value={val("contact_email", SETTING.contactEmail)}
          />
          <label for="s-mode">Registrations</label>
          <select id="s-mode" name="registrations_mode">
            {REGISTRATIONS_MODES.map((m) => (
              <option value={m} selected={m === mode}>
                {MODE_LABELS[m]}
              </option>
            ))}
          </select>
          <label for="s-regmsg">Message when sign-ups are closed (optional)</label>
          <input type="text" id="s-regmsg" name="registrations_message" maxlength={1000} value={val("registrations_message", SETTING.registrationsMessage)} />
          <button type="submit">Save settings</button>
        </PostForm>
      </div>
      <div class="card">
        <h2>Thumbnail</h2>
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
      </div>
    </>,
  );
}
