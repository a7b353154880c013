/**
 * The background worker: takes jobs from the queue (jobs.ts) and runs them, `concurrency` at a time.
 *
 *  - `send`: POST the signed document to Hacienda with the issuer's own credentials (usuarioHacienda,
 *    claveHacienda base64-decoded). A job tried before (attempts > 1, e.g. after a kill -9 mid-POST) first GETs
 *    the status and skips the POST when Hacienda already has the clave; the client itself never re-POSTs
 *    blindly either. Received → document `enviado` + a `poll` job. A 400 validation answer (the document itself
 *    is wrong) → document `error` with Hacienda's cause in detalle_mensaje (no webhook: nothing was processed;
 *    the error stays visible on the document). Network, 5xx, 429, IdP or credential problems → retried with
 *    exponential backoff and jitter; a 429 whose Retry-After is longer than the client waits inline (a per-issuer
 *    quota) → retried no sooner than Retry-After says. After a POST whose answer was lost, a 404 from the status
 *    query within `indexDelayToleranceMs` (30 s) is Hacienda's index delay, asked again rather than re-POSTed.
 *  - `poll`: GET the status; recibido/procesando/unknown → again after 300 ms doubling to 30 s (after 24 h, hourly);
 *    aceptado/rechazado/error → in ONE transaction: the MensajeHacienda, mensaje, detalle, state and decided_at on
 *    the document, the job done, and the webhook delivery + its job (when the account has a webhook URL).
 *  - `webhook`: one delivery attempt (webhooks.ts).
 *
 * Every effect of a job is written in one transaction with the job's completion, guarded by its lease, so a
 * crash at any point either leaves the job to be redone (safely: GET before POST) or has fully done it.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Job as GraphileJob, JobHelpers, Runner, TaskList, WorkerPool } from 'graphile-worker';
import { parseComprobanteXml } from '../core/xml/parse.js';
import {
  HttpClient,
  RateLimitedError,
  ReceptionClient,
  ReceptionValidationError,
  TokenManager,
  type HaciendaEndpoints,
  type HttpClientOptions,
  type IdentificacionApi,
  type ReceptionStatus,
  type RetryPolicy,
} from '../hacienda/index.js';
import type { DocumentState, Issuer, Job } from '../store/schema.js';
import { storeFaultOf } from '../store/faults.js';
import type { ServiceContext } from './context.js';
import { issuerSecretsContext, type IssuerSecrets, type StoredIssuerRecord } from './issuers.js';
import {
  completeJob,
  enqueueJob,
  heartbeat,
  hurryDocumentJobs,
  JOB_TYPES,
  leaseJobs,
  LeaseLostError,
  pendingJobs,
  QUEUE_TASKS,
  releaseLeases,
  renewLeases,
  rescheduleJob,
  unlockDeadWorkers,
  unlockOwnOrphans,
  unregisterWorker,
  type QueuePayload,
} from './jobs.js';
import { createDelivery, WebhookSender } from './webhooks.js';
import { isClave } from '../core/clave.js';
import { FINAL_STATES } from '../core/lifecycle.js';

export interface WorkerOptions {
  /** Lease owner name (default `worker-<pid>-<random>`); must be unique per running worker. */
  owner?: string;
  /** Jobs run at the same time (default 8). */
  concurrency?: number;
  /** How often the queue is checked when idle, ms (default 50). */
  pollIntervalMs?: number;
  /**
   * Lease duration, ms (default 30 000); live workers renew their leases every leaseMs/3. On PostgreSQL the same
   * figure is the heartbeat timeout: a worker silent for leaseMs is dead and its jobs are unlocked.
   */
  leaseMs?: number;
  /** PostgreSQL: how often each graphile-worker runner looks for jobs that became due (default 250 ms; new jobs arrive by NOTIFY at once). */
  queuePollIntervalMs?: number;
  /** Webhook retry window from when the delivery was queued (default 24 h), then `fallido`. */
  webhookRetryWindowMs?: number;
  /** Webhook backoff: first retry (default 5 s), doubling, capped (default 1 h). */
  webhookBackoffBaseMs?: number;
  webhookBackoffMaxMs?: number;
  /** Webhook HTTP timeouts (defaults 5 s connect, 10 s headers, 10 s body). */
  webhookConnectTimeoutMs?: number;
  webhookHeadersTimeoutMs?: number;
  webhookBodyTimeoutMs?: number;
  /** First status query after the POST (default 300 ms), doubling per query up to pollMaxIntervalMs (default 30 s). */
  firstPollDelayMs?: number;
  pollMaxIntervalMs?: number;
  /** After this long without a verdict (default 24 h) the status is queried every pollSlowIntervalMs (default 1 h). */
  pollWindowMs?: number;
  pollSlowIntervalMs?: number;
  /** Backoff of failed sends: first retry (default 1 s), doubling, capped (default 5 min). */
  sendBackoffBaseMs?: number;
  sendBackoffMaxMs?: number;
  /** Public URL of our Hacienda callback endpoint, sent as `callbackUrl` with each document (default none). */
  callbackUrl?: string;
  /** Retries inside one Hacienda call (default 3 attempts, 200 ms base, 2 s cap); longer outages are the queue's job. */
  haciendaRetry?: Partial<RetryPolicy>;
  /**
   * How long after a POST whose answer was lost (or a 500/502/504) a 404 from the status query is taken for
   * Hacienda's index delay and asked again before the document is POSTed again (default 30 s; 0 trusts the 404).
   */
  indexDelayToleranceMs?: number;
  /** HTTP options of the Hacienda client (default 5 s connect, 15 s headers/body). */
  haciendaHttp?: HttpClientOptions;
  /** Which Hacienda endpoints an issuer talks to (default ctx.hacienda.endpoints for every issuer). */
  endpointsFor?: (issuer: StoredIssuerRecord) => HaciendaEndpoints;
  /** Random source for jitter (default Math.random). */
  random?: () => number;
}

