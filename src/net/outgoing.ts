// An outgoing request as plain data: what safeFetch sends and what the signers (draft-cavage, RFC 9421) sign. Built
// once per hop from the URL safeFetch already checked, signed by adding headers, then handed to fetch() as its init:
// no Request, Headers or URL object is made on the way. Each such runtime object is a weak handle the garbage
// collector has to check and finalize, and a pack of deliveries made ~10 per inbox (bench/README.md, "The bench's own
// waiting, and what each scavenge copies").

export interface Outgoing {
  /** The whole URL (URL.href), and the parts signatures cover: `host` (with its port) and `target` (path and query). */
  url: string;
  host: string;
  target: string;
  method: "GET" | "POST";
  /** Header names in lower case. */
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** Signs an outgoing request: the same request with its signature headers added. */
export type Signer = (o: Outgoing) => Promise<Outgoing>;

/** The outgoing request for `url` (already checked), its header names lower-cased. */
export function outgoingOf(url: URL, method: Outgoing["method"], headers: Record<string, string>, body?: string | Uint8Array): Outgoing {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
  return { url: url.href, host: url.host, target: url.pathname + url.search, method, headers: lower, body };
}
