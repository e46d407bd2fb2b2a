import type { Env } from "../env";

export async function runScheduled(env: Env, at: number): Promise<void> {}
