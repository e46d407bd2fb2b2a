// POST /api/v2/media: as v1, except that a picture which must be scaled down is answered 202 with url null and
// processed after the answer (GET /api/v1/media/:id: 206 while processing, then 200), as Mastodon answers its slow files.
import { routeGroup } from "../../route-group";
import { requireUser } from "../../oauth/guard";
import { uploadMedia } from "../v1/statuses/media";

const r = routeGroup();

r.post("/", requireUser("write:media"), (c) => uploadMedia(c, true));

export default r;
