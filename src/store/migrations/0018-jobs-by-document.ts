/**
 * A document's jobs looked up by `document_id` (the worker's "is a send/poll of this document still open", the
 * callback's "make its jobs due now"): without an index each such query read every job of its type, so a batch's
 * cost per document grew with the queue (issue 31: 15 ms a lookup with 20 000 jobs, 0.12 ms with this index).
 */
import type { Kysely, Migration } from 'kysely';

export const jobsByDocument: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('jobs_by_document').on('jobs').column('document_id').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('jobs_by_document').execute();
  },
};
