// Who is asking: the rows a bearer token stands for (loaded in one query by src/oauth/viewer.ts), as the services that
// act for them take it. Types only, here below the services so that they need not import the OAuth layer.
import type { AccountRow, RoleRow, UserRow } from "./schema";

export interface Viewer {
  tokenId: string;
  scopes: ReadonlySet<string>;
  applicationId: string | null;
  application: { name: string; website: string | null } | null;
  /** Null for client_credentials (app) tokens. */
  user: UserRow | null;
  account: AccountRow | null;
  role: RoleRow | null;
  feedDroppedAt: number | null;
  followRequestsCount: number;
}

/** A viewer with a user and an account (a user token, not an app's). */
export interface UserViewer extends Viewer {
  user: UserRow;
  account: AccountRow;
}
