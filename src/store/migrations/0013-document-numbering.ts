/**
 * Numbering (issue 27, point 2): in local mode a body may leave `numeroReferencia` out and fecr takes the next free
 * number of its issuer, kind, sucursal and terminal. The next free number is one after the highest number stored in
 * `documents` for that series (so a data dir with documents already sent continues after them: nothing to fill in),
 * or the start an issuer set for the series (`fecr emisor numbers ID --set FE=1501`, coming from another system)
 * when that is higher. `document_numbering` holds those starts, one row per series that has one.
 *
 * `documents.submission_key`: a batch row without numeroReferencia is submitted with a key of its own, written to the
 * batch journal first, so a resumed batch finds the document a row already made instead of taking a new number.
 * Null for every other document (and for every document stored before this migration).
 */
import type { Kysely, Migration } from 'kysely';

export const documentNumbering: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('document_numbering')
      .addColumn('issuer_id', 'integer', (c) => c.notNull().references('issuers.id'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('sucursal', 'integer', (c) => c.notNull())
      .addColumn('terminal', 'integer', (c) => c.notNull())
      .addColumn('next_numero', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('document_numbering_pk', ['issuer_id', 'kind', 'sucursal', 'terminal'])
      .execute();
    await db.schema.alterTable('documents').addColumn('submission_key', 'text').execute();
    await db.schema.createIndex('documents_submission_key').unique().on('documents').columns(['account_id', 'submission_key']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('documents_submission_key').execute();
    await db.schema.alterTable('documents').dropColumn('submission_key').execute();
    await db.schema.dropTable('document_numbering').execute();
  },
};
