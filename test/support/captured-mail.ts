// The mail miniflare captured, read back for the integration tests (runs in vitest's node process, not in workerd;
// vitest.config.ts binds it as CAPTURED_MAIL). The pool's miniflare answers `env.EMAIL.send()` by writing what it was
// given to its temporary directory: `<tmpdir>/miniflare-<random>/email/email-text/<uuid>.txt` and, with the same
// uuid, `email-html/<uuid>.html`. Nothing else of the message (its subject, its recipients) is written; Tern's mails
// name their recipient in their text (src/mail/compose.ts), so a test finds its mail by the address it used. Test files
// run in several miniflares at once, each with its own directory: all of them are read, and only files naming the
// address and written after `since` count.
import { readdir, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CapturedMail {
  text: string;
  html: string | null;
  at: number;
}

async function list(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

export async function capturedMail(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const to = url.searchParams.get("to") ?? "";
  const since = Number(url.searchParams.get("since") ?? 0);
  if (!to) return Response.json({ error: "to is required" }, { status: 400 });
  const out: CapturedMail[] = [];
  for (const d of await list(tmpdir())) {
    if (!d.startsWith("miniflare-")) continue;
    const textDir = join(tmpdir(), d, "email", "email-text");
    for (const f of await list(textDir)) {
      if (!f.endsWith(".txt")) continue;
      const path = join(textDir, f);
      const info = await stat(path).catch(() => null);
      if (!info || info.mtimeMs < since) continue;
      const text = await readFile(path, "utf8").catch(() => "");
      if (!text.includes(`sent to ${to} `)) continue;
      const html = await readFile(join(tmpdir(), d, "email", "email-html", f.replace(/\.txt$/, ".html")), "utf8").catch(() => null);
      out.push({ text, html, at: info.mtimeMs });
    }
  }
  out.sort((a, b) => a.at - b.at);
  return Response.json(out);
}
