// /api/v1/media: legacy upload, and show / update / delete of the viewer's own attachments (Mastodon's
// Api::V1::MediaController). Show and update see only unattached media; anything else is a 404 (B14).
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import type { Ctx } from "../../../context";
import { renderMedia } from "../../../entities/statuses/media";
import { cappedStream } from "../../../lib/http/capped-body";
import { ApiError, badRequest, unprocessable } from "../../../lib/http/errors";
import { countMultipartParts, nestPairs, parseWith, readParams, zStr, type Params, pathId } from "../../../lib/http/params";
import { throttleMediaUpload } from "../../../http/rate-limit";
import { UPLOAD_BODY_LIMIT } from "../../../media/store";
import { me, requireUser } from "../../../oauth/guard";
import { createMedia, deleteMedia, findOwnUnattached, updateMedia, type MediaRow } from "../../../services/statuses/media";
import { PROCESSING_FAILED } from "../../../services/statuses/media-processing";

const r = routeGroup();

// Optional: zod 4 refuses a missing key whose schema may not be left out, even if its transform gives undefined.
const maybeFile = lazy(() =>
  z
    .unknown()
    .transform((v) => (v instanceof File ? v : undefined))
    .optional(),
);

const uploadSchema = lazy(() =>
  z.object({
    file: maybeFile(),
    thumbnail: maybeFile(),
    description: zStr(10_000).optional(),
    focus: zStr(100).optional(),
  }),
);

const updateSchema = lazy(() => uploadSchema().omit({ file: true }));

const tooLarge = () => new ApiError(413, "Payload too large");

/**
 * Multipart bodies up to the upload limit, counted as they stream in: the shared parser trusts Content-Length, and
 * a chunked body without one must not be buffered unbounded. Other bodies go through the shared 1 MB parser.
 */
async function readUpload(c: Ctx): Promise<Params> {
  const type = c.req.header("content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data")) return readParams(c);
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > UPLOAD_BODY_LIMIT) throw tooLarge();
  if (!/boundary=/i.test(type)) throw badRequest("Multipart body without a boundary");
  const body = c.req.raw.body;
  if (!body) return nestPairs(new URL(c.req.url).searchParams.entries());
  const counted = cappedStream(body, UPLOAD_BODY_LIMIT, tooLarge);
  const parts = countMultipartParts(counted.body, type);
  let form: FormData;
  try {
    form = await new Request(c.req.url, { method: "POST", headers: { "content-type": type }, body: parts.body }).formData();
  } catch {
    if (parts.over()) throw badRequest("Too many parameters");
    throw counted.over() ? tooLarge() : badRequest("Malformed multipart body");
  }
  return { ...nestPairs(new URL(c.req.url).searchParams.entries()), ...nestPairs(form.entries()) };
}

const status = (m: MediaRow) => (m.processing ? 206 : 200);

/**
 * POST /api/v1/media (processed before the answer: 200) and /api/v2/media (`later`: a picture that must be scaled
 * down is answered 202 with url null and processed after the answer, as Mastodon's v2 does for its slow files).
 */
export async function uploadMedia(c: Ctx, later = false) {
  const v = me(c);
  await throttleMediaUpload(c, v.account.id);
  const p = parseWith(uploadSchema(), await readUpload(c));
  const row = await createMedia(c.get("db"), c.env, v.account.id, p, later ? c.get("fx") : null);
  return c.json(renderMedia(c.get("config"), row), row.processing ? 202 : 200);
}

r.post("/", requireUser("write:media"), (c) => uploadMedia(c));

r.get("/:id", requireUser("write:media"), async (c) => {
  const id = pathId(c);
  const row = await findOwnUnattached(c.get("db"), me(c).account.id, id);
  if (row.processing === PROCESSING_FAILED) throw unprocessable("Error processing the uploaded file: it could not be decoded");
  return c.json(renderMedia(c.get("config"), row), status(row));
});

r.put("/:id", requireUser("write:media"), async (c) => {
  const id = pathId(c);
  const row = await findOwnUnattached(c.get("db"), me(c).account.id, id);
  const p = parseWith(updateSchema(), await readUpload(c));
  const next = await updateMedia(c.get("db"), c.env, row, p);
  return c.json(renderMedia(c.get("config"), next), status(next));
});

r.delete("/:id", requireUser("write:media"), async (c) => {
  const id = pathId(c);
  await deleteMedia(c.get("db"), c.env, me(c).account.id, id);
  return c.json({});
});

export default r;
