// /settings/preferences: posting defaults (through updateProfile, as update_credentials' `source[...]`) and reading
// preferences (src/services/accounts/preferences.ts): the values GET /api/v1/preferences reports to apps.
import type { UserSettings } from "../../db/schema";
import { Flag } from "./profile";
import { SettingsLayout } from "./kit";
import { PostForm } from "../form-parts";

const VISIBILITIES = [
  ["public", "Public"],
  ["unlisted", "Unlisted"],
  ["private", "Followers only"],
] as const;
const MEDIA = [
  ["default", "Hide media marked as sensitive"],
  ["show_all", "Always show media"],
  ["hide_all", "Always hide media"],
] as const;

/** A select named `name` (and its id, for its label) over [value, label] pairs. */
function Choice(p: { name: string; options: readonly (readonly [string, string])[]; selected: string }) {
  return (
    <select id={p.name} name={p.name}>
      {p.options.map(([v, label]) => (
        <option value={v} selected={v === p.selected}>
          {label}
        </option>
      ))}
    </select>
  );
}

export function PreferencesPage(p: { siteTitle: string; csrf: string; settings: UserSettings; staff: boolean; mail: boolean; flash?: string; error?: string }) {
  const s = p.settings;
  const vis = s["posting:default:visibility"] ?? "public";
  const media = s["reading:expand:media"] ?? "default";
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Preferences" path="/settings/preferences" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>Preferences</h1>
        <PostForm action="/settings/preferences" csrf={p.csrf}>
          <h2>Posting defaults</h2>
          <label for="privacy">Default post visibility</label>
          <Choice name="privacy" options={VISIBILITIES} selected={vis} />
          <label for="language">Default posting language (ISO 639 code, empty for none)</label>
          <input type="text" id="language" name="language" maxlength={16} value={s["posting:default:language"] ?? ""} />
          <Flag name="sensitive" checked={!!s["posting:default:sensitive"]} label="Always mark media as sensitive" />
          <h2 style="margin-top:1rem">Reading</h2>
          <label for="expand_media">Media display</label>
          <Choice name="expand_media" options={MEDIA} selected={media} />
          <Flag name="expand_spoilers" checked={!!s["reading:expand:spoilers"]} label="Always expand posts marked with content warnings" />
          <p class="muted">Apps read these through /api/v1/preferences; how a post looks (autoplay, animations) is up to each app.</p>
          {p.staff ? (
            <>
              <h2 style="margin-top:1rem">E-mail notices for staff</h2>
              {p.mail ? null : <p class="muted">This server is not set up to send e-mail: these take effect once it is.</p>}
              <Flag name="notify_report" checked={s["notification_emails:report"] !== false} label="A new report is submitted" />
              <Flag name="notify_pending_account" checked={s["notification_emails:pending_account"] !== false} label="A new account waits for review" />
              <Flag name="notify_trends" checked={s["notification_emails:trends"] !== false} label="Trends wait for review (every 2 hours at most)" />
            </>
          ) : null}
          <button type="submit">Save changes</button>
        </PostForm>
      </div>
    </SettingsLayout>
  );
}
