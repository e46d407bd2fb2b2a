// /settings/profile: display name, bio, pictures, profile fields and the account flags, saved through updateProfile
// (the service behind PATCH /api/v1/accounts/update_credentials).
import type { AccountRow } from "../../db/schema";
import { MAX_DISPLAY_NAME, MAX_FIELD_NAME, MAX_FIELD_VALUE, MAX_FIELDS, MAX_NOTE } from "../../services/accounts/profile";
import { SettingsLayout } from "./kit";
import { PostForm } from "../form-parts";

/** The two inputs of a profile field: which part, its label, its length limit. */
const FIELD_PARTS = [
  ["name", "Label", MAX_FIELD_NAME],
  ["value", "Content", MAX_FIELD_VALUE],
] as const;

export function ProfileSettingsPage(p: {
  siteTitle: string;
  csrf: string;
  account: AccountRow;
  avatar: string;
  header: string;
  flash?: string;
  error?: string;
}) {
  const a = p.account;
  const fields = Array.from({ length: MAX_FIELDS }, (_, i) => a.fields[i] ?? { name: "", value: "" });
  const bot = a.actorType === "Service" || a.actorType === "Application";
  return (
    <SettingsLayout siteTitle={p.siteTitle} title="Profile" path="/settings/profile" flash={p.flash} error={p.error}>
      <div class="card">
        <h1>Profile</h1>
        <PostForm action="/settings/profile" csrf={p.csrf} enctype="multipart/form-data">
          <label for="display_name">Display name</label>
          <input type="text" id="display_name" name="display_name" maxlength={MAX_DISPLAY_NAME} value={a.displayName} />
          <label for="note">Bio</label>
          <textarea id="note" name="note" maxlength={MAX_NOTE}>
            {a.noteSource}
          </textarea>
          <label for="avatar">Avatar</label>
          <img src={p.avatar} alt="" width={48} height={48} />
          <input type="file" id="avatar" name="avatar" accept="image/png,image/jpeg,image/gif,image/webp" />
          <label for="header">Header</label>
          <img src={p.header} alt="" height={48} />
          <input type="file" id="header" name="header" accept="image/png,image/jpeg,image/gif,image/webp" />
          <h2 style="margin-top:1rem">Profile metadata</h2>
          {fields.map((f, i) => (
            <div class="fieldrow">
              {FIELD_PARTS.map(([part, label, max]) => (
                <input
                  type="text"
                  name={`fields_attributes[${i}][${part}]`}
                  aria-label={`${label} ${i + 1}`}
                  placeholder={label}
                  maxlength={max}
                  value={f[part]}
                />
              ))}
            </div>
          ))}
          <Flag name="locked" checked={a.locked} label="Require follow requests (locked account)" />
          <Flag name="bot" checked={bot} label="This is a bot account" />
          <Flag name="discoverable" checked={!!a.discoverable} label="Feature profile and posts in discovery" />
          <Flag name="indexable" checked={!!a.indexable} label="Include public posts in search results" />
          <button type="submit">Save changes</button>
        </PostForm>
      </div>
    </SettingsLayout>
  );
}

/** A checkbox that always sends a value: the hidden "0" first, the box's "1" after it wins when ticked (Rails' way). */
export function Flag(p: { name: string; checked: boolean; label: string }) {
  return (
    <label class="check">
      <input type="hidden" name={p.name} value="0" />
      <input type="checkbox" name={p.name} value="1" checked={p.checked} /> {p.label}
    </label>
  );
}
