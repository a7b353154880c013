/**
 * The worker's `email` job: one attempt to deliver one mail (email.ts) through the account's route (an SMTP server or
 * the outbox, mail-settings.ts), From the operator's sender (email-policy.ts; none: fallido at once, never sent),
 * then its outcome and the job's end in ONE transaction guarded by the job's lease:
 *
 *  - 250 → `enviado` (the reply, the time);
 *  - a 4xx reply or a connection refused/reset/timed out → `pendiente`, the job again after a backoff (30 s doubling
 *    to 1 h, jitter) while the mail is younger than 24 h; past that → `fallido`;
 *  - a 5xx reply → `fallido` at once, never retried (no retry storm): the reply recorded, and the account's webhook told
 *    (`documento.correo_fallido`, when it has a webhook URL).
 *
 * A crash between the server's 250 and that transaction leaves the mail `pendiente` and its job leased; the lease
 * expires and the job sends it again with the same Message-ID: at most one duplicate per mail in flight at the crash
 * (docs/reliability.md), never a loop, since nothing else re-sends it.
 */
import type { Job } from '../../store/schema.js';
import { completeJob, rescheduleJob } from '../../store/jobs.js';
import type { ServiceContext } from '../context.js';
import { mailRouteFor } from '../mail-settings.js';
import { AbortedError, backoff, errText } from './job.js';
import { issuerSenderOf, senderFor } from './email-policy.js';
import { inlineMailRenderer, type MailRenderer } from './email-render-pool.js';
import { MailTransports, type SendOutcome, type TransportTimeouts } from './email-transport.js';
import { queueWebhookEvent } from './webhooks.js';

/** The webhook event of a mail that failed for good. */
export const MAIL_FAILED_EVENT = 'documento.correo_fallido';

export interface MailFailedPayload {
  type: typeof MAIL_FAILED_EVENT;
  folioId: string;
  folioType: 'INVOICE';
  correo: { messageId: string; destinatarios: string[]; intentos: number; respuesta: string };
}

export interface EmailSenderOptions extends TransportTimeouts {
  /** Temporary failures are retried while the mail is younger than this (default 24 h). */
  retryWindowMs?: number;
  /** First retry (default 30 s), doubling, capped (default 1 h). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  random?: () => number;
  /** Where the PDF and the MIME message are made (default: on this thread). */
  renderer?: MailRenderer;
}

export type MailAttempt = { result: 'sent' | 'retry' | 'failed' | 'skipped'; reply?: string };

export class EmailSender {
  private readonly transports: MailTransports;
  private readonly renderer: MailRenderer;
  private readonly o: Required<Pick<EmailSenderOptions, 'retryWindowMs' | 'backoffBaseMs' | 'backoffMaxMs' | 'random'>>;

  constructor(
    private readonly ctx: ServiceContext,
    opts: EmailSenderOptions = {},
  ) {
    this.transports = new MailTransports(opts);
    this.renderer = opts.renderer ?? inlineMailRenderer;
    this.o = {
      retryWindowMs: opts.retryWindowMs ?? 24 * 3600_000,
      backoffBaseMs: opts.backoffBaseMs ?? 30_000,
      backoffMaxMs: opts.backoffMaxMs ?? 3600_000,
      random: opts.random ?? Math.random,
    };
  }

