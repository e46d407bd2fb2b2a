import { describe, expect, it } from "vitest";
import { isBlockedAddress, parseIPv6 } from "../../src/net/ip";
import { checkUrl, FetchRefused } from "../../src/net/safe-fetch";

const refused = (url: string, opts = {}) => {
  expect(() => checkUrl(url, opts), url).toThrow(FetchRefused);
};

describe("SSRF guard (security D1, D2, D7)", () => {
  it("refuses private, loopback and reserved hosts in every spelling", () => {
    for (const h of [
      "http://127.0.0.1/",
      "http://localhost/",
      "http://10.0.0.1/",
      "http://169.254.169.254/",
      "http://[::1]/",
      "http://[::]/",
      "http://[::ffff:127.0.0.1]/",
      "http://0.0.0.0/",
      "http://100.64.0.1/",
      "http://[fd00::1]/",
      "http://2130706433/",
      "http://0x7f000001/",
      "http://0177.0.0.1/",
      "http://127.1/",
      "http://a.localhost/",
      "http://x.internal/",
      "http://[fe80::1]/",
      "http://192.168.1.1/",
      "http://172.16.5.4/",
      "http://[64:ff9b::7f00:1]/",
      "http://intranet/",
    ])
      refused(h);
  });

  it("refuses userinfo, odd schemes, ports and control characters", () => {
    for (const u of [
      "https://example.com@127.0.0.1/",
      "https://127.0.0.1#@example.com",
      "http://[::ffff:7f00:1]",
      "ftp://example.com/",
      "file:///etc/passwd",
      "https://user:pw@example.com/",
      "https://example.com:8080/",
      "https://example.com/a\r\nX: y",
      "https://example.com/%0d%0aX:y",
      "javascript:alert(1)",
    ])
      refused(u);
  });

  it("accepts ordinary public URLs and refuses its own host", () => {
    expect(checkUrl("https://mastodon.social/users/Gargron").hostname).toBe("mastodon.social");
    expect(checkUrl("http://93.184.216.34/").hostname).toBe("93.184.216.34");
    refused("https://tern.example/users/a", { ownHosts: ["tern.example"] });
  });

  it("lets loopback through only when allowed", () => {
    expect(checkUrl("http://127.0.0.1:9000/x", { allowLoopback: true }).port).toBe("9000");
    refused("http://10.0.0.1/", { allowLoopback: true });
  });

  it("parses IPv6 forms", () => {
    expect(parseIPv6("::ffff:127.0.0.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseIPv6("2001:db8::1")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(isBlockedAddress("[2606:4700::1111]")).toBe(false);
    expect(isBlockedAddress("8.8.8.8")).toBe(false);
  });
});
