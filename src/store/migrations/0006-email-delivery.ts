/**
 * Email delivery of accepted comprobantes to their receptor (issue 17):
 *  - `email_deliveries`: one row per mail (the automatic one after aceptado, and each resend asked for), with its
 *    RFC 5322 Message-ID (stable across the retries of that mail), recipients, state, attempts and the last SMTP reply;
 *  - `account_mail`: an account's SMTP server and sender (host, port, security, user, sealed password, From, Reply-To);
 *  - `documents.correos`: the recipients stored at submission (receptor.correoElectronico + correosAdicionales, JSON;
 *    null on rows stored before this migration, whose receptor address is then read from the signed XML);
 *  - `jobs.email_id`: the mail an `email` job sends (SQLite queue; on PostgreSQL it travels in the job's payload).
 */
import { SqliteAdapter, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';

export const emailDelivery: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    const id = (c: ColumnDefinitionBuilder) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity());
    await db.schema
      .createTable('email_deliveries')
      .addColumn('id', 'integer', id)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('document_id', 'integer', (c) => c.notNull().references('documents.id'))
      .addColumn('message_id', 'text', (c) => c.notNull().unique())
      .addColumn('recipients', 'text', (c) => c.notNull()) // JSON array of addresses
      .addColumn('reason', 'text', (c) => c.notNull()) // aceptado | reenvio
      .addColumn('state', 'text', (c) => c.notNull()) // pendiente | enviado | fallido
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_reply', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('sent_at', 'bigint')
      .execute();
    await db.schema.createIndex('email_deliveries_document').on('email_deliveries').columns(['document_id', 'id']).execute();

    await db.schema
      .createTable('account_mail')
      .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id'))
      .addColumn('smtp_host', 'text', (c) => c.notNull())
      .addColumn('smtp_port', 'integer', (c) => c.notNull())
      .addColumn('smtp_security', 'text', (c) => c.notNull()) // tls | starttls | none
      .addColumn('smtp_user', 'text')
      .addColumn('smtp_password_enc', 'text') // sealed
      .addColumn('from_name', 'text')
      .addColumn('from_address', 'text')
      .addColumn('reply_to', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema.alterTable('documents').addColumn('correos', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('email_id', 'integer', (c) => c.references('email_deliveries.id')).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('jobs').dropColumn('email_id').execute();
    await db.schema.alterTable('documents').dropColumn('correos').execute();
    await db.schema.dropTable('account_mail').execute();
    await db.schema.dropTable('email_deliveries').execute();
  },
};
