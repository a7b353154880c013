/**
 * Who the client API may mail, and how often (issue 25):
 *  - `account_mail_allow`: the addresses an operator registered for an account (`fecr accounts mail BASE --allow
 *    ADDR…`), lower-cased; beside a document's own recipients, the only ones `POST /api/enviar/correo` mails;
 *  - `mail_requests`: the API's ledger of mail requests, queued or refused, that its per-account and per-document
 *    limits count (rows older than the longest window are pruned as new ones come).
 */
import { SqliteAdapter, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';

export const mailPolicy: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    const id = (c: ColumnDefinitionBuilder) => (sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity());
    await db.schema
      .createTable('account_mail_allow')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('account_mail_allow_pk', ['account_id', 'address'])
      .execute();

    await db.schema
      .createTable('mail_requests')
      .addColumn('id', 'integer', id)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('document_id', 'integer', (c) => c.notNull().references('documents.id'))
      .addColumn('email_id', 'integer', (c) => c.references('email_deliveries.id'))
      .addColumn('outcome', 'text', (c) => c.notNull()) // queued | refused
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('mail_requests_account').on('mail_requests').columns(['account_id', 'created_at']).execute();
    await db.schema.createIndex('mail_requests_document').on('mail_requests').columns(['document_id', 'created_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('mail_requests').execute();
    await db.schema.dropTable('account_mail_allow').execute();
  },
};
