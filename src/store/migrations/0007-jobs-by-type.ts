/**
 * The SQLite queue leases the receptor mails after every other due job (jobs.ts DEFERRED_JOB_TYPES), so it asks for
 * due jobs of some types only. On `jobs_due` (done_at, run_at) alone, such a query walks past every due job of the
 * other types first: a batch's 5 000 mails, held until its verdicts are in, made each lease of a send or a poll
 * read 5 000 rows. This index finds the due jobs of each type directly. (PostgreSQL's queue is graphile-worker's.)
 */
import type { Kysely, Migration } from 'kysely';

export const jobsByType: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('jobs_due_by_type').on('jobs').columns(['type', 'done_at', 'run_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('jobs_due_by_type').execute();
  },
};
