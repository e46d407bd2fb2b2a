// Tern's own AccountAlias (GET/POST /api/tern/aliases; Mastodon has them only as the /settings/aliases form): an
// account this one says it also is (its `alsoKnownAs`), by handle and actor id.
import type { AccountAliasRow } from "../../db/schema/index";
import { isoTime } from "../urls";

export interface TernAccountAlias {
  id: string;
  acct: string;
  uri: string;
  created_at: string;
}

export function renderAccountAlias(a: AccountAliasRow): TernAccountAlias {
  return { id: a.id, acct: a.acct, uri: a.uri, created_at: isoTime(a.createdAt) };
}
