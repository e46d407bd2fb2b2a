// POST /api/v2/media: Mastodon answers 202 with url null while processing; uploads here are processed before the
// response, so it is the same 200 as v1.
import { routeGroup } from "../../route-group";
import { requireUser } from "../../oauth/guard";
import { uploadMedia } from "../v1/statuses/media";

const r = routeGroup();

r.post("/", requireUser("write:media"), uploadMedia);

export default r;
