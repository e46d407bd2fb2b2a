// files.example, the file server of the remote media tests: a spy on fetch for that host (actors and pages go through
// fetchMock as usual).
import { vi } from "vitest";

/** files.example answers with `answer`; returns the paths asked, in order. */
export function fileServer(answer: (path: string) => Response | Promise<Response>): string[] {
  const asked: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.host !== "files.example") return real(input, init);
    asked.push(url.pathname);
    return answer(url.pathname);
  });
  return asked;
}
