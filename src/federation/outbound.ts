// Builds and delivers the activity for a local action (JOBS message "federate"). Filled in by the outbound work.
import type { DB } from "../db/client";
import type { Env } from "../env";
import type { FederateAction } from "../services/jobs";

export async function runFederate(db: DB, env: Env, origin: string, action: FederateAction): Promise<void> {
  void db;
  void env;
  void origin;
  void action;
}
