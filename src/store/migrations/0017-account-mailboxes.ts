/**
 * The suppliers' mailbox of a hosted account (issue 30, `fecr accounts mailbox BASE --imap URL`): the IMAP mailbox the
 * service reads for it (the password sealed like the other secrets), its rules file's JSON and the seconds between
 * passes; and the job that reads it, one per account (`jobs.account_id` on SQLite; PostgreSQL's queue carries it in
 * the job's payload, key `mailbox:<account>`).
 */
import type { Kysely, Migration } from 'kysely';

export const accountMailboxes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('account_mailboxes')
      .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id'))
      .addColumn('imap_url', 'text', (c) => c.notNull())
      .addColumn('password_enc', 'text', (c) => c.notNull())
      .addColumn('rules_json', 'text', (c) => c.notNull())
      .addColumn('interval_s', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.alterTable('jobs').addColumn('account_id', 'integer').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('jobs').dropColumn('account_id').execute();
    await db.schema.dropTable('account_mailboxes').execute();
  },
};
