/**
 * Outbound webhooks: the spec's payload `{folioId, folioType: "INVOICE", folioDetails: [{fileType: "XML",
 * encodedFile: <base64 MensajeHacienda>}]}` POSTed to the account's webhook URL with Standard Webhooks headers
 * (`webhook-id` stable across retries, `webhook-timestamp`, `webhook-signature` v1 HMAC-SHA256 with the account's
 * `whsec_…` secret, via the `standardwebhooks` package).
 *
 * A delivery row is created in the same transaction that stores Hacienda's verdict (see poll.ts), together with
 * its `webhook` job, so a crash can neither lose nor duplicate it. Each `webhook` job run is one HTTP attempt:
 * 2xx → `entregado`; anything else → exponential backoff with jitter (5 s, 10 s, … capped at 1 h) until the retry
 * window (24 h from when the job was queued) is over → `fallido`. A replay queues a new job for the same delivery
 * (same `webhook-id`), with a new window. Every attempt is logged (no secrets, URL origin only).
 *
 * A receiver cannot hold a worker: 5 s to connect, 10 s for the response headers, 10 s between body chunks, and
 * the whole attempt is cut at their sum (25 s) whatever the receiver trickles. At most 64 KiB of the response body
 * is read (then the connection is dropped): only the status counts. With a publicOnly target policy (hosted,
 * webhook-targets.ts) the Agent's connector refuses a non-public address before the socket connects, checking the
 * address the name resolves to now (DNS rebinding); such an attempt is a failed attempt like a network error.
 */
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import type { DeliveryState, Job, WebhookDelivery } from '../../store/schema.js';
import { parseDetalleMensaje, type ErrorHacienda } from '../../core/xml/detalle-mensaje.js';
import { getWebhook } from '../accounts.js';
import type { ServiceContext } from '../context.js';
import { completeJob, enqueueJob, rescheduleJob, type Executor } from '../../store/jobs.js';
import { queueWebhookDelivery } from '../../store/webhook-deliveries.js';
import { guardedLookup, HINT, nonPublicReason, normalizeHost, WebhookTargetError, type WebhookTargetPolicy } from '../webhook-targets.js';

/** The spec's webhook payload. */
export interface WebhookPayload {
  folioId: string;
  folioType: 'INVOICE';
  folioDetails: { fileType: 'XML'; encodedFile: string }[];
}

export function webhookPayload(clave: string, mensajeHaciendaXml: string | Buffer): WebhookPayload {
  const bytes = typeof mensajeHaciendaXml === 'string' ? Buffer.from(mensajeHaciendaXml, 'utf8') : mensajeHaciendaXml;
  return { folioId: clave, folioType: 'INVOICE', folioDetails: [{ fileType: 'XML', encodedFile: bytes.toString('base64') }] };
}

/** `webhook-id` of a document's delivery: one per document, so a second insert would violate the unique index. */
export function messageIdFor(clave: string): string {
  return `msg_${clave}`;
}

export interface CreateDeliveryInput {
  accountId: number;
  documentId: number;
  clave: string;
  mensajeHaciendaXml: string;
}

/**
 * Inside the caller's transaction: when the account has a webhook URL, inserts the delivery and its `webhook` job
 * (due now) and returns the delivery id; otherwise returns null (nothing to deliver).
 */
export async function createDelivery(trx: Executor, now: number, input: CreateDeliveryInput): Promise<number | null> {
  return queueWebhookEvent(trx, now, {
    accountId: input.accountId,
    documentId: input.documentId,
    messageId: messageIdFor(input.clave),
    payload: webhookPayload(input.clave, input.mensajeHaciendaXml),
  });
}

/** fecr's event of a document Hacienda rejected (README "Webhook events"): its reasons as data, beside the spec's verdict. */
export const REJECTED_EVENT = 'documento.rechazado';

export interface RejectedPayload {
  type: typeof REJECTED_EVENT;
  folioId: string;
  folioType: 'INVOICE';
  estado: 'rechazado';
  mensaje: number | null;
  /** Hacienda's list in DetalleMensaje (core/xml/detalle-mensaje.ts). */
  errores: ErrorHacienda[];
}

/**
 * Inside the transaction that stores a rejection, after the spec's verdict delivery (which stays exactly the spec's
 * body): fecr's `documento.rechazado` event with Hacienda's reasons as data; null when the account has no webhook.
 */
