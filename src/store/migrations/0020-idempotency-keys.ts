/**
 * Idempotency keys (issue 36): one row per account and key, written in the transaction that stores the document it
 * made, so the unique key decides between two concurrent submissions under one key. `body_hash` is the canonical
 * hash of the body as submitted (service/documents.ts hashBody, before fecr numbers it); `answer_status` and
 * `answer_json` what the client API answered (null for a submission made by the CLI in-process). A key is kept 24 h
 * (Stripe's contract); the account's older rows are dropped when a key of it is not found.
 */
import type { Kysely, Migration } from 'kysely';

export const idempotencyKeys: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('document_id', 'integer', (c) => c.notNull().references('documents.id'))
      .addColumn('answer_status', 'integer')
      .addColumn('answer_json', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
      .execute();
    // The account's keys past their window are dropped as new ones come (store/idempotency.ts dropExpiredKeys).
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').columns(['account_id', 'created_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('idempotency_keys').execute();
  },
};
