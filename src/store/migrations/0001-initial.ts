/** The initial schema. Types are chosen to mean the same in SQLite and PostgreSQL. */
import { SqliteAdapter, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';

export const initial: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const id = idColumn;
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'integer', id(db))
      .addColumn('base', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('webhook_url', 'text')
      .addColumn('webhook_secret_enc', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('signing_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('private_key_enc', 'text', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('retired_at', 'bigint')
      .execute();

    await db.schema
      .createTable('revoked_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('issuers')
      .addColumn('id', 'integer', id(db))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('identificacion', 'text', (c) => c.notNull())
      .addColumn('record_json', 'text', (c) => c.notNull())
      .addColumn('secrets_enc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('issuers_account_identificacion', ['account_id', 'identificacion'])
      .execute();

    await db.schema
      .createTable('documents')
      .addColumn('id', 'integer', id(db))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('issuer_id', 'integer', (c) => c.notNull().references('issuers.id'))
      .addColumn('clave', 'text', (c) => c.notNull().unique())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('sucursal', 'integer', (c) => c.notNull())
      .addColumn('terminal', 'integer', (c) => c.notNull())
      .addColumn('numero_referencia', 'bigint', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('xml', 'text', (c) => c.notNull())
      .addColumn('response_xml', 'text')
      .addColumn('mensaje', 'integer')
      .addColumn('detalle_mensaje', 'text')
      .addColumn('fecha_emision', 'text', (c) => c.notNull())
      .addColumn('total_comprobante', 'text', (c) => c.notNull())
      .addColumn('moneda', 'text', (c) => c.notNull())
      .addColumn('receptor_nombre', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addUniqueConstraint('documents_numbering', ['issuer_id', 'kind', 'sucursal', 'terminal', 'numero_referencia'])
      .execute();
    await db.schema.createIndex('documents_account_state').on('documents').columns(['account_id', 'state', 'created_at']).execute();

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'integer', id(db))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('document_id', 'integer', (c) => c.notNull().references('documents.id'))
      .addColumn('message_id', 'text', (c) => c.notNull().unique())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .execute();

    await db.schema
      .createTable('jobs')
      .addColumn('id', 'integer', id(db))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('document_id', 'integer', (c) => c.references('documents.id'))
      .addColumn('delivery_id', 'integer', (c) => c.references('webhook_deliveries.id'))
      .addColumn('run_at', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('done_at', 'bigint')
      .execute();
    await db.schema.createIndex('jobs_due').on('jobs').columns(['done_at', 'run_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const t of ['jobs', 'webhook_deliveries', 'documents', 'issuers', 'revoked_tokens', 'signing_keys', 'accounts']) {
      await db.schema.dropTable(t).execute();
    }
  },
};

/** An auto-increment primary key: AUTOINCREMENT in SQLite, an identity column in PostgreSQL. */
function idColumn(db: Kysely<unknown>): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  return (c) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity());
}