export async function queueRejectedEvent(trx: Executor, now: number, input: { accountId: number; documentId: number; clave: string; mensaje: number | null; detalleMensaje: string | null }): Promise<number | null> {
  const payload: RejectedPayload = {
    type: REJECTED_EVENT,
    folioId: input.clave,
    folioType: 'INVOICE',
    estado: 'rechazado',
    mensaje: input.mensaje,
    errores: parseDetalleMensaje(input.detalleMensaje),
  };
  return queueWebhookEvent(trx, now, { accountId: input.accountId, documentId: input.documentId, messageId: `msg_${input.clave}_rechazado`, payload });
}

/**
 * Any event of a document (the spec's verdict above, or fecr's own events such as `documento.correo_fallido`,
 * README "Webhook events"): inside the caller's transaction, when the account has a webhook URL, inserts the
 * delivery (its `webhook-id` is `messageId`, unique) and its `webhook` job (due now); else null. The payload must
 * carry the document's clave as `folioId`.
 */
export async function queueWebhookEvent(
  trx: Executor,
  now: number,
  input: { accountId: number; documentId: number; messageId: string; payload: { folioId: string } },
): Promise<number | null> {
  return queueWebhookDelivery(trx, now, input);
}

export interface WebhookSenderOptions {
  /** Retry window from when the delivery job was queued (default 24 h). */
  retryWindowMs?: number;
  /** First retry delay (default 5 s), doubling per attempt. */
  backoffBaseMs?: number;
  /** Retry delay cap (default 1 h). */
  backoffMaxMs?: number;
  /** TCP connect timeout (default 5 s). */
  connectTimeoutMs?: number;
  /** Time to wait for the response headers (default 10 s) and between body chunks (default 10 s). */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** The whole attempt, connect to last byte read (default connect + headers + body timeouts: 25 s). */
  attemptTimeoutMs?: number;
  /** Use this dispatcher instead of an own Agent (it then has no target guard: tests only). */
  dispatcher?: Dispatcher;
  /** Random source for jitter (default Math.random). */
  random?: () => number;
}

export type AttemptOutcome =
  | { result: 'delivered'; status: number }
  | { result: 'retry'; status?: number; error: string; runAt: number }
  | { result: 'failed'; status?: number; error: string }
  | { result: 'skipped'; reason: string };

const USER_AGENT = 'fecr-webhooks/1';
/** The most of a receiver's response body ever read; the rest is not read (the connection is dropped). */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

/** Sends webhook deliveries: one attempt per `webhook` job run. */
export class WebhookSender {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly o: Required<Omit<WebhookSenderOptions, 'dispatcher'>>;

  constructor(
    private readonly ctx: ServiceContext,
    opts: WebhookSenderOptions = {},
  ) {
    const connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    const headersTimeoutMs = opts.headersTimeoutMs ?? 10_000;
    const bodyTimeoutMs = opts.bodyTimeoutMs ?? 10_000;
    this.o = {
      retryWindowMs: opts.retryWindowMs ?? 24 * 3600_000,
      backoffBaseMs: opts.backoffBaseMs ?? 5_000,
      backoffMaxMs: opts.backoffMaxMs ?? 3600_000,
      connectTimeoutMs,
      headersTimeoutMs,
      bodyTimeoutMs,
      attemptTimeoutMs: opts.attemptTimeoutMs ?? connectTimeoutMs + headersTimeoutMs + bodyTimeoutMs,
      random: opts.random ?? Math.random,
    };
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher =
      opts.dispatcher ??
      new Agent({
        // Checks the address every new connection goes to (hosted: public addresses only).
        connect: guardedConnector(ctx.webhookTargets, { timeoutMs: this.o.connectTimeoutMs }),
        headersTimeout: this.o.headersTimeoutMs,
        bodyTimeout: this.o.bodyTimeoutMs,
        keepAliveTimeout: 4_000,
        connections: 32,
      });
  }

