// Custom emojis (manage_custom_emojis): local ones (or remote ones with ?remote=1, filtered by shortcode and domain),
// an upload form (PNG, GIF or WebP of at most 256 KB, told by the bytes), and per emoji: category, picker visibility,
// enable / disable, delete, and for a remote one "copy to local". Changes go through
// src/services/admin/custom-emojis.ts; /api/v1/custom_emojis shows local enabled ones.
import type { Ctx } from "../../../context";
import { mediaUrl } from "../../../entities/urls";
import { adminCustomEmojis, CATEGORY_MAX, type CustomEmojiRow } from "../../../services/admin/custom-emojis";
import { sectionPage, PostButton, type View } from "../kit";
import { Card, PostForm, RowsTable } from "../../form-parts";

const LIMIT = 100;

export async function showEmojis(c: Ctx, view: View) {
  const cfg = c.get("config");
  const remote = c.req.query("remote") === "1";
  const query = (c.req.query("q") ?? "").slice(0, 64);
  const domain = (c.req.query("domain") ?? "").slice(0, 253);
  const pageNo = Math.min(Math.max(Number.parseInt(c.req.query("page") ?? "1", 10) || 1, 1), 1000);
  const rows = await adminCustomEmojis(c.get("db"), { remote, query, domain }, LIMIT, (pageNo - 1) * LIMIT);
  const imageOf = (e: CustomEmojiRow) => (e.imageKey ? mediaUrl(cfg, e.imageKey) : (e.imageRemoteUrl ?? ""));
  const v = view.values?.form === "upload" ? view.values : undefined;
  const here = (page: number) => {
    const q = new URLSearchParams();
    if (remote) q.set("remote", "1");
    if (query) q.set("q", query);
    if (domain) q.set("domain", domain);
    if (page > 1) q.set("page", String(page));
    const s = q.toString();
    return s ? `/admin/emojis?${s}` : "/admin/emojis";
  };
  return sectionPage(c, view, "/admin/emojis", (f) => (
    <>
      <Card title="Upload an emoji">
        <PostForm action="/admin/emojis" csrf={f.csrf} form="upload" enctype="multipart/form-data">
          <label for="emoji-shortcode">Shortcode (letters, digits and _; at least 2)</label>
          <input type="text" id="emoji-shortcode" name="shortcode" required pattern="[A-Za-z0-9_]{2,64}" maxlength={64} value={v?.shortcode ?? ""} />
          <label for="emoji-category">Category (optional)</label>
          <input type="text" id="emoji-category" name="category" maxlength={CATEGORY_MAX} value={v?.category ?? ""} />
          <label for="emoji-image">Image (PNG, GIF or WebP, at most 256 KB)</label>
          <input type="file" id="emoji-image" name="image" required accept="image/png,image/gif,image/webp" />
          <div>
            <button type="submit">Upload</button>
          </div>
        </PostForm>
      </Card>
      <Card>
        <form method="get" action="/admin/emojis" class="row">
          <label>
            <input type="radio" name="remote" value="0" checked={!remote} /> Local
          </label>
          <label>
            <input type="radio" name="remote" value="1" checked={remote} /> Remote
          </label>
          <label>
            Shortcode <input type="text" name="q" value={query} maxlength={64} />
          </label>
          <label>
            Domain <input type="text" name="domain" value={domain} maxlength={253} />
          </label>
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        <RowsTable
          rows={rows}
          empty="No emojis."
          row={(e) => (
            <tr data-emoji={e.domain ? `${e.shortcode}@${e.domain}` : e.shortcode}>
              <td>{imageOf(e) ? <img class="emoji" src={imageOf(e)} alt={`:${e.shortcode}:`} /> : null}</td>
              <td>
                <code>:{e.shortcode}:</code>
                {e.domain ? <div class="muted">{e.domain}</div> : null}
                <div class="muted">
                  {e.disabled ? "disabled" : "enabled"}
                  {e.visibleInPicker ? "" : " · hidden from the picker"}
                </div>
              </td>
              <td>
                <PostForm action={`/admin/emojis/${e.id}`} csrf={f.csrf} class="row">
                  <input type="text" name="category" aria-label="Category" placeholder="Category" maxlength={CATEGORY_MAX} value={e.category ?? ""} />
                  <button type="submit" class="secondary">
                    Set category
                  </button>
                </PostForm>
              </td>
              <td>
                <div class="row">
                  <PostButton
                    action={`/admin/emojis/${e.id}`}
                    csrf={f.csrf}
                    label={e.disabled ? "Enable" : "Disable"}
                    fields={{ disabled: e.disabled ? "0" : "1" }}
                  />
                  <PostButton
                    action={`/admin/emojis/${e.id}`}
                    csrf={f.csrf}
                    label={e.visibleInPicker ? "Hide from picker" : "Show in picker"}
                    fields={{ visible_in_picker: e.visibleInPicker ? "0" : "1" }}
                  />
                  {e.domain ? <PostButton action={`/admin/emojis/${e.id}/copy`} csrf={f.csrf} label="Copy to local" /> : null}
                  <PostButton action={`/admin/emojis/${e.id}/delete`} csrf={f.csrf} label="Delete" danger />
                </div>
              </td>
            </tr>
          )}
        />
        <p>
          {pageNo > 1 ? <a href={here(pageNo - 1)}>Previous</a> : null} {rows.length === LIMIT ? <a href={here(pageNo + 1)}>Next</a> : null}
        </p>
      </Card>
    </>
  ));
}
