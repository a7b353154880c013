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
 *
 * ## The queue on PostgreSQL (hosted mode): graphile-worker 0.17
 *
 * The same functions, the same guarantees, another table. `enqueueJob`, `completeJob`, `rescheduleJob` and
 * `pendingJobs` look at the executor's dialect; on PostgreSQL the jobs live in graphile-worker's table (the
 * `jobs` table stays empty) and are consumed by graphile-worker runners (delivery/queue.ts), woken by LISTEN/NOTIFY:
 *
 *  - enqueue = `graphile_worker.add_job(task, payload, run_at, job_key)` in the caller's transaction (the outbox
 *    stays atomic with the document or delivery row). Job keys (`send:<document>`, `poll:<document>`,
 *    `webhook:<delivery>`) dedupe: one pending job per document step or delivery. A new document's first `send`
 *    job is added by the document's INSERT statement itself (pgAddNewDocumentSendJob, submitDocument).
 *  - the lease = graphile-worker's lock (`locked_by` = the runner's pool id = the worker's `owner`).
 *  - complete = DELETE of the job row WHERE locked_by = owner, inside the job's effects transaction: the same
 *    lease guard as SQLite (a worker that lost its lock cannot finish a job another worker now holds), and the
 *    completion commits or rolls back with the effects. graphile-worker's own completion after the task returns
 *    then deletes nothing.
 *  - reschedule = that guarded DELETE + `add_job` of the same key at the new run_at, in one transaction. The
 *    attempt count and the first-enqueue time travel in the payload (`prior`, `since`), so backoff, the poll
 *    window and GET-before-POST (attempts > 1) work as on SQLite.
 *  - a dead worker: graphile-worker would only free its locks after 4 hours. Each worker writes a heartbeat in
 *    `queue_workers`; survivors unlock (graphile_worker.force_unlock_workers) the jobs of workers whose heartbeat
 *    stopped — the analogue of an expired lease. The re-run sees attempts > 1 and asks Hacienda before POSTing.
 *
 * graphile-worker's tables are read and written directly only for the lease guard (`_private_jobs.locked_by`),
 * a documented internal of the pinned 0.17 schema; everything else goes through its public SQL functions.
 */
import { PostgresAdapter, sql, type Expression, type Kysely, type RawBuilder } from 'kysely';
import type { Database, Job, JobType, Millis } from './schema.js';
import type { Store } from './store.js';

/** graphile-worker task identifiers of the job types. */
export const QUEUE_TASKS: Readonly<Record<JobType, string>> = { send: 'fecr_send', poll: 'fecr_poll', webhook: 'fecr_webhook', email: 'fecr_email', mailbox: 'fecr_mailbox' };
export const JOB_TYPES: readonly JobType[] = ['send', 'poll', 'webhook', 'email', 'mailbox'];
/** Jobs that run for ever (an account's suppliers' mailbox, read every few minutes): never counted as pending work. */
export const RECURRING_JOB_TYPES: readonly JobType[] = ['mailbox'];

/** The payload of a graphile-worker job of ours. */
export interface QueuePayload {
  document_id: number | null;
  delivery_id: number | null;
  /** The mail of an `email` job (absent in payloads written before it existed). */
  email_id?: number | null;
  /** The account of a `mailbox` job. */
  account_id?: number | null;
  /** Tries before this job row (carried over reschedules). */
  prior: number;
  /** When the first job of this chain was enqueued (epoch ms): the poll and webhook windows count from it. */
  since: Millis;
  last_error: string | null;
}

/** Whether a Kysely executor (or transaction) talks to PostgreSQL. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * The run_at of a parked job: one that waits for the user, not for a time (a send or poll of an issuer whose Hacienda
 * credentials were refused, store/issuer-credentials.ts). Never due; not counted as pending; not hurried by a callback.
 */
export const PARKED_RUN_AT: Millis = Date.UTC(9999, 0, 1);

