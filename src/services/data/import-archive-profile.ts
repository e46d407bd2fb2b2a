// The last round of an archive import whose owner asked for it: the display name, bio, fields, avatar and header of
// actor.json (and avatar.<ext> / header.<ext> beside it) become the account's, through the same updateProfile as
// PATCH /api/v1/accounts/update_credentials. That is the one change of an import that other servers hear of: the
// profile's Update, as after any profile change, so that they do not keep showing the old one. Texts longer than Tern's
// limits are cut to them; a picture that is not an image within the avatar limit is left out.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type AccountRow, type ArchiveImportRow, users } from "../../db/schema";
import type { UserViewer } from "../../db/viewer";
import type { Effects } from "../../effects/collector";
import type { Config, Env } from "../../env";
import { plainText, sanitizeHtml } from "../../federation/remote/sanitize";
import { type RandomAccess, readEntry, type ZipEntryInfo } from "../../lib/text/zip-read";
import { AVATAR_LIMIT } from "../../media/store";
import { MAX_DISPLAY_NAME, MAX_FIELD_NAME, MAX_FIELD_VALUE, MAX_FIELDS, MAX_NOTE, updateProfile } from "../accounts/profile";
import { ARCHIVE_FILES, readActor } from "./import-archive";

const cut = (s: unknown, max: number) => (typeof s === "string" ? Array.from(s).slice(0, max).join("") : "");
const text = (html: unknown, max: number) => cut(plainText(sanitizeHtml(typeof html === "string" ? html : "")).trim(), max);

async function picture(src: RandomAccess, dir: Map<string, ZipEntryInfo>, ref: unknown): Promise<File | undefined> {
  const url = ref && typeof ref === "object" ? (ref as Record<string, unknown>).url : undefined;
  const e = typeof url === "string" ? dir.get(url) : undefined;
  if (!e || e.size === 0 || e.size > AVATAR_LIMIT) return undefined;
  return new File([await readEntry(src, e)], e.name);
}

export async function takeArchiveProfile(
  db: DB,
  env: Pick<Env, "MEDIA">,
  fx: Effects,
  cfg: Config,
  imp: ArchiveImportRow,
  me: AccountRow,
  src: RandomAccess,
  dir: Map<string, ZipEntryInfo>,
): Promise<void> {
  const entry = dir.get(ARCHIVE_FILES.actor);
  const [user] = await db.select().from(users).where(eq(users.accountId, me.id)).limit(1);
  if (!entry || !user || imp.kind !== "zip") return;
  const actor = await readActor(src, entry);
  const fields = (Array.isArray(actor.attachment) ? actor.attachment : [])
    .filter((a): a is Record<string, unknown> => !!a && typeof a === "object" && (a as Record<string, unknown>).type === "PropertyValue")
    .slice(0, MAX_FIELDS)
    .map((a) => ({ name: text(a.name, MAX_FIELD_NAME), value: text(a.value, MAX_FIELD_VALUE) }));
  const viewer: UserViewer = {
    tokenId: "",
    scopes: new Set(["write:accounts"]),
    applicationId: null,
    application: null,
    user,
    account: me,
    role: null,
    feedDroppedAt: null,
    followRequestsCount: 0,
  };
  const avatar = await picture(src, dir, actor.icon);
  const header = await picture(src, dir, actor.image);
  let attempt = { displayName: cut(actor.name, MAX_DISPLAY_NAME), note: text(actor.summary, MAX_NOTE), fields, avatar, header };
  try {
    await updateProfile(db, fx, cfg, env, viewer, attempt);
  } catch {
    // A picture refused by the upload checks: the texts still come.
    attempt = { ...attempt, avatar: undefined, header: undefined };
    await updateProfile(db, fx, cfg, env, viewer, attempt);
  }
}
