// What the Worker builds when it loads (docs/architecture.md, "Startup is mostly compiling"): every table is built on
// first use, so loading the whole Worker (the fetch, queue and scheduled handlers, the Durable Object classes, every
// route module) builds none. This file imports nothing else first, and runs in its own isolate.
import { describe, expect, it } from "vitest";
import * as worker from "../../src/index";
import { tablesBuilt } from "../../src/db/schema/lazy-table";
import { accounts } from "../../src/db/schema";

describe("loading the Worker", () => {
  it("builds no table; a table is built when it is first read", () => {
    expect(typeof worker.default.fetch).toBe("function");
    expect(tablesBuilt()).toEqual([]);
    expect(accounts.username.name).toBe("username");
    expect(tablesBuilt()).toEqual(["accounts"]);
  });
});
