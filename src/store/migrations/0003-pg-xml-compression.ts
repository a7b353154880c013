/**
 * PostgreSQL only (a no-op on SQLite; the same migration list runs on both stores): the signed XML and
 * Hacienda's answer are compressed with lz4 instead of PostgreSQL's default pglz. Every submission stores
 * ≈ 9 KB of signed XML, which PostgreSQL compresses and moves to the TOAST table; measured under the hosted
 * benchmark's load, pglz took ≈ 15 % of PostgreSQL's CPU per submission, and lz4 compresses several times
 * faster (the storage stays compressed and out of line, so updates of a document's state do not copy it).
 * lz4 needs PostgreSQL 14+ built with lz4 (the Debian, Ubuntu, RHEL and Docker builds are); without it the
 * columns keep pglz. Only values written from now on are affected: existing rows stay as they are.
 */
import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

async function lz4Available(db: Kysely<unknown>): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`select 'lz4' = any(enumvals) as ok from pg_settings where name = 'default_toast_compression'`.execute(db);
  return r.rows[0]?.ok === true;
}

export const pgXmlCompression: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter) || !(await lz4Available(db))) return;
    await sql`alter table documents alter column xml set compression lz4, alter column response_xml set compression lz4`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter) || !(await lz4Available(db))) return;
    await sql`alter table documents alter column xml set compression pglz, alter column response_xml set compression pglz`.execute(db);
  },
};
