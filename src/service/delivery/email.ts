/**
 * The receptor's mail of an accepted comprobante (issue 17): which mails exist and why.
 *
 *  - Exactly one automatic mail per document: `queueAcceptedMail` runs inside the poll job's transaction that stores
 *    the verdict aceptado (poll.ts), and only when that transaction moved the document to aceptado; it inserts the
 *    mail (`email_deliveries`, reason `aceptado`) and its `email` job together. A document without recipients (a TE
 *    without receptor, a receptor without correoElectronico and no correosAdicionales) gets none. Nothing is sent
 *    before aceptado.
 *  - A resend (`requestMail`, `fecr documents email CLAVE [--to ADDR]`) is a new mail (reason `reenvio`) with a new
 *    Message-ID, to the stored recipients or to the addresses given: through the client API only the document's own
 *    recipients and the account's allow-list, within limits (email-policy.ts).
 *  - Sending is the `email` job (email-job.ts). What each document's latest mail looks like: `mailStatusOf`.
 *
 * Recipients: `documents.correos`, stored at submission (receptor.correoElectronico, then correosAdicionales of the
 * body, then the `--cc` addresses of `fecr send`); rows stored before it existed read the receptor's address from
 * the signed XML.
 */
import { randomBytes } from 'node:crypto';
import type { DocumentRow, EmailDelivery, EmailState } from '../../store/schema.js';
import { enqueueJob, type Executor } from '../../store/jobs.js';
import type { ServiceContext } from '../context.js';
import { getDocument } from '../documents.js';
import { parseAddress, MailSettingsError } from '../mail-settings.js';
import { ServiceError } from '../service-error.js';
import { isClave } from '../../core/clave.js';
import { admitRecipients, recordAdditional } from './email-additional.js';
import { checkLimits, domainsOf, POLICY_MESSAGES, recordRequest, refusedRecipients, requireSender, type MailCaller } from './email-policy.js';

/** A mail as `fecr status`, `fecr documents list` and the API show it (the client API's shape). */
export type { MailStatus } from '../../api/contract.js';
import type { MailStatus } from '../../api/contract.js';

export function toMailStatus(row: EmailDelivery): MailStatus {
  return {
    estado: row.state,
    destinatarios: JSON.parse(row.recipients) as string[],
    motivo: row.reason,
    intentos: Number(row.attempts),
    ultimaRespuesta: row.last_reply,
    messageId: row.message_id,
    creadoAt: new Date(Number(row.created_at)).toISOString(),
    enviadoAt: row.sent_at === null ? null : new Date(Number(row.sent_at)).toISOString(),
  };
}

/** A fresh RFC 5322 Message-ID for a mail of this document (stable across that mail's retries). */
export function newMessageId(clave: string): string {
  return `<${clave}.${randomBytes(6).toString('hex')}@fecr.email>`;
}

/** The receptor's address in a signed XML we wrote (`<Receptor>…<CorreoElectronico>`), for rows without `correos`. */
export function receptorAddressInXml(xml: string): string | undefined {
  const receptor = /<Receptor>([\s\S]*?)<\/Receptor>/.exec(xml)?.[1];
  const addr = receptor ? /<CorreoElectronico>([^<]+)<\/CorreoElectronico>/.exec(receptor)?.[1] : undefined;
  return addr?.replace(/&amp;/g, '&').trim() || undefined;
}

/** The stored recipients of a document. */
export function recipientsOf(doc: Pick<DocumentRow, 'correos' | 'xml'>): string[] {
  if (doc.correos !== null && doc.correos !== undefined) return JSON.parse(doc.correos) as string[];
  const a = receptorAddressInXml(doc.xml);
  return a ? [a] : [];
}

