import { Hono } from "hono";
import type { AppEnv } from "../context";

const r = new Hono<AppEnv>();

export default r;
