/**
 * The earlier answers to a received comprobante (issue 26): a MensajeReceptor that Hacienda rejected (or that ended in
 * `error`) may be answered again, with a new MensajeReceptor of its own consecutivo. The `recibidos` row holds the
 * answer in force (mensaje … mensaje_document_id); when it is replaced, the answer it held is copied here in the same
 * transaction, so a document's history (`fecr recibidos show`) keeps every answer and Hacienda's verdict on each (the
 * MensajeReceptor's `documents` row, which stays). Nothing to fill in: before this migration an answer was final.
 */
import { SqliteAdapter, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';

export const recibidosRespuestas: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    const id = (c: ColumnDefinitionBuilder) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity());
    await db.schema
      .createTable('recibidos_respuestas')
      .addColumn('id', 'integer', id)
      .addColumn('recibido_id', 'integer', (c) => c.notNull().references('recibidos.id'))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('estado', 'text', (c) => c.notNull()) // the buyer's decision then: aceptado | parcial | rechazado
      .addColumn('mensaje', 'integer', (c) => c.notNull()) // 1 aceptado, 2 parcial, 3 rechazado
      .addColumn('detalle', 'text')
      .addColumn('condicion_impuesto', 'text')
      .addColumn('iva_acreditable', 'text')
      .addColumn('gasto_aplicable', 'text')
      .addColumn('mensaje_document_id', 'integer', (c) => c.references('documents.id'))
      .addColumn('decided_at', 'bigint')
      .addColumn('replaced_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('recibidos_respuestas_recibido').on('recibidos_respuestas').columns(['recibido_id', 'id']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('recibidos_respuestas').execute();
  },
};
