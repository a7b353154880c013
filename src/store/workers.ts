/**
 * Hosted mode (PostgreSQL): the registry of queue workers, their heartbeats, and the freeing of jobs that dead or
 * confused workers still hold (service/delivery/queue.ts calls these; jobs.ts holds the queue itself).
 */
import { sql } from 'kysely';
import type { Executor } from './jobs.js';
import type { Millis } from './schema.js';

/** Registers (or refreshes) a worker's heartbeat. */
export async function heartbeat(db: Executor, w: { id: string; name: string; host: string; pid: number; startedAt: Millis }, now: Millis): Promise<void> {
  await db
    .insertInto('queue_workers')
    .values({ id: w.id, name: w.name, host: w.host, pid: w.pid, started_at: w.startedAt, seen_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: now }))
    .execute();
}

/** Removes a worker from the registry (clean stop). */
export async function unregisterWorker(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('queue_workers').where('id', '=', id).execute();
}

/**
 * Frees the jobs a live queue worker still holds although it runs none of them: graphile-worker records a job's
 * end (complete or fail) after the task returned, without waiting; when the database connection drops at that
 * moment, the job stays locked by a pool that is alive, and nothing else would free it for hours. Only jobs
 * locked more than `olderThanMs` ago and not in `running` are freed (a job just fetched is never touched).
 * Returns the ids freed.
 */
export async function unlockOwnOrphans(db: Executor, owner: string, running: readonly number[], olderThanMs: number): Promise<number[]> {
  const r = await sql<{ id: string }>`update graphile_worker._private_jobs set locked_by = null, locked_at = null
    where locked_by = ${owner} and locked_at < now() - make_interval(secs => ${olderThanMs / 1000})
    and not (id = any(${running.map(String)}::bigint[])) returning id`.execute(db);
  return r.rows.map((row) => Number(row.id));
}

/**
 * Frees the jobs of dead workers (PostgreSQL): workers whose heartbeat is older than `deadAfterMs`, and locks
 * held longer than that by an owner that never registered (killed before its first heartbeat). Returns the
 * owners whose jobs were unlocked.
 */
export async function unlockDeadWorkers(db: Executor, now: Millis, deadAfterMs: number): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const dead = await trx.deleteFrom('queue_workers').where('seen_at', '<', now - deadAfterMs).returning('id').execute();
    const orphans = await sql<{ locked_by: string }>`select distinct locked_by from graphile_worker._private_jobs
      where locked_by is not null and locked_at < now() - make_interval(secs => ${deadAfterMs / 1000})
      and locked_by not in (select id from queue_workers)`.execute(trx);
    const ids = [...new Set([...dead.map((d) => d.id), ...orphans.rows.map((r) => r.locked_by)])];
    if (ids.length > 0) await sql`select graphile_worker.force_unlock_workers(${ids}::text[])`.execute(trx);
    return ids;
  });
}
