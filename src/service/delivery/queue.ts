/**
 * The two queue back ends of the worker, behind one small interface (JobQueue): they take due jobs, run them
 * `concurrency` at a time with the worker's JobRunner, and keep the worker's claim on them alive.
 *
 *  - SQLite: a leasing loop over the jobs table (jobs.ts): leases of leaseMs, renewed every leaseMs/3 while a job
 *    runs (the heartbeat); a killed worker's leases expire and its jobs become due again.
 *  - PostgreSQL: a graphile-worker runner (woken by NOTIFY); the worker's heartbeat in queue_workers, the jobs of
 *    workers whose heartbeat stopped unlocked (unlockDeadWorkers), and this worker's own jobs whose end could not
 *    be recorded unlocked (unlockOwnOrphans).
 */
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Job as GraphileJob, JobHelpers, Runner, TaskList, WorkerPool } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Job, JobType } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import {
  DEFERRED_JOB_TYPES,
  JOB_TYPES,
  leaseJobs,
  pendingJobs,
  pgReviveGivenUpJobs,
  QUEUE_TASKS,
  releaseLeases,
  renewLeases,
  type QueuePayload,
} from '../../store/jobs.js';
import { heartbeat, unlockDeadWorkers, unlockOwnOrphans, unregisterWorker } from '../../store/workers.js';
import { AbortedError, errText } from './job.js';
import { ABORTED, graphileLog, logRetried, NOT_SETTLED } from './queue-log.js';

/** Runs one job, writing under `owner`'s lease. True when the job was settled (completed or rescheduled). */
export type JobRunner = (job: Job, owner: string) => Promise<boolean>;

export interface QueueOptions {
  /** The worker's name; the lease owner on SQLite. */
  name: string;
  concurrency: number;
  pollIntervalMs: number;
  leaseMs: number;
  queuePollIntervalMs: number;
  /**
   * SQLite: how many jobs of DEFERRED_JOB_TYPES (the receptor mails) may run at once; they are leased only into
   * slots that no other due job wants. PostgreSQL orders them by priority instead (jobs.ts).
   */
  deferredConcurrency: number;
  /** Job types this queue never takes (a CLI command's worker leaves the accounts' mailbox jobs to `fecr serve`). */
  skipTypes?: readonly JobType[];
}

export interface JobQueue {
  /** Lease owner: the worker's name on SQLite; on PostgreSQL its graphile-worker pool id once started. */
  readonly owner: string;
  /** True once kill() was called: jobs in flight write nothing more. */
  readonly aborted: boolean;
  /** True once stop() (or kill()) was called: a long job (a mailbox pass) ends after the step in hand. */
  readonly stopping: boolean;
  start(): void;
  /** Checks the queue now. */
  wake(): void;
  /** Resolves when no unfinished job is left in the queue and nothing is in flight. */
  idle(): Promise<void>;
  /** Stops taking jobs and waits for those in flight (queued jobs stay queued). */
  stop(): Promise<void>;
  /** A kill -9 (tests): stops at once, no more heartbeats or lease renewals; then stop() waits for the rest. */
  kill(): void;
  /** SQLite: while held, no job of DEFERRED_JOB_TYPES is taken (a batch mails after its verdicts). */
  holdDeferred(held: boolean): void;
  /**
   * SQLite: these documents' poll jobs are taken next, due or not (their verdict is known: delivery/verdict-hints.ts).
   * PostgreSQL: ignored (a hosted service hears Hacienda's callback, which makes the job due).
   */
  want(documentIds: readonly number[]): void;
}

export function openQueue(ctx: ServiceContext, log: Logger, opts: QueueOptions, run: JobRunner): JobQueue {
  return ctx.store.dialect === 'postgres' ? new PgQueue(ctx, log, opts, run) : new SqliteQueue(ctx, log, opts, run);
}

