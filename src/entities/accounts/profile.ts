// Profile (Mastodon 4.6, GET and PATCH /api/v1/profile): the signed-in user's own profile as its editor shows it, the
// raw text of the bio and fields rather than their HTML, and pictures that are null when unset. Tern keeps no picture
// descriptions and no Media/Featured tab choices: those are Mastodon's defaults ("" and true).
import type { AccountRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { type MastodonFeaturedTag, renderFeaturedTag } from "../instance/tag";
import { mediaUrl } from "../urls";

export interface MastodonProfile {
  id: string;
  display_name: string;
  note: string;
  fields: { name: string; value: string; verified_at: string | null }[];
  avatar: string | null;
  avatar_static: string | null;
  avatar_description: string;
  header: string | null;
  header_static: string | null;
  header_description: string;
  locked: boolean;
  bot: boolean;
  hide_collections: boolean | null;
  discoverable: boolean | null;
  indexable: boolean;
  show_media: boolean;
  show_media_replies: boolean;
  show_featured: boolean;
  attribution_domains: string[];
  featured_tags: MastodonFeaturedTag[];
}

type FeaturedTagView = Parameters<typeof renderFeaturedTag>[1];

export function renderProfile(cfg: Config, a: AccountRow, featured: FeaturedTagView[]): MastodonProfile {
  const avatar = a.avatarKey ? mediaUrl(cfg, a.avatarKey) : null;
  const header = a.headerKey ? mediaUrl(cfg, a.headerKey) : null;
  return {
    id: a.id,
    display_name: a.displayName,
    note: a.noteSource,
    fields: a.fields.map((f) => ({ name: f.name, value: f.value, verified_at: f.verified_at })),
    avatar,
    avatar_static: avatar,
    avatar_description: "",
    header,
    header_static: header,
    header_description: "",
    locked: a.locked,
    bot: a.actorType === "Service" || a.actorType === "Application",
    hide_collections: a.hideCollections ?? null,
    discoverable: a.discoverable ?? null,
    indexable: a.indexable,
    show_media: true,
    show_media_replies: true,
    show_featured: true,
    attribution_domains: [],
    featured_tags: featured.map((f) => renderFeaturedTag(cfg, f, a.username)),
  };
}
