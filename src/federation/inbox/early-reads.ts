// The first reads of the most frequent incoming activities (Create, Like, Announce), made in the batch of the POST that
// stores the item when that invocation processes it right after its 202 (storeVerifiedItem): the handler starts from
// their results (InboxContext.early, takeEarly) and its processing is one round trip shorter. They are reads only; an
// item processed elsewhere (the queue, the sweep) or an activity found seen leaves them unused.
import type { DB, Statement } from "../../db/client";
import type { AccountRow } from "../../db/schema/index";
import type { Config } from "../../env";
import type { NormalizedActivity, NormalizedNote } from "../remote/normalize";
import { announceReads, likeReads } from "./handlers/announce";
import { createEarlyReads } from "./handlers/note";

export interface EarlyPlan {
  type: string;
  stmts: Statement[];
  note?: NormalizedNote;
}

/** The statements to read early for this activity, or null (other types, or one its handler drops before reading). */
export function earlyReadsFor(db: DB, cfg: Config, activity: NormalizedActivity, signer: AccountRow): EarlyPlan | null {
  switch (activity.type) {
    case "Create": {
      const c = createEarlyReads(db, activity, signer);
      return c && { type: "Create", stmts: c.stmts, note: c.note };
    }
    case "Like": {
      const stmts = likeReads(db, activity, signer);
      return stmts && { type: "Like", stmts: [...stmts] };
    }
    case "Announce": {
      const stmts = announceReads(db, cfg, activity, signer);
      return stmts && { type: "Announce", stmts: [...stmts] };
    }
    default:
      return null;
  }
}
