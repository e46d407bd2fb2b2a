// The file types an upload may be: one list, read by the upload path (media/sniff.ts names each file by its bytes
// with one of the canonical types here) and by /api/v2/instance (`configuration.media_attachments.supported_mime_types`),
// so what Tern advertises is exactly what it accepts. Aliases are the other names clients send for the same formats.

/** Canonical type of each format sniff.ts recognises → the names clients also use for it. */
export const UPLOAD_FORMATS: Readonly<Record<string, readonly string[]>> = {
  "image/jpeg": [],
  "image/png": [],
  "image/gif": [],
  "image/webp": [],
  // Converted to JPEG on upload (media/process-image.ts): browsers do not all show them.
  "image/avif": [],
  "image/heic": ["image/heif"],
  "video/mp4": [],
  "video/quicktime": [],
  "video/webm": [],
  "video/ogg": [],
  "audio/mpeg": ["audio/mp3"],
  "audio/mp4": ["audio/m4a", "audio/x-m4a", "audio/aac"],
  "audio/ogg": ["audio/vorbis", "audio/opus"],
  "audio/webm": [],
  "audio/wav": ["audio/wave", "audio/x-wav", "audio/vnd.wave"],
  "audio/flac": ["audio/x-flac"],
};

/** Every type advertised in supported_mime_types: the canonical ones and their aliases. */
export const SUPPORTED_MIME_TYPES: readonly string[] = Object.entries(UPLOAD_FORMATS).flatMap(([mime, aliases]) => [mime, ...aliases]);

/** The canonical type of a declared one (parameters and case ignored), or null when it is none of ours. */
export function canonicalMime(declared: string | null | undefined): string | null {
  const t = (declared ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (!t) return null;
  for (const [mime, aliases] of Object.entries(UPLOAD_FORMATS)) if (t === mime || aliases.includes(t)) return mime;
  return null;
}
