/**
 * The buyer's side (issue 16):
 *  - `recibidos`: the suppliers' comprobantes an account imported, each with the outcome of its checks (`estado`
 *    `invalido` with the findings, or `pendiente` until the account decides, then `aceptado`/`parcial`/`rechazado`),
 *    what Hacienda says of it (ind-estado and the MensajeHacienda), the IVA by tarifa, and the decision (the
 *    MensajeReceptor is a `documents` row of kind `MR`, sent by the worker like any document: `mensaje_document_id`).
 *    Idempotent import: one row per account and sha256 of the bytes.
 *  - `webhook_deliveries.recibido_id`, and `document_id` nullable: an event about a received document (imported,
 *    answered) is delivered like any other event. SQLite cannot drop a NOT NULL, so that table is rebuilt there
 *    (the documented 12-step way, foreign keys off for the copy); PostgreSQL alters the column.
 */
import { SqliteAdapter, sql, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';

export const recibidos: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    const id = (c: ColumnDefinitionBuilder) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity());
    await db.schema
      .createTable('recibidos')
      .addColumn('id', 'integer', id)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('issuer_id', 'integer', (c) => c.references('issuers.id')) // the buyer, one of ours (null: not ours, or unreadable)
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('clave', 'text')
      .addColumn('kind', 'text')
      .addColumn('version', 'text')
      .addColumn('estado', 'text', (c) => c.notNull()) // invalido | pendiente | aceptado | parcial | rechazado
      .addColumn('emisor_tipo', 'text')
      .addColumn('emisor_numero', 'text')
      .addColumn('emisor_nombre', 'text')
      .addColumn('receptor_tipo', 'text')
      .addColumn('receptor_numero', 'text')
      .addColumn('fecha_emision', 'text')
      .addColumn('moneda', 'text')
      .addColumn('tipo_cambio', 'text')
      .addColumn('total_comprobante', 'text')
      .addColumn('total_impuesto', 'text')
      .addColumn('iva_json', 'text', (c) => c.notNull()) // [{codigoTarifaIVA, tarifa, base, impuesto}]
      .addColumn('hallazgos_json', 'text', (c) => c.notNull()) // refusals [{path, message}]
      .addColumn('avisos_json', 'text', (c) => c.notNull()) // warnings [{path, message}]
      .addColumn('xml', 'text', (c) => c.notNull()) // the bytes as received (UTF-8; latin1 when they are not)
      .addColumn('hacienda_estado', 'text')
      .addColumn('hacienda_xml', 'text')
      .addColumn('mensaje', 'integer') // our answer: 1 aceptado, 2 parcial, 3 rechazado
      .addColumn('detalle', 'text')
      .addColumn('condicion_impuesto', 'text')
      .addColumn('iva_acreditable', 'text')
      .addColumn('gasto_aplicable', 'text')
      .addColumn('mensaje_document_id', 'integer', (c) => c.references('documents.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addUniqueConstraint('recibidos_account_sha256', ['account_id', 'sha256'])
      .execute();
    await db.schema.createIndex('recibidos_account_clave').on('recibidos').columns(['account_id', 'clave']).execute();
    await db.schema.createIndex('recibidos_account_fecha').on('recibidos').columns(['account_id', 'fecha_emision']).execute();

    if (!sqlite) {
      await db.schema.alterTable('webhook_deliveries').alterColumn('document_id', (c) => c.dropNotNull()).execute();
      await db.schema.alterTable('webhook_deliveries').addColumn('recibido_id', 'integer', (c) => c.references('recibidos.id')).execute();
      return;
    }
    // SQLite: rebuild webhook_deliveries with document_id nullable (https://sqlite.org/lang_altertable.html#otheralter).
    await sql`PRAGMA foreign_keys = OFF`.execute(db);
    try {
      await db.transaction().execute(async (trx) => {
        await sql`CREATE TABLE webhook_deliveries_new (
          id integer PRIMARY KEY AUTOINCREMENT,
          account_id integer NOT NULL REFERENCES accounts(id),
          document_id integer REFERENCES documents(id),
          recibido_id integer REFERENCES recibidos(id),
          message_id text NOT NULL UNIQUE,
          url text NOT NULL,
          payload text NOT NULL,
          state text NOT NULL,
          attempts integer NOT NULL DEFAULT 0,
          last_status integer,
          last_error text,
          created_at bigint NOT NULL,
          delivered_at bigint
        )`.execute(trx);
        await sql`INSERT INTO webhook_deliveries_new (id, account_id, document_id, message_id, url, payload, state, attempts, last_status, last_error, created_at, delivered_at)
          SELECT id, account_id, document_id, message_id, url, payload, state, attempts, last_status, last_error, created_at, delivered_at FROM webhook_deliveries`.execute(trx);
        await sql`DROP TABLE webhook_deliveries`.execute(trx);
        await sql`ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries`.execute(trx);
        const broken = await sql`PRAGMA foreign_key_check`.execute(trx);
        if (broken.rows.length > 0) throw new Error(`foreign keys broken by the rebuild of webhook_deliveries: ${JSON.stringify(broken.rows.slice(0, 3))}`);
      });
    } finally {
      await sql`PRAGMA foreign_keys = ON`.execute(db);
    }
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('webhook_deliveries').dropColumn('recibido_id').execute();
    await db.schema.dropTable('recibidos').execute();
  },
};