/** The dedupe key of a job: one pending job per document step or delivery. */
export function jobKey(type: JobType, documentId: number | null | undefined, deliveryId: number | null | undefined, emailId?: number | null, accountId?: number | null): string | null {
  if (type === 'mailbox') return accountId == null ? null : `mailbox:${accountId}`;
  if (type === 'email') return emailId == null ? null : `email:${emailId}`;
  if (type === 'webhook') return deliveryId == null ? null : `webhook:${deliveryId}`;
  return documentId == null ? null : `${type}:${documentId}`;
}

/**
 * The types run only when no job of another type is due (the receptor mails: courtesy copies, which must not slow
 * the sends, polls and webhooks of the documents themselves). SQLite: the worker leases them last, a few at a
 * time (queue.ts); PostgreSQL: graphile-worker's priority (jobs of a lower number first; ours are 0).
 */
export const DEFERRED_JOB_TYPES: readonly JobType[] = ['email'];

/**
 * graphile-worker drops a job after `max_attempts` unsettled runs (default 25; then unseen by pendingJobs: its document
 * or mail `pendiente` with no word, issue 26). fecr's jobs give up themselves, with a final state (`error`, `fallido`),
 * and are never dropped, as on SQLite: smallint's largest (graphile's failure backoff caps at e^10 s).
 */
export const PG_MAX_ATTEMPTS = 32767;

async function pgAddJob(db: Executor, type: JobType, payload: QueuePayload, runAt: Millis, mode: 'replace' | 'preserve_run_at'): Promise<number> {
  const key = jobKey(type, payload.document_id, payload.delivery_id, payload.email_id, payload.account_id);
  const priority = DEFERRED_JOB_TYPES.includes(type) ? 1 : 0;
  const r = await sql<{ id: string | number }>`select id from graphile_worker.add_job(${QUEUE_TASKS[type]}, ${JSON.stringify(payload)}::json, run_at => to_timestamp(${runAt}::double precision / 1000), job_key => ${key}, job_key_mode => ${mode}, priority => ${priority}::int, max_attempts => ${PG_MAX_ATTEMPTS}::int)`.execute(db);
  return Number(r.rows[0]!.id);
}

/**
 * PostgreSQL: the `send` job of a document row inserted by the same statement, as a SQL expression over that
 * row's id (submitDocument inserts the document and enqueues this job in one statement: one round trip, no
 * BEGIN/COMMIT, still atomic). The payload is the one enqueueJob writes ({document_id, delivery_id: null,
 * prior: 0, since: now, last_error: null}); the job key is `send:<id>` as jobKey() gives.
 *
 * job_key_mode 'unsafe_dedupe' (a documented mode of graphile_worker.add_job): the key names a document id
 * created by this very statement (an identity column: ids are never reused), so no job with that key can
 * exist, and then 'unsafe_dedupe' and 'replace' insert the same row and NOTIFY the same way. The case the
 * graphile-worker documentation warns about (an existing job with the key, already running, left in place)
 * cannot arise. Why not 'replace': it goes through add_jobs, whose statements PL/pgSQL plans once per
 * connection; a connection opened while the queue was small keeps a plan that scans the whole job table
 * (measured: 0.4 ms per add_job on a new connection vs 3 ms on one opened before 30 000 jobs queued up, when
 * no ANALYZE has run since — autovacuum off or not yet triggered). 'unsafe_dedupe' is a single INSERT … ON
 * CONFLICT (key) that only looks up the tiny task and queue tables: ≈ 0.1 ms whatever the queue length.
 */
export function pgAddNewDocumentSendJob(documentId: Expression<number>, now: Millis): RawBuilder<number> {
  const payload = sql`json_build_object('document_id', ${documentId}, 'delivery_id', null, 'prior', 0, 'since', ${now}::bigint, 'last_error', null)`;
  return sql<number>`(select id from graphile_worker.add_job(${QUEUE_TASKS.send}, ${payload}, run_at => to_timestamp(${now}::double precision / 1000), job_key => ${'send:'} || ${documentId}, job_key_mode => 'unsafe_dedupe', max_attempts => ${PG_MAX_ATTEMPTS}::int))`;
}

