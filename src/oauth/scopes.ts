// OAuth scopes as Mastodon defines them (config/initializers/doorkeeper.rb): parents cover their children, and
// `follow` is a legacy alias covered by read and write.

const READ = ["accounts", "blocks", "bookmarks", "collections", "favourites", "filters", "follows", "lists", "mutes", "notifications", "search", "statuses"];
const WRITE = [
  "accounts",
  "blocks",
  "bookmarks",
  "collections",
  "conversations",
  "favourites",
  "filters",
  "follows",
  "lists",
  "media",
  "mutes",
  "notifications",
  "reports",
  "statuses",
];
const ADMIN_SUB = ["accounts", "reports", "domain_allows", "domain_blocks", "ip_blocks", "email_domain_blocks", "canonical_email_blocks"];

export const ALL_SCOPES: ReadonlySet<string> = new Set([
  "read",
  ...READ.map((s) => `read:${s}`),
  "write",
  ...WRITE.map((s) => `write:${s}`),
  "follow",
  "push",
  "profile",
  "admin:read",
  ...ADMIN_SUB.map((s) => `admin:read:${s}`),
  "admin:write",
  ...ADMIN_SUB.map((s) => `admin:write:${s}`),
]);

export const DEFAULT_SCOPES = "read";

const FOLLOW_COVERS = new Set(["read:blocks", "read:follows", "read:mutes", "write:blocks", "write:follows", "write:mutes"]);

/** Splits a space- or plus-separated scope string; null when any scope is unknown. */
export function parseScopes(raw: string | undefined | null, fallback = DEFAULT_SCOPES): string[] | null {
  const text = (raw ?? "").trim() || fallback;
  const list = [...new Set(text.split(/[\s+]+/).filter(Boolean))];
  if (list.length > 50) return null;
  return list.every((s) => ALL_SCOPES.has(s)) ? list : null;
}

/** Does a granted set allow `required`? (`read` ⊇ `read:statuses`; `follow` ⊇ follows/blocks/mutes; `admin:read` ⊇ `admin:read:x`). */
export function scopeAllows(granted: ReadonlySet<string>, required: string): boolean {
  if (granted.has(required)) return true;
  const parts = required.split(":");
  if (parts[0] === "admin") {
    return parts.length === 3 && granted.has(`admin:${parts[1]}`);
  }
  if (parts.length === 2 && granted.has(parts[0] ?? "")) return true; // split yields at least one element
  if (FOLLOW_COVERS.has(required) && granted.has("follow")) return true;
  if (required === "follow") return granted.has("read") && granted.has("write");
  return false;
}

/** True when every requested scope is one the app registered (a child of a registered parent counts). */
export function scopesWithin(requested: string[], registered: ReadonlySet<string>): boolean {
  return requested.every((s) => scopeAllows(registered, s) || (s === "follow" && registered.has("follow")));
}