async function insertMail(
  trx: Executor,
  now: number,
  doc: Pick<DocumentRow, 'id' | 'account_id' | 'clave'>,
  recipients: string[],
  reason: 'aceptado' | 'reenvio',
  /** Recipients held by the policy (email-additional.ts): a mail fallido with this reason, no job. */
  heldReason?: string,
): Promise<number> {
  const row = await trx
    .insertInto('email_deliveries')
    .values({
      account_id: doc.account_id,
      document_id: doc.id,
      message_id: newMessageId(doc.clave),
      recipients: JSON.stringify(recipients),
      reason,
      state: heldReason === undefined ? 'pendiente' : 'fallido',
      attempts: 0,
      last_reply: heldReason ?? null,
      created_at: now,
      sent_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (heldReason !== undefined) return row.id;
  await enqueueJob(trx, { type: 'email', document_id: doc.id, email_id: row.id, run_at: now }, now);
  return row.id;
}

/**
 * Inside the transaction that stored the verdict aceptado: the document's automatic mail and its job, when the
 * service sends mail (ctx.mail) and the document has recipients. Its correosAdicionales beyond the comprobante's own
 * addresses and the allow-list are counted by the client API's limits, and those past them held (email-additional.ts):
 * a mail of their own, fallido with the reason, never sent. Returns the mail's id, or null.
 */
export async function queueAcceptedMail(
  ctx: Pick<ServiceContext, 'mail' | 'store' | 'logger'>,
  trx: Executor,
  now: number,
  doc: Pick<DocumentRow, 'id' | 'account_id' | 'clave' | 'correos'> & { xml?: string },
): Promise<number | null> {
  if (!ctx.mail) return null;
  const xml = doc.xml ?? (await trx.selectFrom('documents').select('xml').where('id', '=', doc.id).executeTakeFirst())?.xml ?? '';
  // A row stored before `correos` existed: its receptor's address is read from its XML.
  const recipients = recipientsOf({ correos: doc.correos, xml });
  if (recipients.length === 0) return null;
  const admitted = await admitRecipients(ctx, trx, now, doc, recipients, xml);
  if (admitted.held.length > 0) {
    await insertMail(trx, now, doc, admitted.held.map((h) => h.address), 'aceptado', [...new Set(admitted.held.map((h) => h.reason))].join('; '));
  }
  if (admitted.to.length === 0) return null;
  const id = await insertMail(trx, now, doc, admitted.to, 'aceptado');
  await recordAdditional(trx, now, doc, admitted.counted, id);
  return id;
}

/** A resend: to `to` when given, else to the stored recipients; `caller` (default `account`): see email-policy.ts. */
export interface MailRequest {
  to?: string[];
  caller?: MailCaller;
}

/**
 * Mails an accepted document again: to `to` when given (each checked: findings at `correos[i]`), else to its stored
 * recipients. An account (the client API) may name only the document's recipients and its allow-list, within its
 * limits (email-policy.ts); the operator anyone. Throws ServiceError: 404 unknown clave, 400 not aceptado yet, no
 * recipient, a bad or refused address, no mail or no sender in this service; MailLimitError past a limit.
 */
export async function requestMail(ctx: ServiceContext, accountId: number, clave: string, opts: MailRequest = {}): Promise<{ id: number; mail: MailStatus }> {
  const byAccount = (opts.caller ?? 'account') === 'account';
  const doc = isClave(clave) ? await getDocument(ctx, accountId, clave) : null;
  if (!doc) throw ServiceError.notFound('Documento no encontrado para la clave proporcionada');
  if (!ctx.mail) throw ServiceError.badRequest('Este servicio no envía correos');
  if (doc.state !== 'aceptado' || !doc.response_xml) {
    throw ServiceError.badRequest(`El documento ${clave} no ha sido aceptado por Hacienda (estado ${doc.state}); solo un comprobante aceptado se envía por correo`, [
      { path: 'claveHacienda', message: `estado ${doc.state}, no aceptado` },
    ]);
  }
  let recipients: string[];
  if (opts.to && opts.to.length > 0) {
    const findings: { path: string; message: string }[] = [];
    const named: { i: number; address: string }[] = [];
    opts.to.forEach((a, i) => {
      try {
        named.push({ i, address: parseAddress(a, `to[${i}]`) });
      } catch (e) {
        if (!(e instanceof MailSettingsError)) throw e;
        findings.push({ path: `correos[${i}]`, message: 'must be an e-mail address' });
      }
    });
    if (findings.length > 0) throw ServiceError.validation(findings);
    recipients = [];
    for (const { address } of named) if (!recipients.some((r) => r.toLowerCase() === address.toLowerCase())) recipients.push(address);
    if (byAccount) {
      const refused = await refusedRecipients(ctx, accountId, recipientsOf(doc), named);
      if (refused.length > 0) {
        const now = ctx.now();
        // A refused request counts against the account's limit (a probe costs as much as a mail): past it, 429.
        await ctx.store.db.transaction().execute(async (trx) => {
          await checkLimits(ctx, trx, now, accountId, null);
          await recordRequest(trx, now, { accountId, documentId: doc.id, emailId: null });
        });
        ctx.logger.warn({ accountId, clave, reason: 'recipient_not_allowed', refused: refused.length, domains: domainsOf(refused.map((r) => r.address)) }, 'mail request refused');
        throw ServiceError.badRequest(
          POLICY_MESSAGES.recipientRefused,
          refused.map((r) => ({ path: `correos[${r.i}]`, message: POLICY_MESSAGES.recipientFinding })),
        );
      }
    }
  } else {
    recipients = recipientsOf(doc);
    if (recipients.length === 0) {
      throw ServiceError.badRequest('El documento no tiene dirección de correo del receptor; indique a quién enviarlo', [
        { path: 'correos', message: 'is required: the document has no receptor address' },
      ]);
    }
  }
  await requireSender(ctx, doc);
  const now = ctx.now();
  const id = await ctx.store.db.transaction().execute(async (trx) => {
    if (byAccount) await checkLimits(ctx, trx, now, accountId, { id: doc.id, clave });
    const emailId = await insertMail(trx, now, doc, recipients, 'reenvio');
    if (byAccount) await recordRequest(trx, now, { accountId, documentId: doc.id, emailId });
    return emailId;
  });
  ctx.logger.info({ clave, emailId: id, recipients: recipients.length, caller: byAccount ? 'account' : 'operator' }, 'mail to the receptor queued again');
  const row = await ctx.store.db.selectFrom('email_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return { id, mail: toMailStatus(row) };
}

/** The latest mail of each of these documents (documents without one are left out). */
export async function mailStatusOf(ctx: Pick<ServiceContext, 'store'>, documentIds: readonly number[]): Promise<Map<number, MailStatus>> {
  const out = new Map<number, MailStatus>();
  if (documentIds.length === 0) return out;
  const db = ctx.store.db;
  for (let i = 0; i < documentIds.length; i += 500) {
    const ids = documentIds.slice(i, i + 500);
    const latest = db.selectFrom('email_deliveries').select((eb) => eb.fn.max('id').as('id')).where('document_id', 'in', ids).groupBy('document_id');
    const rows = await db.selectFrom('email_deliveries').selectAll().where('id', 'in', latest).execute();
    for (const r of rows) out.set(Number(r.document_id), toMailStatus(r));
  }
  return out;
}

/** A mail by its id (tests, the CLI's wait for a resend). */
export async function mailById(ctx: Pick<ServiceContext, 'store'>, id: number): Promise<EmailDelivery | undefined> {
  return ctx.store.db.selectFrom('email_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}
