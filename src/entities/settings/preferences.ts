// Preferences entity (docs.joinmastodon.org/entities/Preferences): the user's posting and reading defaults, from
// users.settings (each key absent until set, then Mastodon's default), as GET /api/v1/preferences answers them.
import type { UserSettings } from "../../db/schema/index";

export interface MastodonPreferences {
  "posting:default:visibility": NonNullable<UserSettings["posting:default:visibility"]>;
  "posting:default:sensitive": boolean;
  "posting:default:language": string | null;
  /** Tern keeps no default quote policy setting: always Mastodon's default, as the account's source[quote_policy]. */
  "posting:default:quote_policy": "public";
  "reading:expand:media": NonNullable<UserSettings["reading:expand:media"]>;
  "reading:expand:spoilers": boolean;
}

export function renderPreferences(s: UserSettings): MastodonPreferences {
  return {
    "posting:default:visibility": s["posting:default:visibility"] ?? "public",
    "posting:default:sensitive": s["posting:default:sensitive"] ?? false,
    "posting:default:language": s["posting:default:language"] || null,
    "posting:default:quote_policy": "public",
    "reading:expand:media": s["reading:expand:media"] ?? "default",
    "reading:expand:spoilers": s["reading:expand:spoilers"] ?? false,
  };
}