/** PostgreSQL, at a worker's start: jobs of ours graphile-worker dropped (enqueued before PG_MAX_ATTEMPTS) due again. */
export async function pgReviveGivenUpJobs(db: Executor): Promise<number> {
  const r = await sql<{ id: string }>`select id from graphile_worker.reschedule_jobs(
      array(select id from graphile_worker.jobs where task_identifier in (${sql.join(Object.values(QUEUE_TASKS))}) and attempts >= max_attempts),
      run_at => now(), attempts => 0, max_attempts => ${PG_MAX_ATTEMPTS}::int)`.execute(db);
  return r.rows.length;
}

/** The guarded completion on PostgreSQL: deletes the job row only while `owner` holds its lock. */
async function pgTakeJob(db: Executor, job: Pick<Job, 'id'>, owner: string): Promise<void> {
  const r = await sql<{ id: string }>`delete from graphile_worker._private_jobs where id = ${job.id} and locked_by = ${owner} returning id`.execute(db);
  if (r.rows.length !== 1) throw new LeaseLostError(job.id, owner);
}

/** A Kysely<Database> or a transaction of it. */
export type Executor = Kysely<Database>;

/** What the queue's functions need of their caller: the store and a clock (a ServiceContext is one). */
export interface QueueContext {
  store: Store;
  now: () => Millis;
}

export interface LeaseOptions {
  /** Who takes the lease (unique per worker instance). */
  owner: string;
  /** Max jobs to lease. */
  limit: number;
  /** Lease duration, ms. */
  leaseMs: number;
  /** Only these types (default all). */
  types?: readonly JobType[];
  /** None of these types. */
  exceptTypes?: readonly JobType[];
  /**
   * Only these documents' jobs, due or not (but never parked): what Hacienda's verdict made due (delivery/verdict-hints.ts).
   */
  documentIds?: readonly number[];
}

