-- Double knocking (src/federation/rfc9421.ts, issue 10 point 8): per remote host (URL host, with its port), the HTTP
-- signature spec that host verified — "rfc9421" (HTTP Message Signatures) or "draft-cavage" — or that it signed its
-- own requests to us with. Deliveries read it with their batch; signed fetches through an isolate cache. A host
-- without a row is signed draft-cavage first, then RFC 9421 on a 400/401.
CREATE TABLE `signature_specs` (
  `host` text PRIMARY KEY NOT NULL,
  `spec` text NOT NULL,
  `updated_at` integer NOT NULL
);
