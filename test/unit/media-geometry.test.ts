// The media pipeline's pure parts: Mastodon's box geometry (never over the area), the EXIF orientation steps, the
// frame rate as Mastodon writes it, and the accepted-types list against what sniff.ts names.
import { describe, expect, it } from "vitest";
import { canonicalMime, SUPPORTED_MIME_TYPES, UPLOAD_FORMATS } from "../../src/lib/http/media-types";
import { fitArea, ORIGINAL_PIXELS, SMALL_PIXELS, uprightSteps } from "../../src/media/process-image";
import { buildMeta } from "../../src/media/store";

describe("fitArea", () => {
  it("leaves a picture within the area as it is, and boxes a larger one within it, keeping the aspect", () => {
    expect(fitArea(480, 480, SMALL_PIXELS)).toEqual({ width: 480, height: 480 });
    expect(fitArea(1600, 1200, SMALL_PIXELS)).toEqual({ width: 554, height: 415 });
    expect(fitArea(4032, 3024, ORIGINAL_PIXELS)).toEqual({ width: 3325, height: 2494 });
    for (const [w, h] of [
      [10_000, 10],
      [10, 10_000],
      [7680, 4320],
      [1234, 5678],
      [3000, 3000],
    ] as const) {
      for (const area of [SMALL_PIXELS, ORIGINAL_PIXELS]) {
        const box = fitArea(w, h, area);
        expect(box.width * box.height).toBeLessThanOrEqual(Math.max(area, w * h <= area ? w * h : 0));
        if (w * h > area) expect(Math.abs(box.width / box.height - w / h) / (w / h)).toBeLessThan(0.01 + 1 / Math.min(box.width, box.height));
      }
    }
  });
});

describe("uprightSteps", () => {
  it("mirrors first, then turns clockwise, for each EXIF orientation", () => {
    expect(uprightSteps(1)).toEqual([]);
    expect(uprightSteps(2)).toEqual([{ flip: "h" }]);
    expect(uprightSteps(3)).toEqual([{ rotate: 180 }]);
    expect(uprightSteps(4)).toEqual([{ flip: "v" }]);
    expect(uprightSteps(5)).toEqual([{ flip: "h" }, { rotate: 270 }]);
    expect(uprightSteps(6)).toEqual([{ rotate: 90 }]);
    expect(uprightSteps(7)).toEqual([{ flip: "h" }, { rotate: 90 }]);
    expect(uprightSteps(8)).toEqual([{ rotate: 270 }]);
  });
});

describe("video meta", () => {
  it("writes frame rates as ffprobe's rationals and bitrates from the size and duration", () => {
    const meta = (fps: number) => buildMeta({ mime: "video/mp4", ext: "mp4", kind: "video", width: 640, height: 360, duration: 10, fps }, 1_000_000);
    expect(meta(30).original).toMatchObject({ frame_rate: "30/1", bitrate: 800_000, duration: 10 });
    expect(meta(29.97).original).toMatchObject({ frame_rate: "30000/1001" });
    expect(meta(12.5).original).toMatchObject({ frame_rate: "1250/100" });
    expect(meta(29.97)).toMatchObject({ fps: 30, length: "0:00:10.00" });
  });
});

describe("accepted types", () => {
  it("advertises every canonical type and its aliases once, and maps each back to its canonical type", () => {
    expect(new Set(SUPPORTED_MIME_TYPES).size).toBe(SUPPORTED_MIME_TYPES.length);
    for (const [mime, aliases] of Object.entries(UPLOAD_FORMATS)) {
      expect(canonicalMime(mime)).toBe(mime);
      for (const a of aliases) expect(canonicalMime(`${a.toUpperCase()}; charset=x`)).toBe(mime);
    }
    expect(canonicalMime("image/svg+xml")).toBeNull();
    expect(canonicalMime("")).toBeNull();
  });
});
