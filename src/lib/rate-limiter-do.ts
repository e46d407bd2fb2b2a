import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export class RateLimiter extends DurableObject<Env> {}
