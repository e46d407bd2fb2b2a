// The default avatar and header every account without one points at (Mastodon's paths). Solid grey PNGs, kept as
// bytes here so they exist before anything is uploaded to R2.
import { routeGroup } from "../../route-group";
import { fromBase64 } from "../../lib/security/crypto";
import { DEFAULT_AVATAR, DEFAULT_HEADER } from "../../entities/urls";

// 120×120 and 600×200, RGB #9baec8, made with zlib (valid CRCs).
const AVATAR_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAHgAAAB4CAIAAAC2BqGFAAAAtElEQVR42u3QQQ0AAAgEoOtfwQ7mMJYt9MNGAlI9HIgC0aIRLVq0BdGiES1atAXRohEtWjSiRSNatGhEi0a0aNGIFo1o0aIRLRrRokUjWjSiRYtGtGhEixaNaNGIFi0a0aIRLVo0okUjWrRoRItGtGjRiBaNaNGiES0a0aJFI1o0okWLRrRoRIsWjWjRiBYtGtGiES1aNKJFI1q0aESLRrRo0YgWjWjRohEtGtGiRSNaNKL/Ld0oQw1AiLZ/AAAAAElFTkSuQmCC";
const HEADER_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAlgAAADICAIAAAC7/QjhAAACeUlEQVR42u3VMQ0AAAgEsfdvAQ/oQBYW2GlSBbdcqgcA3ooEABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghAEaoAgBGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCABGCIARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAoARAmCEKgBghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABghABwscUS2XkRW0VcAAAAAElFTkSuQmCC";

const r = routeGroup();

function png(b64: string) {
  const bytes = fromBase64(b64);
  return () =>
    new Response(bytes, {
      headers: {
        "content-type": "image/png",
        "content-length": String(bytes.byteLength),
        "cache-control": "public, max-age=86400",
        "x-content-type-options": "nosniff",
        "access-control-allow-origin": "*",
      },
    });
}

r.on(["GET", "HEAD"], DEFAULT_AVATAR, png(AVATAR_PNG));
r.on(["GET", "HEAD"], DEFAULT_HEADER, png(HEADER_PNG));

export default r;