  /** Runs one attempt of a leased `email` job; `isAborted` is checked before anything is written (tests' kill -9). */
  async run(job: Job, owner: string, isAborted: () => boolean = () => false): Promise<MailAttempt> {
    const { ctx } = this;
    const db = ctx.store.db;
    const mail = job.email_id == null ? undefined : await db.selectFrom('email_deliveries').selectAll().where('id', '=', job.email_id).executeTakeFirst();
    const doc = mail ? await db.selectFrom('documents').selectAll().where('id', '=', mail.document_id).executeTakeFirst() : undefined;
    if (!mail || mail.state !== 'pendiente' || !doc) {
      if (isAborted()) throw new AbortedError();
      await completeJob(db, job, owner, ctx.now(), mail ? (doc ? null : 'document not found') : 'mail not found');
      return { result: 'skipped' };
    }
    const recipients = JSON.parse(mail.recipients) as string[];
    const started = Date.now();
    let outcome: SendOutcome;
    try {
      outcome = await this.attempt(doc, mail.message_id, recipients, `${doc.clave}-${mail.id}`);
    } catch (e) {
      // Our side (the PDF, the outbox folder, the settings): retried as a temporary failure.
      outcome = { result: 'temporary', reply: errText(e) };
    }
    const now = ctx.now();
    const attempts = Number(mail.attempts) + 1;
    let result: MailAttempt['result'];
    let runAt = 0;
    if (outcome.result === 'sent') result = 'sent';
    else if (outcome.result === 'permanent') result = 'failed';
    else {
      runAt = now + backoff(attempts, this.o.backoffBaseMs, this.o.backoffMaxMs, this.o.random);
      result = runAt - Number(mail.created_at) > this.o.retryWindowMs ? 'failed' : 'retry';
    }
    const reply =
      outcome.result === 'sent' && outcome.rejected.length > 0 ? `${outcome.reply} (rechazados: ${outcome.rejected.join(', ')})` : outcome.reply;
    if (isAborted()) throw new AbortedError();
    await db.transaction().execute(async (trx) => {
      if (result === 'retry') await rescheduleJob(trx, job, owner, runAt, reply);
      else await completeJob(trx, job, owner, now, result === 'sent' ? null : reply);
      await trx
        .updateTable('email_deliveries')
        .set({ state: result === 'sent' ? 'enviado' : result === 'failed' ? 'fallido' : 'pendiente', attempts, last_reply: reply, ...(result === 'sent' ? { sent_at: now } : {}) })
        .where('id', '=', mail.id)
        .execute();
      if (result === 'failed') {
        const payload: MailFailedPayload = {
          type: MAIL_FAILED_EVENT,
          folioId: doc.clave,
          folioType: 'INVOICE',
          correo: { messageId: mail.message_id, destinatarios: recipients, intentos: attempts, respuesta: reply },
        };
        await queueWebhookEvent(trx, now, { accountId: mail.account_id, documentId: doc.id, messageId: `msg_${doc.clave}_correo_${mail.id}`, payload });
      }
    });
    const entry = { clave: doc.clave, emailId: mail.id, attempt: attempts, result, reply, durationMs: Date.now() - started, ...(result === 'retry' ? { retryInMs: runAt - now } : {}) };
    if (result === 'sent') ctx.logger.info(entry, 'mail delivered');
    else if (result === 'failed') ctx.logger.error(entry, 'mail failed for good');
    else ctx.logger.warn(entry, 'mail attempt failed; will retry');
    return { result, reply };
  }

  /** Renders the mail (the stored XML and MensajeHacienda, the PDF: email-render.ts) and sends it once. */
  private async attempt(
    doc: import('../../store/schema.js').DocumentRow,
    messageId: string,
    to: string[],
    outboxName: string,
  ): Promise<SendOutcome> {
    const { ctx } = this;
    const route = await mailRouteFor(ctx, doc.account_id);
    if (!route) return { result: 'permanent', reply: 'this service sends no mail (no SMTP server nor outbox)' };
    const issuer = await issuerSenderOf(ctx, doc);
    // The From is the operator's, never an address the tenant wrote (email-policy.ts).
    const sender = senderFor(route, issuer, ctx.mail?.issuerAsSender === true);
    if (!sender) {
      return { result: 'permanent', reply: 'no sender: the operator has set no From address (fecr serve --mail-from, or fecr accounts mail BASE --smtp-url … --from …)' };
    }
    const mail = await this.renderer.render({
      row: doc,
      issuerName: issuer.name,
      from: sender.from,
      ...(sender.replyTo ? { replyTo: sender.replyTo } : {}),
      to,
      messageId,
      date: new Date(ctx.now()),
      outboxName,
    });
    return this.transports.send(route, mail);
  }

  close(): Promise<void> {
    return this.transports.close();
  }
}
