// The parameters of PATCH /api/v1/accounts/update_credentials and of PATCH /api/v1/profile (Mastodon 4.6), which
// change the same things, and what they ask of updateProfile.
import * as z from "zod";
import { lazy } from "../../../lib/limits/lazy";
import { zBool, zStr } from "../../../lib/http/params";
import { AVATAR_LIMIT } from "../../../media/store";
import type { ProfileUpdate } from "../../../services/accounts/profile";

/** Two pictures and the rest of the form. */
export const CREDENTIALS_BODY_LIMIT = 2 * AVATAR_LIMIT + 1024 * 1024;

const fileParam = lazy(() => z.preprocess((v) => (v instanceof File && v.size > 0 ? v : undefined), z.instanceof(File).optional()));
const fieldItem = lazy(() =>
  z.preprocess((v) => (v && typeof v === "object" && !Array.isArray(v) ? v : {}), z.object({ name: zStr(10_000).optional(), value: zStr(10_000).optional() })),
);
const fieldsParam = lazy(() =>
  z.preprocess((v) => {
    if (v === undefined || v === null || v === "") return undefined;
    if (Array.isArray(v)) return v;
    if (typeof v === "object") return Object.values(v as object);
    return undefined; // neither a list nor a map (a string, a number): ignored, as Rails' permitted params do
  }, z.array(fieldItem()).max(50).optional()),
);
const sourceParam = lazy(() =>
  z.preprocess(
    (v) => (v && typeof v === "object" && !Array.isArray(v) ? v : undefined),
    z
      .object({
        privacy: z.enum(["public", "unlisted", "private"]).optional(),
        sensitive: zBool,
        language: z
          .preprocess((v) => (v === null ? "" : v), zStr(16))
          .refine((s) => s === "" || /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(s), "is not a valid language code")
          .optional(),
      })
      .optional(),
  ),
);
export const credentialsSchema = lazy(() =>
  z.object({
    display_name: zStr(10_000).optional(),
    note: zStr(100_000).optional(),
    locked: zBool,
    bot: zBool,
    discoverable: zBool,
    indexable: zBool,
    hide_collections: zBool,
    fields_attributes: fieldsParam(),
    source: sourceParam(),
    avatar: fileParam(),
    header: fileParam(),
  }),
);

export function profileChangesOf(p: z.infer<ReturnType<typeof credentialsSchema>>): ProfileUpdate {
  return {
    displayName: p.display_name,
    note: p.note,
    locked: p.locked,
    bot: p.bot,
    discoverable: p.discoverable,
    indexable: p.indexable,
    hideCollections: p.hide_collections,
    fields: p.fields_attributes?.map((f) => ({ name: f.name ?? "", value: f.value ?? "" })),
    privacy: p.source?.privacy,
    sensitive: p.source?.sensitive,
    language: p.source?.language === undefined ? undefined : p.source.language || null,
    avatar: p.avatar,
    header: p.header,
  };
}
