/**
 * `correosAdicionales` under the client API's mail policy (issue 37, point 7): a body's additional addresses (10 per
 * document, the spec) went out through the operator's SMTP server with no count, so 20 accepted comprobantes (free in
 * env local or sandbox) mailed 200 foreign recipients. Now, unless the service is the CLI's local mode (the data dir's
 * account is its own operator, MailDefaults.issuerAsSender: today's behaviour):
 *
 *  - **At submission** (submitDocument): where the operator set an allow-list for the account (`fecr accounts mail
 *    BASE --allow ADDR…`), a correosAdicionales address that is neither on it nor the document's own receptor (or, for
 *    a factura de compra, seller) address is refused: 400, POLICY_MESSAGES.recipientRefused, a finding per address at
 *    `correosAdicionales[i]`, nothing signed.
 *  - **When the automatic mail is queued** (the verdict aceptado, queueAcceptedMail): the addresses written in the
 *    signed comprobante (its Emisor's and Receptor's CorreoElectronico) and those of the allow-list go as before; each
 *    other one is counted as one mail by the same limits as `POST /api/enviar/correo` (MailApiLimits, email-policy.ts):
 *    at most `perDocument` such addresses per document within 24 h, and each one of the account's `perAccount` mail
 *    requests of the hour (the same `mail_requests` ledger, outcome `adicional`, under the same per-account lock).
 *    Beyond, the address is held: left out of the mail, recorded as a mail of its own in state `fallido` with the
 *    reason (no job: never sent), and logged (warn: the account, the clave, the reason, the domains only). The
 *    document stays aceptado; its receptor gets the mail.
 */
import type { Finding } from '../../core/model.js';
import type { DocumentRow } from '../../store/schema.js';
import type { Executor } from '../../store/jobs.js';
import type { ServiceContext } from '../context.js';
import { DEFAULT_MAIL_LIMITS, MAIL_LIMIT_WINDOWS } from '../mail-defaults.js';
import { mailAllowListOf } from '../mail-settings.js';
import { ServiceError } from '../service-error.js';
import { domainsOf, lockAccount, POLICY_MESSAGES } from './email-policy.js';

type Ctx = Pick<ServiceContext, 'store' | 'mail' | 'logger'>;

/** Whether the account's additional addresses are held to the policy: a service that mails, not the CLI's local mode. */
function counted(ctx: Pick<ServiceContext, 'mail'>): boolean {
  return ctx.mail !== undefined && ctx.mail.issuerAsSender !== true;
}

/** At submission: a 400 with a finding per correosAdicionales beyond the account's allow-list (none when it has no list). */
export async function refuseAdditionalNotAllowed(ctx: Ctx, accountId: number, own: string | undefined, adicionales: readonly string[] | undefined): Promise<void> {
  if (!counted(ctx) || !adicionales || adicionales.length === 0) return;
  const allowed = new Set(await mailAllowListOf(ctx, accountId));
  if (allowed.size === 0) return;
  if (own) allowed.add(own.trim().toLowerCase());
  const findings: Finding[] = adicionales.flatMap((a, i) => (allowed.has(a.trim().toLowerCase()) ? [] : [{ path: `correosAdicionales[${i}]`, message: POLICY_MESSAGES.recipientFinding }]));
  if (findings.length === 0) return;
  ctx.logger.warn({ accountId, reason: 'recipient_not_allowed', refused: findings.length, domains: domainsOf(adicionales.filter((a) => !allowed.has(a.trim().toLowerCase()))) }, 'correosAdicionales refused');
  throw ServiceError.badRequest(POLICY_MESSAGES.recipientRefused, findings);
}

/** Every CorreoElectronico written in a signed comprobante (its Emisor's and its Receptor's), lower-cased. */
function addressesInXml(xml: string): Set<string> {
  const out = new Set<string>();
  for (const m of xml.matchAll(/<CorreoElectronico>([^<]+)<\/CorreoElectronico>/g)) out.add(m[1]!.replace(/&amp;/g, '&').trim().toLowerCase());
  return out;
}

export interface Admitted {
  /** Who the automatic mail goes to. */
  to: string[];
  /** The counted addresses among them (a ledger row each once the mail has its id). */
  counted: string[];
  held: { address: string; reason: string }[];
}

/** Inside the verdict's transaction: which recipients of the automatic mail go, and which are held (see above). */
export async function admitRecipients(ctx: Ctx, trx: Executor, now: number, doc: Pick<DocumentRow, 'id' | 'account_id' | 'clave'>, recipients: string[], xml: string): Promise<Admitted> {
  const out: Admitted = { to: [], counted: [], held: [] };
  if (!counted(ctx)) return { ...out, to: recipients };
  const own = addressesInXml(xml);
  const allow = await trx.selectFrom('account_mail_allow').select('address').where('account_id', '=', doc.account_id).execute();
  for (const a of allow) own.add(a.address);
  const foreign = recipients.filter((r) => !own.has(r.toLowerCase()));
  if (foreign.length === 0) return { ...out, to: recipients };
  const limits = ctx.mail?.limits ?? DEFAULT_MAIL_LIMITS;
  await lockAccount(ctx, trx, doc.account_id);
  const count = async (scope: 'account' | 'document') => {
    let q = trx.selectFrom('mail_requests').select((eb) => eb.fn.countAll<number | string>().as('n'));
    q = scope === 'account' ? q.where('account_id', '=', doc.account_id).where('created_at', '>', now - MAIL_LIMIT_WINDOWS.accountMs) : q.where('document_id', '=', doc.id).where('outcome', '=', 'adicional').where('created_at', '>', now - MAIL_LIMIT_WINDOWS.documentMs);
    return Number((await q.executeTakeFirstOrThrow()).n);
  };
  let ofAccount = await count('account');
  let ofDocument = await count('document');
  for (const r of recipients) {
    if (own.has(r.toLowerCase())) out.to.push(r);
    else if (ofDocument >= limits.perDocument) out.held.push({ address: r, reason: `held: the document's limit of ${limits.perDocument} additional addresses a day (fecr serve --mail-resends-per-document)` });
    else if (ofAccount >= limits.perAccount) out.held.push({ address: r, reason: `held: the account's limit of ${limits.perAccount} mails an hour (fecr serve --mail-resends-per-account)` });
    else {
      out.to.push(r);
      out.counted.push(r);
      ofAccount++;
      ofDocument++;
    }
  }
  if (out.held.length > 0) {
    const byReason = out.held.some((h) => h.reason.includes('document')) ? 'limit_document' : 'limit_account';
    ctx.logger.warn({ accountId: doc.account_id, clave: doc.clave, reason: byReason, held: out.held.length, domains: domainsOf(out.held.map((h) => h.address)) }, 'mail recipients held');
  }
  return out;
}

/** The ledger rows of the counted addresses of mail `emailId` (one each: one mail of the account's hour). */
export async function recordAdditional(trx: Executor, now: number, doc: Pick<DocumentRow, 'id' | 'account_id'>, addresses: readonly string[], emailId: number | null): Promise<void> {
  if (addresses.length === 0) return;
  await trx.deleteFrom('mail_requests').where('account_id', '=', doc.account_id).where('created_at', '<=', now - MAIL_LIMIT_WINDOWS.documentMs).execute();
  await trx
    .insertInto('mail_requests')
    .values(addresses.map(() => ({ account_id: doc.account_id, document_id: doc.id, email_id: emailId, outcome: 'adicional' as const, created_at: now })))
    .execute();
}