  /** Backoff before retry number `n` (1-based): base·2^(n-1), capped, "equal jitter". */
  backoff(n: number): number {
    const step = Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** Math.max(0, n - 1));
    return Math.round(step / 2 + this.o.random() * (step / 2));
  }

  /**
   * Runs one attempt of the delivery of a leased `webhook` job and records the outcome (delivery row + job) in
   * one transaction guarded by the lease. `isAborted` is checked before writing (simulated kill in tests).
   */
  async run(job: Job, owner: string, isAborted: () => boolean = () => false): Promise<AttemptOutcome> {
    const { ctx } = this;
    const db = ctx.store.db;
    const log = ctx.logger;
    const delivery = job.delivery_id === null ? undefined : await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', job.delivery_id).executeTakeFirst();
    if (!delivery || delivery.state === 'entregado') {
      if (isAborted()) throw new Error('worker aborted');
      await completeJob(db, job, owner, ctx.now(), delivery ? null : 'delivery not found');
      return { result: 'skipped', reason: delivery ? 'already delivered' : 'delivery not found' };
    }
    const clave = (JSON.parse(delivery.payload) as WebhookPayload).folioId;
    const webhook = await getWebhook(ctx, delivery.account_id);
    let outcome: AttemptOutcome;
    let status: number | undefined;
    let error: string | undefined;
    const started = Date.now();
    const url = webhook?.url ?? delivery.url;
    if (!webhook) {
      error = 'the account has no webhook URL or secret';
    } else {
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new AttemptTimeoutError(this.o.attemptTimeoutMs)), this.o.attemptTimeoutMs);
      try {
        const signer = new Webhook(webhook.secret);
        const at = new Date(ctx.now());
        const res = await request(url, {
          method: 'POST',
          dispatcher: this.dispatcher,
          headers: {
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            'webhook-id': delivery.message_id,
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': signer.sign(delivery.message_id, at, delivery.payload),
          },
          body: delivery.payload,
          headersTimeout: this.o.headersTimeoutMs,
          bodyTimeout: this.o.bodyTimeoutMs,
          signal: deadline.signal,
        });
        status = res.statusCode;
        // Only the status counts: read at most RESPONSE_BODY_LIMIT, within the attempt's deadline, then hang up.
        await res.body.dump({ limit: RESPONSE_BODY_LIMIT, signal: deadline.signal }).catch(() => undefined);
        if (status < 200 || status > 299) error = `HTTP ${status}`;
      } catch (e) {
        error = errorText(deadline.signal.aborted ? deadline.signal.reason : e);
      } finally {
        clearTimeout(timer);
      }
    }
    const now = ctx.now();
    const attempt = delivery.attempts + 1;
    if (error === undefined) {
      outcome = { result: 'delivered', status: status! };
    } else if (!webhook) {
      outcome = { result: 'failed', error };
    } else {
      const runAt = now + this.backoff(job.attempts);
      if (runAt - job.created_at > this.o.retryWindowMs) outcome = { result: 'failed', error, ...(status !== undefined ? { status } : {}) };
      else outcome = { result: 'retry', error, runAt, ...(status !== undefined ? { status } : {}) };
    }
    const state: DeliveryState = outcome.result === 'delivered' ? 'entregado' : outcome.result === 'failed' ? 'fallido' : 'pendiente';
    if (isAborted()) throw new Error('worker aborted');
    await db.transaction().execute(async (trx) => {
      if (outcome.result === 'retry') await rescheduleJob(trx, job, owner, outcome.runAt, error ?? null);
      else await completeJob(trx, job, owner, now, error ?? null);
      await trx
        .updateTable('webhook_deliveries')
        .set({
          state,
          attempts: attempt,
          url,
          last_status: status ?? null,
          last_error: error ?? null,
          ...(outcome.result === 'delivered' ? { delivered_at: now } : {}),
        })
        .where('id', '=', delivery.id)
        .execute();
    });
    const entry = {
      deliveryId: delivery.id,
      messageId: delivery.message_id,
      clave,
      accountId: delivery.account_id,
      target: safeOrigin(url),
      attempt,
      status,
      durationMs: Date.now() - started,
      result: outcome.result,
      ...(outcome.result === 'retry' ? { retryInMs: outcome.runAt - now } : {}),
      ...(error !== undefined ? { error } : {}),
    };
    if (outcome.result === 'delivered') log.info(entry, 'webhook delivered');
    else if (outcome.result === 'failed') log.error(entry, 'webhook delivery failed for good');
    else log.warn(entry, 'webhook attempt failed');
    return outcome;
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** A delivery as `fecr webhooks list` shows it (no payload). */
export interface DeliveryInfo {
  id: number;
  messageId: string;
  documentId: number;
  clave: string;
  url: string;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  /** Epoch ms. */
  createdAt: number;
  deliveredAt: number | null;
}

function toInfo(row: WebhookDelivery & { clave: string }): DeliveryInfo {
  return {
    id: Number(row.id),
    messageId: row.message_id,
    documentId: Number(row.document_id),
    clave: row.clave,
    url: row.url,
    state: row.state,
    attempts: Number(row.attempts),
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
  };
}