export interface WorkerStats {
  sent: number;
  confirmedByStatus: number;
  polls: number;
  decided: number;
  webhooksDelivered: number;
  webhookAttempts: number;
  retries: number;
  errors: number;
}

export interface Worker {
  /** Lease owner: the worker's name on SQLite; on PostgreSQL its graphile-worker pool id once started. */
  readonly owner: string;
  readonly stats: Readonly<WorkerStats>;
  /** The last job failure that was a store fault (a full disk, a lost database); cleared when a job succeeds. */
  readonly lastStoreFault: Error | undefined;
  /** Stops leasing, lets in-flight jobs finish, closes the Hacienda sessions. Queued jobs stay queued. */
  stop(): Promise<void>;
  /** Resolves when no unfinished job is left in the queue and nothing is in flight. */
  idle(): Promise<void>;
  /** Checks the queue now (e.g. right after a submission or a callback). */
  wake(): void;
  /**
   * Simulates a kill -9 (tests): stops at once; in-flight jobs write nothing more to the store and their leases
   * are not renewed, so they become due again after leaseMs. Returns when the abandoned HTTP calls settled.
   */
  abort(): Promise<void>;
}

/** claveHacienda is base64 per the spec; a value that is not canonical base64 of UTF-8 text is used as is. */
export function decodeClaveHacienda(value: string): string {
  const t = value.trim();
  if (t.length > 0 && t.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(t)) {
    const bytes = Buffer.from(t, 'base64');
    const text = bytes.toString('utf8');
    if (bytes.toString('base64') === t && Buffer.from(text, 'utf8').equals(bytes) && !/[\u0000-\u001f\u007f]/.test(text)) return text;
  }
  return value;
}

class AbortedError extends Error {
  constructor() {
    super('worker aborted');
    this.name = 'AbortedError';
  }
}


interface ClientEntry {
  key: string;
  client: ReceptionClient;
}

export function startWorker(ctx: ServiceContext, opts: WorkerOptions = {}): Worker {
  const w = new QueueWorker(ctx, opts);
  w.start();
  return w;
}