abstract class BaseQueue {
  owner: string;
  aborted = false;
  stopping = false;
  protected readonly inflight = new Map<number, Promise<void>>();
  protected heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(
    protected readonly ctx: ServiceContext,
    protected readonly log: Logger,
    protected readonly o: QueueOptions,
    protected readonly run: JobRunner,
  ) {
    this.owner = o.name;
  }

  protected deferredHeld = false;

  holdDeferred(held: boolean): void {
    this.deferredHeld = held;
    if (!held) this.wake();
  }

  want(_documentIds: readonly number[]): void {
    // Only the SQLite queue takes hints.
  }

  kill(): void {
    this.aborted = true;
    this.stopping = true;
    clearInterval(this.heartbeatTimer);
    this.wake();
  }

  abstract wake(): void;
}

// --- SQLite: the leasing loop ------------------------------------------------------------------------

class SqliteQueue extends BaseQueue implements JobQueue {
  private loopDone: Promise<void> = Promise.resolve();
  /** The ids in flight of DEFERRED_JOB_TYPES. */
  private readonly deferredInflight = new Set<number>();
  private signal: (() => void) | undefined;
  private idleWaiters: (() => void)[] = [];
  /** Documents whose poll job is wanted now (want()). */
  private readonly wanted = new Set<number>();

  override want(documentIds: readonly number[]): void {
    for (const id of documentIds) this.wanted.add(id);
    this.wake();
  }

  start(): void {
    this.loopDone = this.loop();
    const every = Math.max(10, Math.floor(this.o.leaseMs / 3));
    this.heartbeatTimer = setInterval(() => void this.renew(), every);
    this.heartbeatTimer.unref();
    this.log.info({ concurrency: this.o.concurrency, leaseMs: this.o.leaseMs }, 'worker started');
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const free = this.o.concurrency - this.inflight.size;
      let leased = 0;
      if (free > 0) {
        try {
          const lease = { owner: this.owner, leaseMs: this.o.leaseMs };
          const jobs = this.wanted.size > 0 ? await leaseJobs(this.ctx, { ...lease, limit: free, types: ['poll'], documentIds: this.takeWanted(free) }) : [];
          if (jobs.length < free) jobs.push(...(await leaseJobs(this.ctx, { ...lease, limit: free - jobs.length, exceptTypes: [...DEFERRED_JOB_TYPES, ...(this.o.skipTypes ?? [])] })));
          // The slots nothing else wants, up to the deferred jobs' own limit.
          const deferredFree = Math.min(free - jobs.length, this.o.deferredConcurrency - this.deferredInflight.size);
          if (deferredFree > 0 && !this.stopping && !this.deferredHeld) jobs.push(...(await leaseJobs(this.ctx, { ...lease, limit: deferredFree, types: DEFERRED_JOB_TYPES })));
          failures = 0;
          if (this.stopping) {
            // Leased just as we stopped: hand them back (due at once for the next run), unless killed.
            if (!this.aborted) await releaseLeases(this.ctx, this.owner, jobs.map((j) => j.id)).catch(() => undefined);
            break;
          }
          leased = jobs.length;
          for (const job of jobs) this.launch(job);
        } catch (e) {
          if (this.stopping) break;
          failures++;
          logRetried(this.log, e, 'leasing jobs failed');
          await this.wait(Math.min(5_000, this.o.pollIntervalMs * 2 ** failures));
          continue;
        }
      }
      if (leased > 0 && leased === free) continue; // maybe more due: lease again once a slot frees up
      if (this.inflight.size === 0 && this.idleWaiters.length > 0) await this.checkIdle();
      if (this.stopping) break;
      await this.wait(this.o.pollIntervalMs);
    }
  }

  /** Up to `n` wanted documents, no longer wanted (one whose job is running or done is simply not leased). */
  private takeWanted(n: number): number[] {
    const ids: number[] = [];
    for (const id of this.wanted) {
      if (ids.length >= n) break;
      ids.push(id);
      this.wanted.delete(id);
    }
    return ids;
  }

  /** Sleeps up to `ms`, or until wake() / a job finishing. */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(t);
        if (self.signal === done) self.signal = undefined;
        resolve();
      }
      this.signal = done;
    });
  }

  wake(): void {
    this.signal?.();
  }

  private async checkIdle(): Promise<void> {
    try {
      const { count } = await pendingJobs(this.ctx);
      if (count === 0 && this.inflight.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const f of waiters) f();
      }
    } catch (e) {
      logRetried(this.log, e, 'idle check failed');
    }
  }

  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.wake();
    });
  }

  private launch(job: Job): void {
    if (this.inflight.has(job.id)) return;
    if (DEFERRED_JOB_TYPES.includes(job.type)) this.deferredInflight.add(job.id);
    const p = this.run(job, this.owner)
      .then(() => undefined)
      .finally(() => {
        this.inflight.delete(job.id);
        this.deferredInflight.delete(job.id);
        this.wake();
      });
    this.inflight.set(job.id, p);
  }

  /** The heartbeat: the leases of the jobs in flight, renewed. */
  private async renew(): Promise<void> {
    if (this.aborted || this.inflight.size === 0) return;
    try {
      await renewLeases(this.ctx, this.owner, [...this.inflight.keys()], this.o.leaseMs);
    } catch (e) {
      if (!this.aborted) logRetried(this.log, e, 'renewing leases failed');
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loopDone.catch(() => undefined);
    await Promise.allSettled([...this.inflight.values()]);
    clearInterval(this.heartbeatTimer);
    if (!this.aborted) for (const f of this.idleWaiters.splice(0)) f();
  }
}

