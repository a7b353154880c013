/**
 * The queries of an issuer whose Hacienda credentials the IdP refused (the use case: service/delivery/credentials.ts):
 * the refusal recorded on the issuer row, its documents held (`credenciales_invalidas`) and their jobs parked
 * (jobs.ts PARKED_RUN_AT), and all of it undone when the issuer is updated. Every function takes the caller's
 * transaction. The issuer row is the lock: a refusal is only recorded (and confirmed) while the row still has the
 * `updated_at` the failed login read, so an update that lands meanwhile wins and nothing is held with new credentials.
 */
import { sql } from 'kysely';
import { CREDENTIALS_REFUSED } from '../core/lifecycle.js';
import { isPostgres, PARKED_RUN_AT, QUEUE_TASKS, type Executor } from './jobs.js';
import type { Millis } from './schema.js';

export type Refusal =
  /** Recorded now: the first refusal of these credentials. */
  | 'first'
  /** Recorded before (by another job) and still in force. */
  | 'already'
  /** The issuer was updated (or removed) since its credentials were read: nothing recorded. */
  | 'changed';

/**
 * Records that the IdP refused the credentials the issuer row had at `seenUpdatedAt` (or confirms an earlier record
 * with `detail` undefined). The row stays locked (PostgreSQL) until the caller's transaction ends.
 */
export async function recordRefusal(trx: Executor, issuerId: number, seenUpdatedAt: Millis, now: Millis, detail: string | undefined): Promise<Refusal> {
  if (detail !== undefined) {
    const first = await trx
      .updateTable('issuers')
      .set({ hacienda_refused_at: now, hacienda_refused_detail: detail })
      .where('id', '=', issuerId)
      .where('updated_at', '=', seenUpdatedAt)
      .where('hacienda_refused_at', 'is', null)
      .executeTakeFirst();
    if (Number(first.numUpdatedRows) === 1) return 'first';
  }
  // A no-op update: takes the row's lock and re-reads it under that lock.
  const still = await trx
    .updateTable('issuers')
    .set((eb) => ({ hacienda_refused_at: eb.ref('hacienda_refused_at') }))
    .where('id', '=', issuerId)
    .where('updated_at', '=', seenUpdatedAt)
    .where('hacienda_refused_at', 'is not', null)
    .executeTakeFirst();
  return Number(still.numUpdatedRows) === 1 ? 'already' : 'changed';
}

/** Holds the issuer's documents not sent yet (`pendiente` → `credenciales_invalidas`); returns how many. */
export async function holdIssuerDocuments(trx: Executor, issuerId: number, now: Millis, detalle: string): Promise<number> {
  const r = await trx
    .updateTable('documents')
    .set({ state: CREDENTIALS_REFUSED, detalle_mensaje: detalle, updated_at: now })
    .where('issuer_id', '=', issuerId)
    .where('state', '=', 'pendiente')
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Holds one document (`pendiente` → `credenciales_invalidas`; one already held keeps its state). */
export async function holdDocument(trx: Executor, documentId: number, now: Millis, detalle: string): Promise<void> {
  await trx
    .updateTable('documents')
    .set({ state: CREDENTIALS_REFUSED, detalle_mensaje: detalle, updated_at: now })
    .where('id', '=', documentId)
    .where('state', '=', 'pendiente')
    .execute();
}

/**
 * The issuer's credentials were updated: its held documents are `pendiente` again and the parked send and poll jobs
 * of its documents are due now (their attempt counts kept: a send tried before asks Hacienda before any POST).
 * The caller has cleared `hacienda_refused_at` in the same transaction. Returns the ids of the documents released.
 */
export async function releaseIssuer(trx: Executor, issuerId: number, now: Millis): Promise<number[]> {
  const released = await trx
    .updateTable('documents')
    .set({ state: 'pendiente', detalle_mensaje: null, updated_at: now })
    .where('issuer_id', '=', issuerId)
    .where('state', '=', CREDENTIALS_REFUSED)
    .returning('id')
    .execute();
  if (isPostgres(trx)) {
    // The jobs by their keys (`send:<document>`, `poll:<document>`, jobs.ts jobKey), through graphile-worker's view.
    const r = await sql<{ id: string }>`select id from graphile_worker.reschedule_jobs(
        array(select j.id from graphile_worker.jobs j join documents d on j.key in ('send:' || d.id, 'poll:' || d.id)
          where d.issuer_id = ${issuerId} and j.task_identifier in (${QUEUE_TASKS.send}, ${QUEUE_TASKS.poll})
          and j.run_at >= to_timestamp(${PARKED_RUN_AT}::double precision / 1000)),
        run_at => now())`.execute(trx);
    // Wake every worker process (graphile-worker's runners LISTEN on this channel).
    if (r.rows.length > 0) await sql`select pg_notify('jobs:insert', ${JSON.stringify({ count: r.rows.length })})`.execute(trx);
  } else {
    await trx
      .updateTable('jobs')
      .set({ run_at: now })
      .where('type', 'in', ['send', 'poll'])
      .where('done_at', 'is', null)
      .where('run_at', '>=', PARKED_RUN_AT)
      .where('document_id', 'in', trx.selectFrom('documents').select('id').where('issuer_id', '=', issuerId))
      .execute();
  }
  return released.map((r) => Number(r.id));
}
