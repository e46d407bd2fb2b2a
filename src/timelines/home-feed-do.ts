import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export class HomeFeed extends DurableObject<Env> {}
