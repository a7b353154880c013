/** Queries of the `jobs` table (SQLite's queue) that the use cases read; the queue's own writes are in service/jobs.ts. */
import type { Kysely } from '#kysely';
import type { Database } from './schema.js';

/** A job's progress: how often it ran, whether a worker holds it now, whether it is done. */
export interface JobProgress {
  attempts: number;
  lease_owner: string | null;
  done_at: number | null;
}

/** The document's send job (undefined when it has none). */
export function sendJobOf(db: Kysely<Database>, documentId: number): Promise<JobProgress | undefined> {
  return db.selectFrom('jobs').select(['attempts', 'lease_owner', 'done_at']).where('document_id', '=', documentId).where('type', '=', 'send').executeTakeFirst();
}

/** The document's send and poll jobs that are not done yet. */
export function openDeliveryJobsOf(db: Kysely<Database>, documentId: number): Promise<(JobProgress & { id: number })[]> {
  return db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'lease_owner', 'done_at'])
    .where('document_id', '=', documentId)
    .where('type', 'in', ['send', 'poll'])
    .where('done_at', 'is', null)
    .execute();
}
