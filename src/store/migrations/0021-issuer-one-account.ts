/**
 * One numbering per cédula per service (issue 36; service/issuers.ts refuseHeldElsewhere): an identificación is an
 * issuer of one account only. A unique index on `issuers.identificacion`, on both stores, partial: over the rows after
 * the last one that already shares its identificación with another account's row. A service that has such rows from
 * before still starts (they are left as they are: each account keeps its issuer and its documents); the service's
 * check refuses a new registration that matches any existing row, and the index decides between two concurrent ones.
 * With no such rows (every store but one that met the bug) the predicate is `id > 0`: every row.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export const issuerOneAccount: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const shared = await sql<{ last: number | string | null }>`SELECT MAX(i.id) AS last FROM issuers i
      WHERE EXISTS (SELECT 1 FROM issuers o WHERE o.identificacion = i.identificacion AND o.account_id <> i.account_id)`.execute(db);
    const after = Number(shared.rows[0]?.last ?? 0);
    await sql`CREATE UNIQUE INDEX issuers_identificacion_one_account ON issuers (identificacion) WHERE id > ${sql.lit(after)}`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('issuers_identificacion_one_account').ifExists().execute();
  },
};
