/**
 * The parties' identifications of a document, stored at submission next to fecha_emision (already a column):
 * the worker's POST /recepcion needs fecha, emisor and receptor, and reads them here instead of from the signed
 * XML. Nullable: rows stored before this migration have none, and the send job reads those from the stored XML
 * with the core parser (service/delivery/send.ts); no XML is parsed here, so the migration costs nothing on a
 * large store.
 */
import type { Kysely, Migration } from 'kysely';

export const documentParties: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // One column per statement: SQLite's ALTER TABLE adds one column at a time.
    for (const column of ['emisor_tipo', 'emisor_numero', 'receptor_tipo', 'receptor_numero']) {
      await db.schema.alterTable('documents').addColumn(column, 'text').execute();
    }
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const column of ['receptor_numero', 'receptor_tipo', 'emisor_numero', 'emisor_tipo']) {
      await db.schema.alterTable('documents').dropColumn(column).execute();
    }
  },
};
