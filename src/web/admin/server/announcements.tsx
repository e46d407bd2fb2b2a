// Announcements (manage_announcements): every announcement, newest first, with publish / unpublish, edit and delete,
// and a form for a new one (text, optional start and end in UTC, all day, published). Changes go through
// src/services/instance/announcements.ts; the text is shown as the staff wrote it (escaped), not as rendered HTML.
import type { Ctx } from "../../../context";
import { allAnnouncements } from "../../../queries/instance/announcements";
import { sectionPage, PostButton, when, type View } from "../kit";
import { Card, PostForm } from "../../form-parts";
import type { AnnouncementRow } from "../../../db/schema";

const local = (ms: number | null) => (ms ? new Date(ms).toISOString().slice(0, 16) : "");

function Fields(p: { a?: AnnouncementRow; values?: Record<string, string> }) {
  const v = p.values;
  return (
    <>
      <label>
        Text
        <textarea name="text" required maxlength={10000}>
          {v?.text ?? p.a?.text ?? ""}
        </textarea>
      </label>
      <div class="row">
        <label>
          Starts (UTC) <input type="datetime-local" name="starts_at" value={v?.starts_at ?? local(p.a?.startsAt ?? null)} />
        </label>
        <label>
          Ends (UTC) <input type="datetime-local" name="ends_at" value={v?.ends_at ?? local(p.a?.endsAt ?? null)} />
        </label>
        <label>
          <input type="checkbox" name="all_day" value="1" checked={v ? v.all_day === "1" : !!p.a?.allDay} /> All day
        </label>
        {p.a ? null : (
          <label>
            <input type="checkbox" name="published" value="1" checked={v ? v.published === "1" : true} /> Publish now
          </label>
        )}
      </div>
    </>
  );
}

export async function showAnnouncements(c: Ctx, view: View) {
  const rows = await allAnnouncements(c.get("db"));
  const creating = view.values?.form === "create" ? view.values : undefined;
  return sectionPage(c, view, "/admin/announcements", (f) => (
    <>
      <Card title="New announcement">
        <PostForm action="/admin/announcements" csrf={f.csrf} form="create">
          <Fields values={creating} />
          <button type="submit">Create</button>
        </PostForm>
      </Card>
      {rows.map((a) => (
        <div class="card" data-announcement={a.id}>
          <p class="pre">{a.text}</p>
          <p class="muted">
            {a.published ? `Published ${when(a.publishedAt)}` : "Not published"}
            {a.startsAt ? ` · ${when(a.startsAt)} to ${when(a.endsAt)}` : ""}
            {a.allDay ? " · all day" : ""}
          </p>
          <div class="row">
            {a.published ? (
              <PostButton action={`/admin/announcements/${a.id}/unpublish`} csrf={f.csrf} label="Unpublish" />
            ) : (
              <PostButton action={`/admin/announcements/${a.id}/publish`} csrf={f.csrf} label="Publish" />
            )}
            <PostButton action={`/admin/announcements/${a.id}/delete`} csrf={f.csrf} label="Delete" danger />
          </div>
          <details>
            <summary>Edit</summary>
            <PostForm action={`/admin/announcements/${a.id}`} csrf={f.csrf}>
              <Fields a={a} values={view.values?.form === a.id ? view.values : undefined} />
              <input type="hidden" name="form" value={a.id} />
              <button type="submit">Save</button>
            </PostForm>
          </details>
        </div>
      ))}
    </>
  ));
}