class QueueWorker implements Worker {
  owner: string;
  private readonly name: string;
  readonly stats: WorkerStats = { sent: 0, confirmedByStatus: 0, polls: 0, decided: 0, webhooksDelivered: 0, webhookAttempts: 0, retries: 0, errors: 0 };
  private readonly log;
  private readonly o;
  private readonly random: () => number;
  private readonly http: HttpClient;
  private readonly tokens = new Map<string, TokenManager>();
  private readonly clients = new Map<number, ClientEntry>();
  private readonly webhooks: WebhookSender;
  private readonly inflight = new Map<number, Promise<void>>();
  private stopping = false;
  private aborted = false;
  private loopDone: Promise<void> = Promise.resolve();
  private signal: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly ctx: ServiceContext,
    opts: WorkerOptions,
  ) {
    this.owner = opts.owner ?? `worker-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.name = this.owner;
    this.log = ctx.logger.child({ component: 'worker', owner: this.owner });
    this.random = opts.random ?? Math.random;
    this.o = {
      concurrency: Math.max(1, opts.concurrency ?? 8),
      pollIntervalMs: opts.pollIntervalMs ?? 50,
      leaseMs: opts.leaseMs ?? 30_000,
      queuePollIntervalMs: opts.queuePollIntervalMs ?? 250,
      firstPollDelayMs: opts.firstPollDelayMs ?? 300,
      pollMaxIntervalMs: opts.pollMaxIntervalMs ?? 30_000,
      pollWindowMs: opts.pollWindowMs ?? 24 * 3600_000,
      pollSlowIntervalMs: opts.pollSlowIntervalMs ?? 3600_000,
      sendBackoffBaseMs: opts.sendBackoffBaseMs ?? 1_000,
      sendBackoffMaxMs: opts.sendBackoffMaxMs ?? 300_000,
      callbackUrl: opts.callbackUrl,
      haciendaRetry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 2_000, maxServerWaitMs: 10_000, ...opts.haciendaRetry },
      indexDelayToleranceMs: opts.indexDelayToleranceMs ?? 30_000,
      endpointsFor: opts.endpointsFor ?? (() => ctx.hacienda.endpoints),
    };
    this.http = new HttpClient({ connectTimeoutMs: 5_000, headersTimeoutMs: 15_000, bodyTimeoutMs: 15_000, connections: 32, ...opts.haciendaHttp });
    this.webhooks = new WebhookSender(ctx, {
      retryWindowMs: opts.webhookRetryWindowMs ?? 24 * 3600_000,
      ...(opts.webhookBackoffBaseMs !== undefined ? { backoffBaseMs: opts.webhookBackoffBaseMs } : {}),
      ...(opts.webhookBackoffMaxMs !== undefined ? { backoffMaxMs: opts.webhookBackoffMaxMs } : {}),
      ...(opts.webhookConnectTimeoutMs !== undefined ? { connectTimeoutMs: opts.webhookConnectTimeoutMs } : {}),
      ...(opts.webhookHeadersTimeoutMs !== undefined ? { headersTimeoutMs: opts.webhookHeadersTimeoutMs } : {}),
      ...(opts.webhookBodyTimeoutMs !== undefined ? { bodyTimeoutMs: opts.webhookBodyTimeoutMs } : {}),
      random: this.random,
    });
  }

  start(): void {
    if (this.ctx.store.dialect === 'postgres') {
      this.loopDone = this.startQueueRunner().catch((e) => {
        this.log.error({ err: errText(e) }, 'the job runner did not start');
        throw e;
      });
      this.loopDone.catch(() => undefined);
      return;
    }
    this.loopDone = this.loop();
    const every = Math.max(10, Math.floor(this.o.leaseMs / 3));
    this.heartbeat = setInterval(() => void this.renew(), every);
    this.heartbeat.unref();
    this.log.info({ concurrency: this.o.concurrency, leaseMs: this.o.leaseMs }, 'worker started');
  }

  // --- PostgreSQL: graphile-worker runner -----------------------------------------------------------

  private runner: Runner | undefined;
  private pool: WorkerPool | undefined;
  private pgPool: import('pg').Pool | undefined;
  private startedAt = Date.now();

  /** Runs the queue's jobs with graphile-worker: `concurrency` jobs at a time, woken by NOTIFY. */
  private async startQueueRunner(): Promise<void> {
    const url = this.ctx.store.url;
    if (!url) throw new Error('a PostgreSQL store without its URL');
    const [{ run, Logger }, { default: pg }] = await Promise.all([import('graphile-worker'), import('pg')]);
    if (this.stopping) return;
    // Its own pool: one LISTEN client plus one per concurrent job, apart from the API's queries.
    const pgPool = new pg.Pool({ connectionString: url, max: this.o.concurrency + 2, application_name: `fecr-worker:${this.name}` });
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
    for (const type of JOB_TYPES) taskList[QUEUE_TASKS[type]] = (payload, helpers) => this.runQueued(type, payload, helpers);
    const log = this.log;
    this.runner = await run({
      pgPool,
      taskList,
      crontab: '',
      concurrency: this.o.concurrency,
      pollInterval: this.o.queuePollIntervalMs,
      noHandleSignals: true,
      events: events as never,
      logger: new Logger(() => (level, message) => {
        if (level === 'error') log.error({ queue: 'graphile-worker' }, message);
        else if (level === 'warning') log.warn({ queue: 'graphile-worker' }, message);
        else log.debug({ queue: 'graphile-worker' }, message);
      }),
    });
    const every = Math.max(10, Math.floor(this.o.leaseMs / 3));
    this.heartbeat = setInterval(() => void this.beat(), every);
    this.heartbeat.unref();
    this.log.info({ concurrency: this.o.concurrency, leaseMs: this.o.leaseMs, queue: 'postgres', poolId: this.owner }, 'worker started');
  }

  /** Heartbeat of this worker, then the jobs of workers whose heartbeat stopped are freed. */
  private async beat(): Promise<void> {
    if (this.aborted || this.stopping || !this.pool) return;
    const db = this.ctx.store.db;
    try {
      const now = this.ctx.now();
      await heartbeat(db, { id: this.owner, name: this.name, host: hostname(), pid: process.pid, startedAt: this.startedAt }, now);
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
      if (!this.aborted && !this.stopping) this.log.error({ err: errText(e) }, 'worker heartbeat failed');
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
      run_at: new Date(gw.run_at).getTime(),
      attempts: (p.prior ?? 0) + gw.attempts,
      lease_owner: gw.locked_by,
      lease_until: null,
      last_error: p.last_error ?? null,
      created_at: p.since ?? new Date(gw.created_at).getTime(),
      done_at: null,
    };
    const run = this.runJob(job);
    this.inflight.set(job.id, run.then(() => undefined));
    let settled: boolean;
    try {
      settled = await run;
    } finally {
      this.inflight.delete(job.id);
    }
    // Not completed nor rescheduled by us (lease lost, aborted, store failure): graphile-worker must not delete it;
    // failing the job unlocks it (only while we hold it) for another run.
    if (!settled) throw new Error(this.aborted ? 'worker aborted' : 'job not settled; left for another run');
  }

  private async stopQueueRunner(): Promise<void> {
    await this.loopDone.catch(() => undefined);
    clearInterval(this.heartbeat);
    await this.runner?.stop().catch((e: unknown) => this.log.warn({ err: errText(e) }, 'stopping the job runner'));
    await Promise.allSettled([...this.inflight.values()]);
    if (this.pool && !this.aborted) await unregisterWorker(this.ctx.store.db, this.owner).catch(() => undefined);
    await this.pgPool?.end().catch(() => undefined);
  }

  private async idleQueue(): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      try {
        if (this.inflight.size === 0 && (await pendingJobs(this.ctx)).count === 0 && this.inflight.size === 0) return;
      } catch (e) {
        this.log.error({ err: errText(e) }, 'idle check failed');
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  // --- loop ------------------------------------------------------------------------------------------

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const free = this.o.concurrency - this.inflight.size;
      let leased = 0;
      if (free > 0) {
        try {
          const jobs = await leaseJobs(this.ctx, { owner: this.owner, limit: free, leaseMs: this.o.leaseMs });
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
          this.log.error({ err: errText(e) }, 'leasing jobs failed');
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
    if (this.pool && !this.stopping) {
      try {
        this.pool.nudge(this.o.concurrency);
      } catch {
        // shutting down
      }
    }
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
      this.log.error({ err: errText(e) }, 'idle check failed');
    }
  }

  idle(): Promise<void> {
    if (this.ctx.store.dialect === 'postgres') return this.idleQueue();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.wake();
    });
  }

  private launch(job: Job): void {
    if (this.inflight.has(job.id)) return;
    const p = this.runJob(job)
      .then(() => undefined)
      .finally(() => {
        this.inflight.delete(job.id);
        this.wake();
      });
    this.inflight.set(job.id, p);
  }

  private async renew(): Promise<void> {
    if (this.aborted || this.inflight.size === 0) return;
    try {
      await renewLeases(this.ctx, this.owner, [...this.inflight.keys()], this.o.leaseMs);
    } catch (e) {
      if (!this.aborted) this.log.error({ err: errText(e) }, 'renewing leases failed');
    }
  }

  async stop(): Promise<void> {
    return (this.stopped ??= (async () => {
      this.stopping = true;
      if (this.ctx.store.dialect === 'postgres') {
        await this.stopQueueRunner();
        await this.closeClients(true);
        this.log.info({ stats: this.stats }, 'worker stopped');
        return;
      }
      this.wake();
      await this.loopDone;
      await Promise.allSettled([...this.inflight.values()]);
      clearInterval(this.heartbeat);
      await this.closeClients(true);
      for (const f of this.idleWaiters.splice(0)) f();
      this.log.info({ stats: this.stats }, 'worker stopped');
    })());
  }

  async abort(): Promise<void> {
    this.aborted = true;
    this.stopping = true;
    clearInterval(this.heartbeat);
    this.wake();
    this.stopped ??= (async () => {
      if (this.ctx.store.dialect === 'postgres') {
        // The heartbeat stops; jobs in flight give up before writing (their locks are released by graphile-worker).
        await this.stopQueueRunner();
        await this.closeClients(false);
        return;
      }
      await this.loopDone.catch(() => undefined);
      await Promise.allSettled([...this.inflight.values()]);
      await this.closeClients(false);
    })();
    return this.stopped;
  }

  private async closeClients(logout: boolean): Promise<void> {
    const managers = [...this.tokens.values()];
    this.tokens.clear();
    this.clients.clear();
    if (logout) await Promise.allSettled(managers.map((m) => m.close()));
    await Promise.allSettled([this.http.close(), this.webhooks.close()]);
  }

  private checkAlive(): void {
    if (this.aborted) throw new AbortedError();
  }

  // --- jobs ------------------------------------------------------------------------------------------

  /** Runs one job. True when the job was completed or rescheduled (settled), false when it was left as it was. */
  /** The last job failure that was a store fault (a full disk, a lost database); cleared when a job succeeds. */
  lastStoreFault: Error | undefined;

  private async runJob(job: Job): Promise<boolean> {
    try {
      if (job.type === 'send') await this.runSend(job);
      else if (job.type === 'poll') await this.runPoll(job);
      else if (job.type === 'webhook') {
        this.stats.webhookAttempts++;
        const out = await this.webhooks.run(job, this.owner, () => this.aborted);
        if (out.result === 'delivered') this.stats.webhooksDelivered++;
      } else {
        this.checkAlive();
        await completeJob(this.ctx.store.db, job, this.owner, this.ctx.now(), `unknown job type ${String(job.type)}`);
      }
      this.lastStoreFault = undefined;
      return true;
    } catch (e) {
      if (e instanceof AbortedError || this.aborted) return false;
      if (e instanceof LeaseLostError) {
        this.log.warn({ jobId: job.id, type: job.type }, 'lease lost; the job is left to its new owner');
        return false;
      }
      this.stats.errors++;
      if (storeFaultOf(e)) this.lastStoreFault = e as Error;
      this.log.error({ jobId: job.id, type: job.type, err: errText(e) }, 'job failed unexpectedly');
      try {
        const delay = backoff(job.attempts, 1_000, 300_000, this.random);
        await rescheduleJob(this.ctx.store.db, job, this.owner, this.ctx.now() + delay, errText(e));
        return true;
      } catch {
        // lease lost or store gone: the lease expires and the job runs again
        return false;
      }
    }
  }

  private async issuerOf(documentIssuerId: number): Promise<Issuer | undefined> {
    return this.ctx.store.db.selectFrom('issuers').selectAll().where('id', '=', documentIssuerId).executeTakeFirst();
  }

  /** The reception client of an issuer (cached per issuer id and updated_at; one TokenManager per environment). */
  private clientFor(issuer: Issuer): ReceptionClient {
    const key = `${issuer.updated_at}`;
    const hit = this.clients.get(issuer.id);
    if (hit && hit.key === key) return hit.client;
    const record = JSON.parse(issuer.record_json) as StoredIssuerRecord;
    const secrets = this.ctx.secrets.openJson<IssuerSecrets>(issuer.secrets_enc, issuerSecretsContext(issuer.account_id, issuer.identificacion));
    const endpoints = this.o.endpointsFor(record);
    const tkey = `${endpoints.environment}\u0000${endpoints.tokenUrl}`;
    let tokens = this.tokens.get(tkey);
    if (!tokens) {
      tokens = new TokenManager({ endpoints, http: this.http, now: this.ctx.now, random: this.random });
      this.tokens.set(tkey, tokens);
    }
    const client = new ReceptionClient({
      endpoints,
      credentials: { username: record.usuarioHacienda, password: decodeClaveHacienda(secrets.claveHacienda) },
      tokens,
      http: this.http,
      now: this.ctx.now,
      random: this.random,
      retry: this.o.haciendaRetry,
      statusRetry: this.o.haciendaRetry,
      indexDelayToleranceMs: this.o.indexDelayToleranceMs,
    });
    this.clients.set(issuer.id, { key, client });
    return client;
  }

  private async loadDocument(job: Job) {
    if (job.document_id === null) return undefined;
    return this.ctx.store.db.selectFrom('documents').selectAll().where('id', '=', job.document_id).executeTakeFirst();
  }

  private async runSend(job: Job): Promise<void> {
    const { ctx } = this;
    const db = ctx.store.db;
    const doc = await this.loadDocument(job);
    if (!doc) {
      this.checkAlive();
      return completeJob(db, job, this.owner, ctx.now(), 'document not found');
    }
    if (doc.state !== 'pendiente') {
      // Already sent (its poll job was queued with the state change): nothing to do.
      this.checkAlive();
      return completeJob(db, job, this.owner, ctx.now());
    }
    const issuer = await this.issuerOf(doc.issuer_id);
    let request: { fecha: string; emisor: IdentificacionApi; receptor?: IdentificacionApi };
    try {
      request = submitMeta(doc.xml);
    } catch (e) {
      return this.sendFailedForGood(job, doc.id, doc.clave, `El comprobante almacenado no se puede leer: ${errText(e)}`);
    }
    if (!issuer) return this.sendFailedForGood(job, doc.id, doc.clave, 'El emisor del comprobante ya no está registrado.');
    const client = this.clientFor(issuer);
    const log = this.log.child({ clave: doc.clave, jobId: job.id, attempt: job.attempts });
    let how: 'post' | 'status';
    try {
      let found: ReceptionStatus | undefined;
      if (job.attempts > 1) {
        // Tried before, maybe by a worker killed mid-POST: ask Hacienda before sending again. (A 404 here is
        // trusted: a killed worker's job runs again only after its lease, 30 s, the index-delay tolerance; should
        // it still be the index delay, the POST is refused as "ya fue recibido" and the document is not lost.)
        const st = await client.getStatus(doc.clave);
        if (st.estado !== 'unknown') found = st;
      }
      if (found) {
        how = 'status';
        this.stats.confirmedByStatus++;
      } else {
        const res = await client.submit({
          clave: doc.clave,
          ...request,
          comprobanteXml: doc.xml,
          ...(this.o.callbackUrl ? { callbackUrl: this.o.callbackUrl } : {}),
        });
        how = res.confirmedByStatus || res.status === 'already-received' ? 'status' : 'post';
        if (how === 'post') this.stats.sent++;
        else this.stats.confirmedByStatus++;
      }
    } catch (e) {
      if (e instanceof ReceptionValidationError) {
        log.warn({ cause: e.detail }, 'Hacienda refused the document');
        return this.sendFailedForGood(job, doc.id, doc.clave, `Hacienda rechazó el envío: ${e.detail ?? e.message}`);
      }
      this.stats.retries++;
      const delay = this.notBeforeRetryAfter(e, backoff(job.attempts, this.o.sendBackoffBaseMs, this.o.sendBackoffMaxMs, this.random));
      log.warn({ err: errText(e), retryInMs: delay }, 'sending to Hacienda failed; will retry');
      this.checkAlive();
      return rescheduleJob(db, job, this.owner, ctx.now() + delay, errText(e));
    }
    this.checkAlive();
    const now = ctx.now();
    await db.transaction().execute(async (trx) => {
      await completeJob(trx, job, this.owner, now);
      await trx
        .updateTable('documents')
        .set({ state: 'enviado', updated_at: now })
        .where('id', '=', doc.id)
        .where('state', '=', 'pendiente')
        .execute();
      await enqueueJob(trx, { type: 'poll', document_id: doc.id, run_at: now + this.o.firstPollDelayMs }, now);
    });
    log.info({ how }, 'document sent to Hacienda');
  }

  private async sendFailedForGood(job: Job, documentId: number, clave: string, detalle: string): Promise<void> {
    this.checkAlive();
    const now = this.ctx.now();
    await this.ctx.store.db.transaction().execute(async (trx) => {
      await completeJob(trx, job, this.owner, now, detalle);
      await trx
        .updateTable('documents')
        .set({ state: 'error', detalle_mensaje: detalle, updated_at: now, decided_at: now })
        .where('id', '=', documentId)
        .where('state', '=', 'pendiente')
        .execute();
    });
    this.log.warn({ clave, detalle }, 'document not sent: error');
  }

  /**
   * A 429 whose Retry-After the client would not wait inline (a per-issuer quota: up to the next minute): the job
   * runs again no sooner than that (plus up to 1 s of jitter, so the waiting documents do not all come back at
   * the same instant), at most an hour later.
   */
  private notBeforeRetryAfter(e: unknown, delay: number): number {
    if (!(e instanceof RateLimitedError) || e.retryAt === undefined) return delay;
    const told = Math.min(3600_000, e.retryAt - this.ctx.now());
    return Math.max(delay, told + Math.round(this.random() * 1_000));
  }

  private pollDelay(job: Job, now: number): number {
    if (now - job.created_at > this.o.pollWindowMs) return this.o.pollSlowIntervalMs;
    const step = Math.min(this.o.pollMaxIntervalMs, this.o.firstPollDelayMs * 2 ** Math.max(0, job.attempts - 1));
    return Math.round(step * (0.9 + 0.2 * this.random()));
  }

  private async runPoll(job: Job): Promise<void> {
    const { ctx } = this;
    const db = ctx.store.db;
    const doc = await this.loadDocument(job);
    if (!doc || FINAL_STATES.includes(doc.state)) {
      this.checkAlive();
      return completeJob(db, job, this.owner, ctx.now(), doc ? null : 'document not found');
    }
    const issuer = await this.issuerOf(doc.issuer_id);
    if (!issuer) {
      this.checkAlive();
      return rescheduleJob(db, job, this.owner, ctx.now() + this.o.pollSlowIntervalMs, 'issuer not found');
    }
    this.stats.polls++;
    let st: ReceptionStatus;
    try {
      st = await this.clientFor(issuer).getStatus(doc.clave);
    } catch (e) {
      this.stats.retries++;
      const delay = this.notBeforeRetryAfter(e, this.pollDelay(job, ctx.now()));
      this.log.warn({ clave: doc.clave, err: errText(e), retryInMs: delay }, 'status query failed; will retry');
      this.checkAlive();
      return rescheduleJob(db, job, this.owner, ctx.now() + delay, errText(e));
    }
    this.checkAlive();
    const now = ctx.now();
    // A verdict without its MensajeHacienda yet: ask again a few times before storing it without one.
    const verdictWithoutXml = (st.estado === 'aceptado' || st.estado === 'rechazado') && !st.respuestaXml && job.attempts < 10;
    if (st.estado === 'recibido' || st.estado === 'procesando' || st.estado === 'unknown' || verdictWithoutXml) {
      await db.transaction().execute(async (trx) => {
        await rescheduleJob(trx, job, this.owner, now + this.pollDelay(job, now), st.estado === 'unknown' ? 'Hacienda does not know the clave yet' : verdictWithoutXml ? 'verdict without respuesta-xml yet' : null);
        if ((st.estado === 'recibido' || st.estado === 'procesando') && st.estado !== doc.state) {
          await trx
            .updateTable('documents')
            .set({ state: st.estado, updated_at: now })
            .where('id', '=', doc.id)
            .where('state', 'not in', FINAL_STATES)
            .execute();
        }
      });
      return;
    }
    // A verdict: aceptado, rechazado or error.
    const responseXml = st.respuestaXml ? st.respuestaXml.toString('utf8') : null;
    const mensaje = st.mensaje?.mensaje ?? (st.estado === 'aceptado' ? 1 : st.estado === 'rechazado' ? 3 : null);
    const detalle = st.mensaje?.detalleMensaje ?? (st.estado === 'error' ? `Hacienda indicó ind-estado ${st.indEstado ?? 'error'}` : null);
    let deliveryId: number | null = null;
    await db.transaction().execute(async (trx) => {
      await completeJob(trx, job, this.owner, now);
      const res = await trx
        .updateTable('documents')
        .set({ state: st.estado as DocumentState, response_xml: responseXml, mensaje, detalle_mensaje: detalle, decided_at: now, updated_at: now })
        .where('id', '=', doc.id)
        .where('state', 'not in', FINAL_STATES)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 1 && responseXml) {
        deliveryId = await createDelivery(trx, now, { accountId: doc.account_id, documentId: doc.id, clave: doc.clave, mensajeHaciendaXml: responseXml });
      }
    });
    this.stats.decided++;
    this.log.info({ clave: doc.clave, estado: st.estado, mensaje, deliveryId }, 'Hacienda decided');
    if (deliveryId !== null) this.wake();
  }
}

const RE_FECHA = /<FechaEmision>([^<]+)<\/FechaEmision>/;
const RE_EMISOR = /<Emisor>\s*<Nombre>[^<]*<\/Nombre>\s*<Identificacion>\s*<Tipo>(\d{2})<\/Tipo>\s*<Numero>([^<]+)<\/Numero>/;
const RE_RECEPTOR = /<Receptor>\s*<Nombre>[^<]*<\/Nombre>\s*<Identificacion>\s*<Tipo>(\d{2})<\/Tipo>\s*<Numero>([^<]+)<\/Numero>/;

/**
 * POST /recepcion fields read from the signed XML. The receptor goes only when Hacienda's API can carry it
 * (01-04, ≤ 12 characters). Fast path for our own unprefixed canonical XML; anything else goes through the parser.
 */
export function submitMeta(xml: string): { fecha: string; emisor: IdentificacionApi; receptor?: IdentificacionApi } {
  const fecha = RE_FECHA.exec(xml);
  const e = RE_EMISOR.exec(xml);
  const hasReceptor = xml.includes('<Receptor>');
  const rx = hasReceptor ? RE_RECEPTOR.exec(xml) : null;
  if (fecha && e && (!hasReceptor || rx)) {
    return apiParties(fecha[1]!, { tipo: e[1]!, numero: e[2]! }, rx ? { tipo: rx[1]!, numero: rx[2]! } : undefined);
  }
  const doc = parseComprobanteXml(xml);
  return apiParties(doc.fechaEmision, doc.emisor.identificacion, doc.receptor?.identificacion);
}

function apiParties(
  fecha: string,
  e: { tipo: string; numero: string },
  r: { tipo: string; numero: string } | undefined,
): { fecha: string; emisor: IdentificacionApi; receptor?: IdentificacionApi } {
  const emisor = { tipoIdentificacion: e.tipo, numeroIdentificacion: e.numero };
  const receptor = r && /^0[1-4]$/.test(r.tipo) && /^[A-Za-z0-9]{1,12}$/.test(r.numero) ? { tipoIdentificacion: r.tipo, numeroIdentificacion: r.numero } : undefined;
  return { fecha, emisor, ...(receptor ? { receptor } : {}) };
}

/** Exponential backoff with "equal jitter": the n-th try (1-based) waits about base·2^(n-1), capped. */
function backoff(n: number, base: number, cap: number, random: () => number): number {
  const step = Math.min(cap, base * 2 ** Math.max(0, n - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

function errText(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${e.message}` : e.message;
  }
  return String(e);
}

