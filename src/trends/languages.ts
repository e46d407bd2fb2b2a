// The languages a reader's trends are chosen in (statuses and links; tags are not by language), as Mastodon's
// Trends::Query#preferred_languages: the user's chosen languages when set, else the content locale (the user's
// interface locale, else the request's Accept-Language).
import type { UserRow } from "../db/schema";
import { normalizeLanguage } from "../lib/text/text";

/** `user`: the signed-in reader's row (null when signed out); `acceptLanguage`: the request's header. */
export function preferredLanguages(user: Pick<UserRow, "chosenLanguages" | "locale"> | null | undefined, acceptLanguage: string | undefined): string[] {
  const chosen = (user?.chosenLanguages ?? []).filter((l): l is string => typeof l === "string" && /^[a-z]{2,3}$/i.test(l));
  if (chosen.length) return chosen.slice(0, 100).map((l) => l.toLowerCase());
  // Accept-Language's first range, without its weight (`en-GB;q=0.9`).
  const locale = normalizeLanguage(user?.locale) ?? normalizeLanguage((acceptLanguage ?? "").split(",")[0]?.split(";")[0]);
  return locale ? [locale] : [];
}
