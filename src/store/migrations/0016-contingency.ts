/**
 * Contingency (issue 30): the provisional (paper) comprobantes an issuer handed out while Hacienda or its own network
 * was down, each with its own numbering, until an electronic document replaces it (CodigoReferencia 05, TipoDocIR 08:
 * core/contingency.ts). One row per account, issuer and provisional number; `replaced_by` is the clave of the
 * electronic document that replaces it (null: still owed).
 */
import { SqliteAdapter, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';

export const contingency: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    const id = (c: ColumnDefinitionBuilder) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity());
    await db.schema
      .createTable('contingency_provisionals')
      .addColumn('id', 'integer', id)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('emisor', 'text', (c) => c.notNull())
      .addColumn('numero', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('fecha_emision', 'text', (c) => c.notNull())
      .addColumn('fecha_ms', 'bigint', (c) => c.notNull())
      .addColumn('receptor', 'text')
      .addColumn('total_comprobante', 'text', (c) => c.notNull())
      .addColumn('moneda', 'text', (c) => c.notNull())
      .addColumn('recorded_at', 'bigint', (c) => c.notNull())
      .addColumn('replaced_by', 'text')
      .addColumn('replaced_at', 'bigint')
      .execute();
    await db.schema.createIndex('contingency_provisionals_numero').unique().on('contingency_provisionals').columns(['account_id', 'emisor', 'numero']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('contingency_provisionals').execute();
  },
};
