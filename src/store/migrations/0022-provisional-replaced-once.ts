/**
 * One document replaces at most one provisional comprobante (issue 37, point 6): a unique index on
 * `contingency_provisionals (account_id, replaced_by)` on both stores (a NULL, not replaced yet, is distinct from every
 * other NULL on SQLite and PostgreSQL alike). A store that met the bug (one FE marked as the replacement of several
 * provisionals) keeps the mark on the earliest provisional only: the later ones are owed again (`replaced_by` NULL),
 * which is the truth, since the document's InformacionReferencia names one of them (core/contingency.ts).
 */
import { sql, type Kysely, type Migration } from 'kysely';

export const provisionalReplacedOnce: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`UPDATE contingency_provisionals SET replaced_by = NULL, replaced_at = NULL
      WHERE replaced_by IS NOT NULL AND EXISTS (SELECT 1 FROM contingency_provisionals o
        WHERE o.account_id = contingency_provisionals.account_id AND o.replaced_by = contingency_provisionals.replaced_by AND o.id < contingency_provisionals.id)`.execute(db);
    await db.schema.createIndex('contingency_provisionals_replaced_by').unique().on('contingency_provisionals').columns(['account_id', 'replaced_by']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('contingency_provisionals_replaced_by').ifExists().execute();
  },
};
