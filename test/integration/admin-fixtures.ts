// The staff users of the admin API tests: makeUser options for an Admin (role 2) and a Moderator (role 1), each with
// the admin scopes.
export const ADMIN = { roleId: "2", scopes: "read write admin:read admin:write" };
export const MOD = { roleId: "1", scopes: "read write admin:read admin:write" };
