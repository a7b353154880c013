/**
 * The background worker: takes jobs from the queue and runs them, `concurrency` at a time. It composes
 *  - queue.ts: the two queue back ends (SQLite leases; PostgreSQL graphile-worker) and their heartbeats;
 *  - send.ts: the `send` job (POST to Hacienda, GET before any re-POST);
 *  - poll.ts: the `poll` job (status query, the verdict stored, the webhook queued);
 *  - webhooks.ts: the `webhook` job (one delivery attempt);
 *  - email-job.ts: the `email` job (one attempt to mail an accepted comprobante to its receptor).
 * and holds what they share: the Hacienda sessions of the issuers, the statistics, the kill switch. Hacienda's
 * callback (acceptCallback) only makes a document's jobs due now.
 *
 * Every effect of a job is written in one transaction with the job's completion, guarded by its lease, so a
 * crash at any point either leaves the job to be redone (safely: GET before POST) or has fully done it.
 */
import { decodeClaveHacienda } from '../../core/clave-hacienda.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { isClave } from '../../core/clave.js';
import { DOCUMENT_STATES, FINAL_STATES, HELD_STATES } from '../../core/lifecycle.js';
import {
  HttpClient,
  ReceptionClient,
  TokenManager,
  type HaciendaEndpoints,
  type HttpClientOptions,
  type RetryPolicy,
} from '../../hacienda/index.js';
import { documentStateByClave } from '../../store/documents.js';
import { storeFaultOf } from '../../store/faults.js';
import type { Issuer, Job, JobType } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import { issuerSecretsContext, type IssuerSecrets, type StoredIssuerRecord } from '../issuers.js';
import { completeJob, hurryDocumentJobs, LeaseLostError, rescheduleJob } from '../../store/jobs.js';
import { VerdictHints } from './verdict-hints.js';
import { AbortedError, backoff, errText, type JobEnv, type JobTiming, type WorkerStats } from './job.js';
import { runPoll } from './poll.js';
import { openQueue, type JobQueue } from './queue.js';
import { runSend } from './send.js';
import { runWebhook, WebhookSender } from './webhooks.js';
import { EmailSender } from './email-job.js';
import type { MailRenderer } from './email-render-pool.js';
import { checkCertificateExpiry, type ExpiryLogMemory } from './cert-expiry.js';

export type { WorkerStats } from './job.js';
export { submitMeta } from './send.js';

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
  /** Receptor mails: temporary failures retried for emailRetryWindowMs (default 24 h), backoff from 30 s doubling to 1 h. */
  emailRetryWindowMs?: number;
  emailBackoffBaseMs?: number;
  emailBackoffMaxMs?: number;
  /** SMTP connections kept per server (default 4). */
  emailConnections?: number;
  /**
   * Receptor mails run after the sends, polls and webhooks: only in slots no other due job wants, and (SQLite) at most
   * this many at once (default: emailConnections, capped by concurrency). On PostgreSQL they come last by priority.
   */
  emailConcurrency?: number;
  /** Where receptor mails are rendered (default: on the worker's thread); its owner closes it. */
  mailRenderer?: MailRenderer;
  /** Random source for jitter (default Math.random). */
  random?: () => number;
  /**
   * Every this many ms (and at start) the issuers' certificate ends are checked (delivery/cert-expiry.ts): a log line
   * and an `emisor.llave_por_vencer` event once a day per issuer. Default off (`fecr serve` sets 1 h).
   */
  certificateCheckIntervalMs?: number;
  /** Job types this worker never takes (queue.ts QueueOptions.skipTypes). */
  skipJobTypes?: readonly JobType[];
  /** Hacienda tells this worker its verdicts (`verdictsDecided`: an embedded emulator; verdict-hints.ts). */
  verdictHints?: boolean;
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
   * While held, the worker takes no receptor mail (SQLite; a local batch takes every verdict first and mails after).
   * Released, they run in turn as usual.
   */
  holdMails(held: boolean): void;
  /** Hacienda decided these claves (with `verdictHints`): their documents are polled now. */
  verdictsDecided(claves: readonly string[]): void;
  /** Checks the issuers' certificate ends now (delivery/cert-expiry.ts); resolves to the webhook events queued. */
  checkCertificates(): Promise<number>;
  /**
   * Simulates a kill -9 (tests): stops at once; in-flight jobs write nothing more to the store and their leases
   * are not renewed, so they become due again after leaseMs. Returns when the abandoned HTTP calls settled.
   */
  abort(): Promise<void>;
}

