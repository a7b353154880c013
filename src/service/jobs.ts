/**
 * The job queue (`jobs` table): the outbox of the submission pipeline and the worker's work list.
 *
 * A job is due when `done_at is null and run_at <= now and (lease_until is null or lease_until < now)`.
 * `leaseJobs` claims due jobs atomically for one owner until `lease_until`; a live worker extends its leases
 * (`renewLeases`), so a lease only expires when its worker died (kill -9, power loss): the job then becomes
 * due again by itself. `attempts` counts leases (tries started), incremented when the job is leased, so a job
 * with `attempts > 1` was tried before, maybe by a worker that died half-way.
 *
 * Completing or rescheduling is guarded by the lease (`lease_owner = owner and done_at is null`): a worker that
 * lost its lease cannot finish a job another worker now owns. The writes take a Kysely executor, so they run
 * inside the caller's transaction with the other effects of the job.
 *
 * Dialect-neutral Kysely: `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING *`, which SQLite (3.35+) and
 * PostgreSQL both run; on PostgreSQL the inner SELECT takes `FOR UPDATE SKIP LOCKED` so concurrent workers
 * never wait on each other.
 */
import type { Kysely } from 'kysely';
import type { Database, Job, JobType, Millis } from '../store/schema.js';
import type { ServiceContext } from './context.js';

/** A Kysely<Database> or a transaction of it. */
export type Executor = Kysely<Database>;

export interface LeaseOptions {
  /** Who takes the lease (unique per worker instance). */
  owner: string;
  /** Max jobs to lease. */
  limit: number;
  /** Lease duration, ms. */
  leaseMs: number;
  /** Only these types (default all). */
  types?: readonly JobType[];
}

export interface NewJob {
  type: JobType;
  document_id?: number | null;
  delivery_id?: number | null;
  run_at: Millis;
}

/** Thrown inside a job's transaction when the job's lease was lost: the transaction rolls back. */
export class LeaseLostError extends Error {
  constructor(jobId: number, owner: string) {
    super(`job ${jobId} is no longer leased by ${owner}`);
    this.name = 'LeaseLostError';
  }
}

/** Leases up to `limit` due jobs (oldest run_at first) and returns them, `attempts` already incremented. */
export async function leaseJobs(ctx: Pick<ServiceContext, 'store' | 'now'>, opts: LeaseOptions): Promise<Job[]> {
  if (opts.limit <= 0) return [];
  const { db, dialect } = ctx.store;
  const now = ctx.now();
  return db.transaction().execute(async (trx) => {
    let due = trx
      .selectFrom('jobs')
      .select('id')
      .where('done_at', 'is', null)
      .where('run_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('run_at')
      .orderBy('id')
      .limit(opts.limit);
    if (opts.types && opts.types.length > 0) due = due.where('type', 'in', [...opts.types]);
    if (dialect === 'postgres') due = due.forUpdate().skipLocked();
    const rows = await trx
      .updateTable('jobs')
      .set((eb) => ({
        lease_owner: opts.owner,
        lease_until: now + opts.leaseMs,
        attempts: eb('attempts', '+', 1),
      }))
      .where('id', 'in', due)
      // Re-checked on the row itself: safe even where the subquery is not locked.
      .where('done_at', 'is', null)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .returningAll()
      .execute();
    return rows.sort((a, b) => a.run_at - b.run_at || a.id - b.id);
  });
}

/** Extends the leases this owner still holds on these jobs. Returns the ids still held. */
export async function renewLeases(ctx: Pick<ServiceContext, 'store' | 'now'>, owner: string, ids: readonly number[], leaseMs: number): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await ctx.store.db
    .updateTable('jobs')
    .set({ lease_until: ctx.now() + leaseMs })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', owner)
    .where('done_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Adds a job. */
export async function enqueueJob(db: Executor, job: NewJob, now: Millis): Promise<number> {
  const row = await db
    .insertInto('jobs')
    .values({
      type: job.type,
      document_id: job.document_id ?? null,
      delivery_id: job.delivery_id ?? null,
      run_at: job.run_at,
      attempts: 0,
      lease_owner: null,
      lease_until: null,
      last_error: null,
      created_at: now,
      done_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Marks the job done. Throws LeaseLostError when `owner` no longer holds it. */
export async function completeJob(db: Executor, job: Pick<Job, 'id'>, owner: string, now: Millis, lastError: string | null = null): Promise<void> {
  const res = await db
    .updateTable('jobs')
    .set({ done_at: now, lease_owner: null, lease_until: null, last_error: lastError })
    .where('id', '=', job.id)
    .where('lease_owner', '=', owner)
    .where('done_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new LeaseLostError(job.id, owner);
}

/** Releases the job to run again at `runAt` with `lastError`. Throws LeaseLostError when `owner` no longer holds it. */
export async function rescheduleJob(db: Executor, job: Pick<Job, 'id'>, owner: string, runAt: Millis, lastError: string | null): Promise<void> {
  const res = await db
    .updateTable('jobs')
    .set({ run_at: runAt, lease_owner: null, lease_until: null, last_error: lastError })
    .where('id', '=', job.id)
    .where('lease_owner', '=', owner)
    .where('done_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new LeaseLostError(job.id, owner);
}

/** Gives the leases of this owner back, due at once (graceful hand-over; not used on stop, where leases simply expire). */
export async function releaseLeases(ctx: Pick<ServiceContext, 'store'>, owner: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await ctx.store.db
    .updateTable('jobs')
    .set({ lease_owner: null, lease_until: null })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', owner)
    .where('done_at', 'is', null)
    .execute();
}

/** Unfinished jobs, and the earliest run_at among them (for idle checks and metrics). */
export async function pendingJobs(ctx: Pick<ServiceContext, 'store'>): Promise<{ count: number; nextRunAt: Millis | null }> {
  const row = await ctx.store.db
    .selectFrom('jobs')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('run_at').as('next')])
    .where('done_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), nextRunAt: row.next === null || row.next === undefined ? null : Number(row.next) };
}