// --- PostgreSQL: graphile-worker runner ---------------------------------------------------------------

class PgQueue extends BaseQueue implements JobQueue {
  private started: Promise<void> = Promise.resolve();
  private runner: Runner | undefined;
  private pool: WorkerPool | undefined;
  private pgPool: import('pg').Pool | undefined;
  private readonly startedAt = Date.now();

  start(): void {
    this.started = this.startRunner().catch((e) => {
      this.log.error({ err: errText(e) }, 'the job runner did not start');
      throw e;
    });
    this.started.catch(() => undefined);
  }

  /** Runs the queue's jobs with graphile-worker: `concurrency` jobs at a time, woken by NOTIFY. */
  private async startRunner(): Promise<void> {
    const url = this.ctx.store.url;
    if (!url) throw new Error('a PostgreSQL store without its URL');
    const [{ run, Logger }, { default: pg }] = await Promise.all([import('graphile-worker'), import('pg')]);
    if (this.stopping) return;
    // Jobs graphile-worker gave up on before their limit was fecr's (store/jobs.ts PG_MAX_ATTEMPTS) run again.
    const revived = await pgReviveGivenUpJobs(this.ctx.store.db);
    if (revived > 0) this.log.warn({ jobs: revived }, 'jobs the queue had given up on are due again');
    // Its own pool: one LISTEN client plus one per concurrent job, apart from the API's queries.
    const pgPool = new pg.Pool({ connectionString: url, max: this.o.concurrency + 2, application_name: `fecr-worker:${this.o.name}` });
    pgPool.on('error', (e) => this.log.warn({ err: errText(e) }, 'queue connection lost'));
    pgPool.on('connect', (client) => client.on('error', () => undefined));
    this.pgPool = pgPool;
    const events = new EventEmitter();
    events.on('pool:create', ({ workerPool }: { workerPool: WorkerPool }) => {
      this.pool = workerPool;
      this.owner = workerPool.id;
      void this.beat();
    });
    const taskList: TaskList = {};
    for (const type of JOB_TYPES) if (!this.o.skipTypes?.includes(type)) taskList[QUEUE_TASKS[type]] = (payload, helpers) => this.runQueued(type, payload, helpers);
    const log = this.log;
    this.runner = await run({
      pgPool,
      taskList,
      crontab: '',
      concurrency: this.o.concurrency,
      pollInterval: this.o.queuePollIntervalMs,
      noHandleSignals: true,
      events: events as never,
      logger: new Logger(() => graphileLog(log) as never),
    });
    const every = Math.max(10, Math.floor(this.o.leaseMs / 3));
    this.heartbeatTimer = setInterval(() => void this.beat(), every);
    this.heartbeatTimer.unref();
    this.log.info({ concurrency: this.o.concurrency, leaseMs: this.o.leaseMs, queue: 'postgres', poolId: this.owner }, 'worker started');
  }

