import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export class Streaming extends DurableObject<Env> {}
