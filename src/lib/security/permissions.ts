// Mastodon's UserRole permission flags (app/models/user_role.rb), so custom roles mean the same thing here.
export const PERMISSIONS = {
  administrator: 1 << 0,
  view_devops: 1 << 1,
  view_audit_log: 1 << 2,
  view_dashboard: 1 << 3,
  manage_reports: 1 << 4,
  manage_federation: 1 << 5,
  manage_settings: 1 << 6,
  manage_blocks: 1 << 7,
  manage_taxonomies: 1 << 8,
  manage_appeals: 1 << 9,
  manage_users: 1 << 10,
  manage_invites: 1 << 11,
  manage_rules: 1 << 12,
  manage_announcements: 1 << 13,
  manage_custom_emojis: 1 << 14,
  manage_webhooks: 1 << 15,
  invite_users: 1 << 16,
  manage_roles: 1 << 17,
  manage_user_access: 1 << 18,
  delete_user_data: 1 << 19,
  view_feeds: 1 << 20,
} as const;

export type Permission = keyof typeof PERMISSIONS;

export function hasPermission(mask: number | null | undefined, p: Permission): boolean {
  if (!mask) return false;
  return (mask & PERMISSIONS.administrator) !== 0 || (mask & PERMISSIONS[p]) !== 0;
}

/** Any permission at all makes a user staff (for admin:* routes, which then check the specific flag). */
export function isStaff(mask: number | null | undefined): boolean {
  return !!mask && mask !== 0;
}

export const ROLE_IDS = { moderator: "1", admin: "2", owner: "3" } as const;
