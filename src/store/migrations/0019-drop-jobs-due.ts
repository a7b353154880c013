/**
 * The queue's lease reads due jobs through `jobs_due_by_type` (type, done_at, run_at), one range per type it takes.
 * The older `jobs_due` (done_at, run_at) let SQLite's planner choose it instead, and then walk every due job of
 * every type: with a batch's receptor mails held behind the verdicts (1 000 due `email` jobs), each lease read them
 * all (issue 31: an empty lease 0.24 → 0.14 ms, a lease of one job 0.36 → 0.28 ms, measured on such a queue). Every
 * job written also kept one index fewer up to date. Nothing else needs it: the idle check (`pendingJobs`) reads the
 * due jobs through the other index or the table, and is not on the hot path.
 */
import type { Kysely, Migration } from 'kysely';

export const dropJobsDue: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('jobs_due').ifExists().execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('jobs_due').ifNotExists().on('jobs').columns(['done_at', 'run_at']).execute();
  },
};