export function startWorker(ctx: ServiceContext, opts: WorkerOptions = {}): Worker {
  const w = new DeliveryWorker(ctx, opts);
  w.start();
  return w;
}

interface ClientEntry {
  key: string;
  client: ReceptionClient;
}

class DeliveryWorker implements Worker, JobEnv {
  readonly stats: WorkerStats = { sent: 0, confirmedByStatus: 0, polls: 0, decided: 0, webhooksDelivered: 0, webhookAttempts: 0, mailsSent: 0, retries: 0, errors: 0 };
  readonly log: Logger;
  readonly o: JobTiming;
  readonly random: () => number;
  /** The last job failure that was a store fault (a full disk, a lost database); cleared when a job succeeds. */
  lastStoreFault: Error | undefined;
  readonly hints: VerdictHints | undefined;
  private readonly queue: JobQueue;
  private readonly http: HttpClient;
  private readonly tokens = new Map<string, TokenManager>();
  private readonly clients = new Map<number, ClientEntry>();
  private readonly webhooks: WebhookSender;
  private readonly mails: EmailSender;
  private readonly haciendaRetry: Partial<RetryPolicy>;
  private readonly indexDelayToleranceMs: number;
  private readonly endpointsFor: (issuer: StoredIssuerRecord) => HaciendaEndpoints;
  private stopped: Promise<void> | undefined;
  private readonly expiryLogged: ExpiryLogMemory = new Map();
  private readonly certificateCheckMs: number;
  private certificateTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly ctx: ServiceContext,
    opts: WorkerOptions,
  ) {
    const name = opts.owner ?? `worker-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.log = ctx.logger.child({ component: 'worker', owner: name });
    this.random = opts.random ?? Math.random;
    this.o = {
      firstPollDelayMs: opts.firstPollDelayMs ?? 300,
      pollMaxIntervalMs: opts.pollMaxIntervalMs ?? 30_000,
      pollWindowMs: opts.pollWindowMs ?? 24 * 3600_000,
      pollSlowIntervalMs: opts.pollSlowIntervalMs ?? 3600_000,
      sendBackoffBaseMs: opts.sendBackoffBaseMs ?? 1_000,
      sendBackoffMaxMs: opts.sendBackoffMaxMs ?? 300_000,
      callbackUrl: opts.callbackUrl,
    };
    this.haciendaRetry = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 2_000, maxServerWaitMs: 10_000, ...opts.haciendaRetry };
    this.indexDelayToleranceMs = opts.indexDelayToleranceMs ?? 30_000;
    this.endpointsFor = opts.endpointsFor ?? (() => ctx.hacienda.endpoints);
    this.http = new HttpClient({ connectTimeoutMs: 5_000, headersTimeoutMs: 15_000, bodyTimeoutMs: 15_000, deadlineMs: 30_000, connections: 32, ...opts.haciendaHttp });
    this.webhooks = new WebhookSender(ctx, {
      retryWindowMs: opts.webhookRetryWindowMs ?? 24 * 3600_000,
      ...(opts.webhookBackoffBaseMs !== undefined ? { backoffBaseMs: opts.webhookBackoffBaseMs } : {}),
      ...(opts.webhookBackoffMaxMs !== undefined ? { backoffMaxMs: opts.webhookBackoffMaxMs } : {}),
      ...(opts.webhookConnectTimeoutMs !== undefined ? { connectTimeoutMs: opts.webhookConnectTimeoutMs } : {}),
      ...(opts.webhookHeadersTimeoutMs !== undefined ? { headersTimeoutMs: opts.webhookHeadersTimeoutMs } : {}),
      ...(opts.webhookBodyTimeoutMs !== undefined ? { bodyTimeoutMs: opts.webhookBodyTimeoutMs } : {}),
      random: this.random,
    });
    this.mails = new EmailSender(ctx, {
      ...(opts.emailRetryWindowMs !== undefined ? { retryWindowMs: opts.emailRetryWindowMs } : {}),
      ...(opts.emailBackoffBaseMs !== undefined ? { backoffBaseMs: opts.emailBackoffBaseMs } : {}),
      ...(opts.emailBackoffMaxMs !== undefined ? { backoffMaxMs: opts.emailBackoffMaxMs } : {}),
      ...(opts.emailConnections !== undefined ? { maxConnections: opts.emailConnections } : {}),
      ...(opts.mailRenderer ? { renderer: opts.mailRenderer } : {}),
      random: this.random,
    });
    const concurrency = Math.max(1, opts.concurrency ?? 8);
    const queueOptions = {
      name,
      concurrency,
      deferredConcurrency: Math.max(1, Math.min(concurrency, opts.emailConcurrency ?? opts.emailConnections ?? 4)),
      pollIntervalMs: opts.pollIntervalMs ?? 50,
      leaseMs: opts.leaseMs ?? 30_000,
      queuePollIntervalMs: opts.queuePollIntervalMs ?? 250,
      ...(opts.skipJobTypes ? { skipTypes: opts.skipJobTypes } : {}),
    };
    this.queue = openQueue(ctx, this.log, queueOptions, (job, owner) => this.runJob(job, owner));
    this.hints = opts.verdictHints ? new VerdictHints((ids) => this.queue.want(ids)) : undefined;
    this.certificateCheckMs = opts.certificateCheckIntervalMs ?? 0;
  }

  get owner(): string {
    return this.queue.owner;
  }

  start(): void {
    this.queue.start();
    if (this.certificateCheckMs > 0) {
      const check = () => void this.checkCertificates().catch((e: unknown) => this.log.error({ err: errText(e) }, 'certificate end check failed'));
      check();
      this.certificateTimer = setInterval(check, this.certificateCheckMs);
      this.certificateTimer.unref();
    }
  }

  async checkCertificates(): Promise<number> {
    const queued = await checkCertificateExpiry(this.ctx, this.log, this.expiryLogged);
    if (queued > 0) this.wake();
    return queued;
  }

  wake(): void {
    this.queue.wake();
  }

  holdMails(held: boolean): void {
    this.queue.holdDeferred(held);
  }

  verdictsDecided(claves: readonly string[]): void {
    this.hints?.decided(claves);
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  async stop(): Promise<void> {
    clearInterval(this.certificateTimer);
    return (this.stopped ??= (async () => {
      await this.queue.stop();
      await this.closeClients(true);
      this.log.info({ stats: this.stats }, 'worker stopped');
    })());
  }

  async abort(): Promise<void> {
    clearInterval(this.certificateTimer);
    this.queue.kill();
    this.stopped ??= (async () => {
      // Jobs in flight give up before writing; no lease is renewed, no heartbeat written.
      await this.queue.stop();
      await this.closeClients(false);
    })();
    return this.stopped;
  }

  private async closeClients(logout: boolean): Promise<void> {
    const managers = [...this.tokens.values()];
    this.tokens.clear();
    this.clients.clear();
    if (logout) await Promise.allSettled(managers.map((m) => m.close()));
    await Promise.allSettled([this.http.close(), this.webhooks.close(), this.mails.close()]);
  }

  checkAlive(): void {
    if (this.queue.aborted) throw new AbortedError();
  }

  /** Runs one job. True when the job was completed or rescheduled (settled), false when it was left as it was. */
  private async runJob(job: Job, owner: string): Promise<boolean> {
    try {
      if (job.type === 'send') await runSend(this, job, owner);
      else if (job.type === 'poll') await runPoll(this, job, owner);
      else if (job.type === 'webhook') await runWebhook(this.webhooks, this.stats, job, owner, () => this.queue.aborted);
      else if (job.type === 'email') {
        const out = await this.mails.run(job, owner, () => this.queue.aborted);
        if (out.result === 'sent') this.stats.mailsSent++;
      } else if (job.type === 'mailbox') await (await import('../mailbox/account.js')).runMailboxJob(this.ctx, job, owner, this.queue);
      else {
        this.checkAlive();
        await completeJob(this.ctx.store.db, job, owner, this.ctx.now(), `unknown job type ${String(job.type)}`);
      }
      this.lastStoreFault = undefined;
      return true;
    } catch (e) {
      if (e instanceof AbortedError || this.queue.aborted) return false;
      if (e instanceof LeaseLostError) {
        this.log.warn({ jobId: job.id, type: job.type }, 'lease lost; the job is left to its new owner');
        return false;
      }
      this.stats.errors++;
      const fault = storeFaultOf(e);
      if (fault) this.lastStoreFault = e as Error;
      // A lost database connection loses nothing: the job is rescheduled (or its lease expires) and runs again; a
      // warning of one line (issue 37, point 10). Anything else is an error.
      if (fault?.kind === 'unavailable') this.log.warn({ jobId: job.id, type: job.type, err: errText(e), retried: true }, 'job interrupted: database connection lost; retried');
      else this.log.error({ jobId: job.id, type: job.type, err: errText(e) }, 'job failed unexpectedly');
      try {
        const delay = backoff(job.attempts, 1_000, 300_000, this.random);
        await rescheduleJob(this.ctx.store.db, job, owner, this.ctx.now() + delay, errText(e));
        return true;
      } catch {
        // lease lost or store gone: the lease expires and the job runs again
        return false;
      }
    }
  }

  /**
   * The reception client of an issuer (cached per issuer id and updated_at; one TokenManager per environment, which
   * remembers a password its IdP refused: not asked again until the issuer is updated).
   */
  clientFor(issuer: Issuer): ReceptionClient {
    const key = `${issuer.updated_at}`;
    const hit = this.clients.get(issuer.id);
    if (hit && hit.key === key) return hit.client;
    const record = JSON.parse(issuer.record_json) as StoredIssuerRecord;
    const secrets = this.ctx.secrets.openJson<IssuerSecrets>(issuer.secrets_enc, issuerSecretsContext(issuer.account_id, issuer.identificacion));
    const endpoints = this.endpointsFor(record);
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
      retry: this.haciendaRetry,
      statusRetry: this.haciendaRetry,
      indexDelayToleranceMs: this.indexDelayToleranceMs,
    });
    // The issuer was updated since its last client: a password the IdP refused may be tried again (credentials.ts).
    if (hit) tokens.forgetRefusal(record.usuarioHacienda);
    this.clients.set(issuer.id, { key, client });
    return client;
  }
}

// --- Hacienda's callback ---------------------------------------------------------------------------

export interface CallbackResult {
  /** True when the clave is a document the service waits on Hacienda for, and its status will be re-queried now. */
  known: boolean;
  clave?: string;
}

/** The states in which the service waits on Hacienda for a document: neither decided nor held (lifecycle.ts). */
const AWAITING: ReadonlySet<string> = new Set(DOCUMENT_STATES.filter((s) => !FINAL_STATES.includes(s) && !HELD_STATES.includes(s)));

/** The clave of a callback body (`clave`, or `clave-…` as some senders write it) and its state hint; null without one. */
export function parseCallback(body: unknown): { clave: string; hint?: string } | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  const clave = typeof b['clave'] === 'string' ? b['clave'].trim().split('-')[0]! : undefined;
  if (!clave || !isClave(clave)) return null;
  const hint = typeof b['ind-estado'] === 'string' ? b['ind-estado'] : typeof b['indEstado'] === 'string' ? b['indEstado'] : undefined;
  return hint === undefined ? { clave } : { clave, hint: hint.slice(0, 32) };
}

/** What a callback's clave led to: its jobs made due (`hinted`), no such document, or one not waited on. */
export type CallbackOutcome = 'hinted' | 'unknown' | 'not_waiting';

/**
 * A callback's clave: when it is a document the service waits on Hacienda for (AWAITING), its send/poll jobs are
 * made due now and one line is logged; an unknown clave, a decided or a held document: nothing (no log line either:
 * the route counts them, server/hacienda-callback.ts).
 */
export async function hintCallback(ctx: ServiceContext, clave: string, hint?: string): Promise<CallbackOutcome> {
  const doc = await documentStateByClave(ctx.store.db, clave);
  if (!doc) return 'unknown';
  if (!AWAITING.has(doc.state)) return 'not_waiting';
  await hurryDocumentJobs(ctx, doc.id, ctx.now());
  ctx.logger.info({ clave, indEstado: hint, state: doc.state }, 'Hacienda callback received (hint; status re-queried)');
  return 'hinted';
}

/**
 * Hacienda's callback (NOTES §4.6: `clave`, `ind-estado`/`indEstado`, `respuesta-xml`/`respuestaXml`). Only a
 * hint: nothing from the body is stored; the pending jobs of a document the service waits on are made due now, so
 * the worker confirms the status with GET /recepcion/{clave} and stores what that answer says. The HTTP route
 * (server/hacienda-callback.ts) bounds who may call it how often, answers 200, and then calls `worker.wake()`.
 */
export async function acceptCallback(ctx: ServiceContext, body: unknown): Promise<CallbackResult> {
  const c = parseCallback(body);
  if (!c) return { known: false };
  return { known: (await hintCallback(ctx, c.clave, c.hint)) === 'hinted', clave: c.clave };
}