export interface NewJob {
  type: JobType;
  document_id?: number | null;
  delivery_id?: number | null;
  email_id?: number | null;
  account_id?: number | null;
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
export async function leaseJobs(ctx: QueueContext, opts: LeaseOptions): Promise<Job[]> {
  if (opts.limit <= 0 || opts.documentIds?.length === 0) return [];
  const { db, dialect } = ctx.store;
  const now = ctx.now();
  // On SQLite the lease is one statement, atomic by itself: no BEGIN/COMMIT around it (issue 31: two statements
  // fewer per lease, and a lease is taken per job). PostgreSQL keeps the transaction for FOR UPDATE SKIP LOCKED.
  const inTransaction = <T>(f: (trx: Executor) => Promise<T>): Promise<T> => (dialect === 'postgres' ? db.transaction().execute(f) : f(db));
  return inTransaction(async (trx) => {
    // The types asked for, by name, so that the index jobs_due_by_type (type, done_at, run_at) finds them directly
    // (migration 0007): one type reads it in run_at order; several are sorted after (`run_at + 0` keeps SQLite from
    // walking an index in run_at order past every due job of the other types, e.g. a batch's held mails; migration
    // 0019 dropped jobs_due (done_at, run_at), which the planner took for that walk).
    const except = opts.exceptTypes ?? [];
    const types = (opts.types ?? JOB_TYPES).filter((t) => !except.includes(t));
    if (types.length === 0) return [];
    let due = trx
      .selectFrom('jobs')
      .select('id')
      .where('done_at', 'is', null)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .limit(opts.limit);
    due = opts.documentIds ? due.where('document_id', 'in', [...opts.documentIds]).where('run_at', '<', PARKED_RUN_AT) : due.where('run_at', '<=', now);
    if (types.length === 1) due = due.where('type', '=', types[0]!).orderBy('run_at').orderBy('id');
    else if (types.length < JOB_TYPES.length) due = due.where('type', 'in', types).orderBy(sql`run_at + 0`).orderBy('id');
    else due = due.orderBy('run_at').orderBy('id');
    if (dialect === 'postgres') due = due.forUpdate().skipLocked();
    const rows = await trx
      .updateTable('jobs')
      .set((eb) => ({
        lease_owner: opts.owner,
        lease_until: now + opts.leaseMs,
        attempts: eb('attempts', '+', 1),
      }))
      .where('id', 'in', due)
      // Re-checked on the row itself: safe even where the subquery is not locked. `+done_at`: SQLite then finds the
      // rows by id (the subquery's list) instead of walking jobs_due_by_type over every due job (issue 31: the
      // lease took 1.0 ms with 100 due jobs, 0.5 ms so; it grew with the queue). PostgreSQL reads `+x` as `x`.
      .where(sql`+done_at`, 'is', null)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .returningAll()
      .execute();
    return rows.sort((a, b) => a.run_at - b.run_at || a.id - b.id);
  });
}

/** Extends the leases this owner still holds on these jobs. Returns the ids still held. */
export async function renewLeases(ctx: QueueContext, owner: string, ids: readonly number[], leaseMs: number): Promise<number[]> {
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

/** Adds a job (in the caller's transaction when `db` is one). */
export async function enqueueJob(db: Executor, job: NewJob, now: Millis): Promise<number> {
  if (isPostgres(db)) {
    const payload: QueuePayload = { document_id: job.document_id ?? null, delivery_id: job.delivery_id ?? null, ...(job.email_id != null ? { email_id: job.email_id } : {}), ...(job.account_id != null ? { account_id: job.account_id } : {}), prior: 0, since: now, last_error: null };
    return pgAddJob(db, job.type, payload, job.run_at, 'replace');
  }
  const row = await db
    .insertInto('jobs')
    .values({
      type: job.type,
      document_id: job.document_id ?? null,
      delivery_id: job.delivery_id ?? null,
      email_id: job.email_id ?? null,
      ...(job.account_id != null ? { account_id: job.account_id } : {}),
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
  if (isPostgres(db)) return pgTakeJob(db, job, owner);
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
export async function rescheduleJob(
  db: Executor,
  job: Pick<Job, 'id' | 'type' | 'document_id' | 'delivery_id' | 'attempts' | 'created_at'> & { email_id?: number | null },
  owner: string,
  runAt: Millis,
  lastError: string | null,
): Promise<void> {
  if (isPostgres(db)) {
    const payload: QueuePayload = { document_id: job.document_id, delivery_id: job.delivery_id, ...(job.email_id != null ? { email_id: job.email_id } : {}), prior: job.attempts, since: job.created_at, last_error: lastError };
    const run = async (trx: Executor) => {
      await pgTakeJob(trx, job, owner);
      // preserve_run_at: when someone asked for an earlier run meanwhile (callback, replay), that run_at stays.
      await pgAddJob(trx, job.type, payload, runAt, 'preserve_run_at');
    };
    return db.isTransaction ? run(db) : db.transaction().execute(run);
  }
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
export async function releaseLeases(ctx: Pick<QueueContext, 'store'>, owner: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await ctx.store.db
    .updateTable('jobs')
    .set({ lease_owner: null, lease_until: null })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', owner)
    .where('done_at', 'is', null)
    .execute();
}

/** Unfinished jobs but the parked and the recurring ones, and the earliest run_at among them (for idle checks and metrics). */
export async function pendingJobs(ctx: Pick<QueueContext, 'store'>): Promise<{ count: number; nextRunAt: Millis | null }> {
  if (ctx.store.dialect === 'postgres') {
    const tasks = JOB_TYPES.filter((t) => !RECURRING_JOB_TYPES.includes(t)).map((t) => QUEUE_TASKS[t]);
    const r = await sql<{ count: number | string; next: Date | null }>`select count(*) as count, min(run_at) as next from graphile_worker.jobs
      where task_identifier in (${sql.join(tasks)}) and attempts < max_attempts
      and run_at < to_timestamp(${PARKED_RUN_AT}::double precision / 1000)`.execute(ctx.store.db);
    const row = r.rows[0]!;
    return { count: Number(row.count), nextRunAt: row.next ? new Date(row.next).getTime() : null };
  }
  const row = await ctx.store.db
    .selectFrom('jobs')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('run_at').as('next')])
    .where('done_at', 'is', null)
    .where('run_at', '<', PARKED_RUN_AT)
    .where('type', 'not in', RECURRING_JOB_TYPES)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), nextRunAt: row.next === null || row.next === undefined ? null : Number(row.next) };
}

/** Makes a document's pending send/poll jobs due now (Hacienda's callback). Jobs being run, and parked ones, are left alone. */
export async function hurryDocumentJobs(ctx: Pick<QueueContext, 'store'>, documentId: number, now: Millis): Promise<number> {
  const { db } = ctx.store;
  if (ctx.store.dialect === 'postgres') {
    const keys = [`send:${documentId}`, `poll:${documentId}`];
    const r = await sql<{ id: string }>`select id from graphile_worker.reschedule_jobs(
        array(select id from graphile_worker.jobs where key in (${sql.join(keys)}) and locked_at is null and run_at > now()
          and run_at < to_timestamp(${PARKED_RUN_AT}::double precision / 1000)),
        run_at => now())`.execute(db);
    // Wake every worker process (graphile-worker's runners LISTEN on this channel).
    if (r.rows.length > 0) await sql`select pg_notify('jobs:insert', ${JSON.stringify({ count: r.rows.length })})`.execute(db);
    return r.rows.length;
  }
  const res = await db
    .updateTable('jobs')
    .set({ run_at: now })
    .where('document_id', '=', documentId)
    .where('type', 'in', ['send', 'poll'])
    .where('done_at', 'is', null)
    .where('run_at', '>', now)
    .where('run_at', '<', PARKED_RUN_AT)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

// --- Reads of the SQLite queue that the use cases make (the local run) ---------------------------------

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

/** Why the document's send job has not reached Hacienda yet: its last attempt's cause (null: none, or it is done). */
export async function unsentCauseOf(db: Kysely<Database>, documentId: number): Promise<string | null> {
  const row = await db.selectFrom('jobs').select(['last_error', 'done_at']).where('document_id', '=', documentId).where('type', '=', 'send').executeTakeFirst();
  return row && row.done_at === null ? row.last_error : null;
}

/** The document's `email` jobs that are not done yet (its mails to the receptor being sent or waiting for a retry). */
export function openMailJobsOf(db: Kysely<Database>, documentId: number): Promise<(JobProgress & { id: number })[]> {
  return db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'lease_owner', 'done_at'])
    .where('document_id', '=', documentId)
    .where('type', '=', 'email')
    .where('done_at', 'is', null)
    .execute();
}

/**
 * How many `email` jobs still have an attempt to make now: never tried, or being tried (not those waiting for a
 * retry after a failed attempt, nor those of documents not decided yet).
 */
export async function mailJobsToRun(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', 'email')
    .where('done_at', 'is', null)
    .where((eb) => eb.or([eb('attempts', '=', 0), eb('lease_owner', 'is not', null)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The document's send and poll jobs that are not done yet (nor parked). */
export function openDeliveryJobsOf(db: Kysely<Database>, documentId: number): Promise<(JobProgress & { id: number })[]> {
  return db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'lease_owner', 'done_at'])
    .where('document_id', '=', documentId)
    .where('type', 'in', ['send', 'poll'])
    .where('done_at', 'is', null)
    .where('run_at', '<', PARKED_RUN_AT)
    .execute();
}