  /** Heartbeat of this worker, then the jobs of workers whose heartbeat stopped are freed. */
  private async beat(): Promise<void> {
    if (this.aborted || this.stopping || !this.pool) return;
    const db = this.ctx.store.db;
    try {
      const now = this.ctx.now();
      await heartbeat(db, { id: this.owner, name: this.o.name, host: hostname(), pid: process.pid, startedAt: this.startedAt }, now);
      const freed = await unlockDeadWorkers(db, now, this.o.leaseMs);
      if (freed.length > 0) {
        this.log.warn({ deadWorkers: freed }, 'unlocked the jobs of workers that stopped (no heartbeat)');
        this.wake();
      }
      const orphans = await unlockOwnOrphans(db, this.owner, [...this.inflight.keys()], this.o.leaseMs);
      if (orphans.length > 0) {
        this.log.warn({ jobs: orphans }, 'unlocked jobs whose end could not be recorded (database connection lost)');
        this.wake();
      }
    } catch (e) {
      if (!this.aborted && !this.stopping) logRetried(this.log, e, 'worker heartbeat failed');
    }
  }

  /** One graphile-worker job: our Job shape, then the shared job logic. Throws when the job was not settled. */
  private async runQueued(type: Job['type'], rawPayload: unknown, helpers: JobHelpers): Promise<void> {
    const gw: GraphileJob = helpers.job;
    if (this.aborted) throw new AbortedError();
    const p = (rawPayload ?? {}) as Partial<QueuePayload>;
    if (gw.locked_by) this.owner = gw.locked_by;
    const job: Job = {
      id: Number(gw.id),
      type,
      document_id: p.document_id ?? null,
      delivery_id: p.delivery_id ?? null,
      email_id: p.email_id ?? null,
      account_id: p.account_id ?? null,
      run_at: new Date(gw.run_at).getTime(),
      attempts: (p.prior ?? 0) + gw.attempts,
      lease_owner: gw.locked_by,
      lease_until: null,
      last_error: p.last_error ?? null,
      created_at: p.since ?? new Date(gw.created_at).getTime(),
      done_at: null,
    };
    const run = this.run(job, this.owner);
    this.inflight.set(job.id, run.then(() => undefined));
    let settled: boolean;
    try {
      settled = await run;
    } finally {
      this.inflight.delete(job.id);
    }
    // Not completed nor rescheduled by us (lease lost, aborted, store failure): graphile-worker must not delete it;
    // failing the job unlocks it (only while we hold it) for another run.
    if (!settled) throw new Error(this.aborted ? ABORTED : NOT_SETTLED);
  }

  wake(): void {
    if (this.pool && !this.stopping) {
      try {
        this.pool.nudge(this.o.concurrency);
      } catch {
        // shutting down
      }
    }
  }

  async idle(): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      try {
        if (this.inflight.size === 0 && (await pendingJobs(this.ctx)).count === 0 && this.inflight.size === 0) return;
      } catch (e) {
        logRetried(this.log, e, 'idle check failed');
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.started.catch(() => undefined);
    clearInterval(this.heartbeatTimer);
    await this.runner?.stop().catch((e: unknown) => this.log.warn({ err: errText(e) }, 'stopping the job runner'));
    await Promise.allSettled([...this.inflight.values()]);
    if (this.pool && !this.aborted) await unregisterWorker(this.ctx.store.db, this.owner).catch(() => undefined);
    await this.pgPool?.end().catch(() => undefined);
  }
}