/** The account's deliveries, newest first. */
export async function listDeliveries(
  ctx: ServiceContext,
  accountId: number,
  opts: { state?: DeliveryState; limit?: number } = {},
): Promise<DeliveryInfo[]> {
  let q = ctx.store.db
    .selectFrom('webhook_deliveries as w')
    .innerJoin('documents as d', 'd.id', 'w.document_id')
    .selectAll('w')
    .select('d.clave')
    .where('w.account_id', '=', accountId)
    .orderBy('w.id', 'desc')
    .limit(Math.max(1, Math.min(opts.limit ?? 50, 10_000)));
  if (opts.state) q = q.where('w.state', '=', opts.state);
  return (await q.execute()).map(toInfo);
}

/**
 * Queues the delivery again (same `webhook-id`, a new 24 h retry window), due now; a delivery already waiting
 * for a retry is just brought forward. Returns the delivery, or null when the account has no such delivery.
 */
export async function replayDelivery(ctx: ServiceContext, accountId: number, deliveryId: number): Promise<DeliveryInfo | null> {
  const now = ctx.now();
  const found = await ctx.store.db.transaction().execute(async (trx) => {
    const d = await trx
      .selectFrom('webhook_deliveries')
      .select(['id'])
      .where('id', '=', deliveryId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!d) return false;
    const open = await trx.selectFrom('jobs').select(['id']).where('type', '=', 'webhook').where('delivery_id', '=', deliveryId).where('done_at', 'is', null).execute();
    if (open.length > 0) {
      // Waiting for a retry (or running: then it keeps its lease and this only moves its next run).
      await trx.updateTable('jobs').set({ run_at: now }).where('id', 'in', open.map((j) => j.id)).execute();
    } else {
      await enqueueJob(trx, { type: 'webhook', delivery_id: deliveryId, run_at: now }, now);
    }
    await trx.updateTable('webhook_deliveries').set({ state: 'pendiente' }).where('id', '=', deliveryId).execute();
    return true;
  });
  if (!found) return null;
  ctx.logger.info({ deliveryId, accountId }, 'webhook delivery replay queued');
  const row = await ctx.store.db
    .selectFrom('webhook_deliveries as w')
    .innerJoin('documents as d', 'd.id', 'w.document_id')
    .selectAll('w')
    .select('d.clave')
    .where('w.id', '=', deliveryId)
    .executeTakeFirstOrThrow();
  return toInfo(row);
}

/**
 * The undici connector of the webhook Agent: with publicOnly, a literal non-public host is refused at once and names
 * go through `guardedLookup`; with an injected resolver names resolve through it in any case.
 */
function guardedConnector(policy: WebhookTargetPolicy | undefined, opts: { timeoutMs: number }): buildConnector.connector {
  const base = buildConnector({ timeout: opts.timeoutMs, ...(policy && (policy.publicOnly || policy.resolve) ? { lookup: guardedLookup(policy) } : {}) });
  return (options, callback) => {
    if (policy?.publicOnly) {
      const host = normalizeHost(options.hostname);
      if (isIP(host)) {
        const why = nonPublicReason(host);
        if (why) {
          callback(new WebhookTargetError(`webhook target refused: ${host} is ${why}; ${HINT}`), null);
          return;
        }
      }
    }
    base(options, callback);
  };
}

class AttemptTimeoutError extends Error {
  constructor(ms: number) {
    super(`the receiver took longer than ${ms} ms (attempt timeout)`);
    this.name = 'AttemptTimeoutError';
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

function errorText(e: unknown): string {
  if (e && typeof e === 'object') {
    const err = e as { code?: unknown; message?: unknown; cause?: unknown };
    const code = typeof err.code === 'string' ? err.code : undefined;
    const msg = typeof err.message === 'string' ? err.message : String(e);
    return code ? `${code}: ${msg}` : msg;
  }
  return String(e);
}

/** The worker's `webhook` job: one delivery attempt (WebhookSender.run), counted in the worker's statistics. */
export async function runWebhook(
  sender: WebhookSender,
  stats: { webhookAttempts: number; webhooksDelivered: number },
  job: Job,
  owner: string,
  isAborted: () => boolean,
): Promise<void> {
  stats.webhookAttempts++;
  const out = await sender.run(job, owner, isAborted);
  if (out.result === 'delivered') stats.webhooksDelivered++;
}
