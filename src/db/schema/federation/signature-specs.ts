import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { ms } from "../types";

/**
 * Double knocking (src/federation/signing/rfc9421.ts): the HTTP signature spec a remote host verified ("rfc9421" or
 * "draft-cavage"), or that it signed its own requests with. A host without a row is signed draft-cavage first.
 */
export const signatureSpecs = lazyTable(() =>
  sqliteTable("signature_specs", {
    host: text("host").primaryKey(),
    spec: text("spec").notNull(),
    updatedAt: ms("updated_at").notNull(),
  }),
);