// --- Hacienda's callback ---------------------------------------------------------------------------

export interface CallbackResult {
  /** True when the clave is one of ours and its status will be re-queried now. */
  known: boolean;
  clave?: string;
}

/**
 * Hacienda's callback (NOTES §4.6: `clave`, `ind-estado`/`indEstado`, `respuesta-xml`/`respuestaXml`). Only a
 * hint: nothing from the body is stored; the document's pending jobs are made due now, so the worker confirms
 * the status with GET /recepcion/{clave} and stores what that answer says. The HTTP route should answer 200 to any
 * well-formed body (Hacienda retries otherwise) and then call `worker.wake()`.
 */
export async function acceptCallback(ctx: ServiceContext, body: unknown): Promise<CallbackResult> {
  if (typeof body !== 'object' || body === null) return { known: false };
  const b = body as Record<string, unknown>;
  const clave = typeof b['clave'] === 'string' ? b['clave'].trim().split('-')[0]! : undefined;
  if (!clave || !isClave(clave)) return { known: false };
  const hint = typeof b['ind-estado'] === 'string' ? b['ind-estado'] : typeof b['indEstado'] === 'string' ? b['indEstado'] : undefined;
  const now = ctx.now();
  const doc = await ctx.store.db.selectFrom('documents').select(['id', 'state']).where('clave', '=', clave).executeTakeFirst();
  if (!doc) {
    ctx.logger.warn({ clave, indEstado: hint }, 'Hacienda callback for an unknown clave');
    return { known: false, clave };
  }
  if (!FINAL_STATES.includes(doc.state)) await hurryDocumentJobs(ctx, doc.id, now);
  ctx.logger.info({ clave, indEstado: hint, state: doc.state }, 'Hacienda callback received (hint; status re-queried)');
  return { known: true, clave };
}
