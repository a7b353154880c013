/**
 * An issuer whose Hacienda credentials the IdP refused (issue 25, point 7): when, and what the IdP said. While
 * `hacienda_refused_at` is set the worker makes no IdP login for the issuer and holds its documents
 * (`credenciales_invalidas`); an update of the issuer clears it (service/delivery/credentials.ts). Nullable:
 * existing issuers were never refused. (Numbered after 0009 and 0010, which were committed first; 0008 is unused.)
 */
import type { Kysely, Migration } from 'kysely';

export const issuerCredentialsRefused: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // One column per statement: SQLite's ALTER TABLE adds one column at a time.
    await db.schema.alterTable('issuers').addColumn('hacienda_refused_at', 'bigint').execute();
    await db.schema.alterTable('issuers').addColumn('hacienda_refused_detail', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('issuers').dropColumn('hacienda_refused_detail').execute();
    await db.schema.alterTable('issuers').dropColumn('hacienda_refused_at').execute();
  },
};
