/**
 * The worker registry of the hosted mode: each running worker process (graphile-worker pool on PostgreSQL)
 * writes a heartbeat here; a worker whose heartbeat stopped is dead, and a surviving worker unlocks its jobs
 * (graphile-worker itself only unlocks a dead worker's jobs after 4 hours). Created in SQLite too (same
 * migrations for both stores), where it stays empty: the SQLite queue's leases expire by themselves.
 */
import type { Kysely, Migration } from 'kysely';

export const queueWorkers: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('queue_workers')
      .addColumn('id', 'text', (c) => c.primaryKey()) // the lock owner (graphile-worker pool id)
      .addColumn('name', 'text', (c) => c.notNull()) // fecr's worker name (logs)
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('queue_workers').execute();
  },
};
