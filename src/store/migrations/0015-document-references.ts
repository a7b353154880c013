/**
 * References between the account's own documents (issue 30): each InformacionReferencia of a document fecr issued,
 * one row, so that `fecr status` of a comprobante names the notes, replacements and payments that reference it and
 * its balance with a query instead of reading their XML. `monto` is what the document counts against the one it
 * references (an NC's or ND's TotalComprobante; a REP's lines, base plus IVA), or null when the document references
 * several and cannot say how much applies to each. Documents stored before this migration have no rows here.
 */
import type { Kysely, Migration } from 'kysely';

export const documentReferences: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('document_references')
      .addColumn('document_id', 'integer', (c) => c.notNull().references('documents.id'))
      .addColumn('orden', 'integer', (c) => c.notNull())
      .addColumn('account_id', 'integer', (c) => c.notNull())
      .addColumn('ref_clave', 'text', (c) => c.notNull())
      .addColumn('tipo_doc_ir', 'text', (c) => c.notNull())
      .addColumn('codigo', 'text')
      .addColumn('monto', 'text')
      .addPrimaryKeyConstraint('document_references_pk', ['document_id', 'orden'])
      .execute();
    await db.schema.createIndex('document_references_by_ref').on('document_references').columns(['account_id', 'ref_clave']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('document_references').execute();
  },
};
