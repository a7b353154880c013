/**
 * What the send and poll jobs share: the worker's side of a job run (its context, statistics, the Hacienda
 * session of an issuer, the kill switch) and the retry arithmetic. The worker (worker.ts) builds one JobEnv.
 */
import type { Logger } from 'pino';
import { RateLimitedError, type ReceptionClient } from '../../hacienda/index.js';
import type { Issuer, Job } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import type { VerdictHints } from './verdict-hints.js';

export interface WorkerStats {
  sent: number;
  confirmedByStatus: number;
  polls: number;
  decided: number;
  webhooksDelivered: number;
  webhookAttempts: number;
  /** Receptor mails delivered (250 or written to the outbox). */
  mailsSent: number;
  retries: number;
  errors: number;
}

/** The timing options of the send and poll jobs, defaults applied (see WorkerOptions). */
export interface JobTiming {
  firstPollDelayMs: number;
  pollMaxIntervalMs: number;
  pollWindowMs: number;
  pollSlowIntervalMs: number;
  sendBackoffBaseMs: number;
  sendBackoffMaxMs: number;
  callbackUrl: string | undefined;
}

export interface JobEnv {
  readonly ctx: ServiceContext;
  readonly log: Logger;
  readonly stats: WorkerStats;
  readonly o: JobTiming;
  readonly random: () => number;
  /** The reception client of an issuer (cached per issuer). */
  clientFor(issuer: Issuer): ReceptionClient;
  /** Throws AbortedError once the worker was killed (tests' kill -9): the job writes nothing more. */
  checkAlive(): void;
  /** Checks the queue now (a job was queued). */
  wake(): void;
  /** Verdicts told by Hacienda as they are made (an embedded emulator's), when the worker hears them. */
  readonly hints?: VerdictHints | undefined;
}

export class AbortedError extends Error {
  constructor() {
    super('worker aborted');
    this.name = 'AbortedError';
  }
}

export async function loadDocument(ctx: ServiceContext, job: Job) {
  if (job.document_id === null) return undefined;
  return ctx.store.db.selectFrom('documents').selectAll().where('id', '=', job.document_id).executeTakeFirst();
}

/**
 * What a poll needs of its document: no XML (issue 31: a poll job read the signed comprobante, ≈ 10 KB, at every
 * status query; a batch makes about three polls per document).
 */
export async function loadDocumentForPoll(ctx: ServiceContext, job: Job) {
  if (job.document_id === null) return undefined;
  return ctx.store.db
    .selectFrom('documents')
    .select(['id', 'account_id', 'issuer_id', 'clave', 'state', 'correos'])
    .where('id', '=', job.document_id)
    .executeTakeFirst();
}

export async function issuerOf(ctx: ServiceContext, documentIssuerId: number): Promise<Issuer | undefined> {
  return ctx.store.db.selectFrom('issuers').selectAll().where('id', '=', documentIssuerId).executeTakeFirst();
}

/**
 * A 429 whose Retry-After the client would not wait inline (a per-issuer quota: up to the next minute): the job
 * runs again no sooner than that (plus up to 1 s of jitter, so the waiting documents do not all come back at
 * the same instant), at most an hour later.
 */
export function notBeforeRetryAfter(env: Pick<JobEnv, 'ctx' | 'random'>, e: unknown, delay: number): number {
  if (!(e instanceof RateLimitedError) || e.retryAt === undefined) return delay;
  const told = Math.min(3600_000, e.retryAt - env.ctx.now());
  return Math.max(delay, told + Math.round(env.random() * 1_000));
}

/** Exponential backoff with "equal jitter": the n-th try (1-based) waits about base·2^(n-1), capped. */
export function backoff(n: number, base: number, cap: number, random: () => number): number {
  const step = Math.min(cap, base * 2 ** Math.max(0, n - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

export function errText(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${e.message}` : e.message;
  }
  return String(e);
}
