/**
 * Who the receptor mails may go to, how often, and from whom (issue 25: `POST /api/enviar/correo` was a relay: any
 * account mailed any 10 addresses per request, as often as it liked, through the operator's SMTP server, From the
 * address it wrote in its issuer record).
 *
 *  - **Recipients.** The client API (caller `account`) mails only the document's own recipients (`documents.correos`:
 *    receptor.correoElectronico, correosAdicionales, `--cc`) and the addresses an operator registered for the account
 *    (`fecr accounts mail BASE --allow ADDR…`). Any other address refuses the whole request: 400, a finding per
 *    address, nothing queued. The operator (the CLI's local mode: the data dir's account is its own operator) mails
 *    whom it names, without limits.
 *  - **Limits** (MailApiLimits, `fecr serve --mail-resends-per-document|--mail-resends-per-account`): per account,
 *    its requests of the last hour, queued or refused (a refused request costs as much as a mail: an account probing
 *    foreign addresses runs out as fast as one mailing); per document, the mails queued in the last 24 h. Beyond:
 *    MailLimitError, answered 429 with Retry-After (when the oldest counted request leaves its window). Counted in
 *    the store (`mail_requests`) under a lock per account (PostgreSQL: a transaction's advisory lock; SQLite: its one
 *    writer), so concurrent requests and many API nodes share one count.
 *  - **Sender.** The From address is always the operator's: the account's own sender (`fecr accounts mail --from`),
 *    else the service's (`fecr serve --mail-from`); its display name the operator's, else the issuer's name; Reply-To
 *    the operator's, else the issuer's address. Without an operator address a mail through an SMTP server is refused
 *    (the API: 400 before queuing; the worker: fallido, never sent), except in the CLI's local mode and for the
 *    outbox (nothing leaves the machine), where the issuer's own address stands in.
 *
 * Every refusal is logged (warn): the account, the clave, the reason; of a refused address only its domain.
 */
import { sql } from 'kysely';
import type { DocumentRow } from '../../store/schema.js';
import type { Executor } from '../../store/jobs.js';
import type { ServiceContext } from '../context.js';
import { DEFAULT_MAIL_LIMITS, MAIL_LIMIT_WINDOWS, type MailApiLimits } from '../mail-defaults.js';
import { MailSettingsError, mailAllowListOf, mailRouteFor, parseAddress, type MailRoute } from '../mail-settings.js';
import { ServiceError } from '../service-error.js';

/** Who asks for a mail: an account through the client API, or the operator (the CLI's local mode). */
export type MailCaller = 'account' | 'operator';

export const POLICY_MESSAGES = {
  recipientRefused: 'Solo se envía correo a los destinatarios del documento o a las direcciones que el operador registró para la cuenta',
  recipientFinding: 'is neither a recipient of the document nor an address registered for the account',
  noSender: 'El servicio no tiene un remitente de correo configurado; no se envía el correo',
  documentLimit: 'Demasiados envíos de correo de este documento; intente de nuevo más tarde',
  accountLimit: 'Demasiados envíos de correo desde esta cuenta; intente de nuevo más tarde',
} as const;

/** A limit reached: the API answers 429 with `Retry-After: retryAfterSeconds`. */
export class MailLimitError extends Error {
  constructor(
    readonly scope: 'document' | 'account',
    readonly retryAfterSeconds: number,
  ) {
    super(scope === 'document' ? POLICY_MESSAGES.documentLimit : POLICY_MESSAGES.accountLimit);
    this.name = 'MailLimitError';
  }
}

/** The issuer as a mail names it: its name, and its own address (tenant-written: a Reply-To at most). */
export interface IssuerSender {
  name: string;
  address?: string;
}

export interface ResolvedSender {
  from: { name: string; address: string };
  replyTo?: string;
}

function validAddress(a: string | undefined): string | undefined {
  if (!a) return undefined;
  try {
    return parseAddress(a, 'address');
  } catch (e) {
    if (e instanceof MailSettingsError) return undefined;
    throw e;
  }
}

/** The From and Reply-To of a mail by `route` (see above); null: no sender may be used, the mail is refused. */
export function senderFor(route: MailRoute, issuer: IssuerSender, issuerAsSender: boolean): ResolvedSender | null {
  const issuerAddress = validAddress(issuer.address);
  const name = route.fromName ?? issuer.name;
  if (route.fromAddress) {
    const replyTo = route.replyTo ?? issuerAddress;
    return { from: { name, address: route.fromAddress }, ...(replyTo ? { replyTo } : {}) };
  }
  if (!issuerAddress || !(issuerAsSender || route.kind === 'outbox')) return null;
  return { from: { name, address: issuerAddress }, ...(route.replyTo ? { replyTo: route.replyTo } : {}) };
}

/** The issuer of a document: the name its mails carry and its own address. */
export async function issuerSenderOf(ctx: Pick<ServiceContext, 'store'>, doc: Pick<DocumentRow, 'issuer_id' | 'emisor_numero'>): Promise<IssuerSender> {
  const issuer = await ctx.store.db.selectFrom('issuers').select(['record_json']).where('id', '=', doc.issuer_id).executeTakeFirst();
  const record = (issuer ? JSON.parse(issuer.record_json) : {}) as { nombre?: string; nombreComercial?: string; correoElectronico?: string };
  return {
    name: record.nombre ?? record.nombreComercial ?? doc.emisor_numero ?? 'el emisor',
    ...(record.correoElectronico ? { address: record.correoElectronico } : {}),
  };
}

/** Throws 400 (logged) when a mail of this document could not be sent for want of a sender. */
export async function requireSender(ctx: ServiceContext, doc: Pick<DocumentRow, 'account_id' | 'issuer_id' | 'emisor_numero' | 'clave'>): Promise<void> {
  const route = await mailRouteFor(ctx, doc.account_id);
  if (route && senderFor(route, await issuerSenderOf(ctx, doc), ctx.mail?.issuerAsSender === true)) return;
  ctx.logger.warn({ accountId: doc.account_id, clave: doc.clave, reason: 'no_sender' }, 'mail request refused');
  throw ServiceError.badRequest(POLICY_MESSAGES.noSender);
}

/**
 * The addresses of `to` the account may not mail (neither the document's recipients nor its allow-list), with their
 * index in the request.
 */
export async function refusedRecipients(ctx: Pick<ServiceContext, 'store'>, accountId: number, stored: readonly string[], to: readonly { i: number; address: string }[]): Promise<{ i: number; address: string }[]> {
  const allowed = new Set([...stored.map((a) => a.toLowerCase()), ...(await mailAllowListOf(ctx, accountId))]);
  return to.filter((t) => !allowed.has(t.address.toLowerCase()));
}

/** The domains of some addresses (what the log says of a refused one). */
export function domainsOf(addresses: readonly string[]): string[] {
  return [...new Set(addresses.map((a) => a.slice(a.lastIndexOf('@') + 1).toLowerCase()))];
}

const LOCK_CLASS = 0x6d61696c; // "mail"

/** Inside a transaction: waits for the account's other mail requests (PostgreSQL; SQLite has one writer). */
export async function lockAccount(ctx: Pick<ServiceContext, 'store'>, trx: Executor, accountId: number): Promise<void> {
  if (ctx.store.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${LOCK_CLASS}::int, ${accountId}::int)`.execute(trx);
}

/**
 * Inside the transaction that records a request of the API: takes the account's lock, then throws MailLimitError
 * (logged) when the account (and, given `doc`, the document) has reached its limit. The wait: until the request that
 * makes the count `max` leaves its window.
 */
export async function checkLimits(ctx: ServiceContext, trx: Executor, now: number, accountId: number, doc: { id: number; clave: string } | null): Promise<void> {
  const limits: MailApiLimits = ctx.mail?.limits ?? DEFAULT_MAIL_LIMITS;
  await lockAccount(ctx, trx, accountId);
  const scopes: [MailLimitError['scope'], number, number][] = [['account', limits.perAccount, MAIL_LIMIT_WINDOWS.accountMs]];
  if (doc) scopes.push(['document', limits.perDocument, MAIL_LIMIT_WINDOWS.documentMs]);
  for (const [scope, max, windowMs] of scopes) {
    let q = trx.selectFrom('mail_requests').select('created_at').where('created_at', '>', now - windowMs);
    q = scope === 'account' ? q.where('account_id', '=', accountId) : q.where('document_id', '=', doc!.id).where('outcome', '=', 'queued');
    const recent = await q.orderBy('created_at', 'desc').limit(max).execute();
    if (recent.length < max) continue;
    const seconds = Math.max(1, Math.ceil((Number(recent[max - 1]!.created_at) + windowMs - now) / 1000));
    ctx.logger.warn({ accountId, ...(doc ? { clave: doc.clave } : {}), reason: `limit_${scope}`, max, windowS: windowMs / 1000, retryAfterS: seconds }, 'mail request refused');
    throw new MailLimitError(scope, seconds);
  }
}

/** Records a request of the API (queued or refused) and prunes the account's rows past the longest window. */
export async function recordRequest(trx: Executor, now: number, r: { accountId: number; documentId: number; emailId: number | null }): Promise<void> {
  await trx.deleteFrom('mail_requests').where('account_id', '=', r.accountId).where('created_at', '<=', now - MAIL_LIMIT_WINDOWS.documentMs).execute();
  await trx
    .insertInto('mail_requests')
    .values({ account_id: r.accountId, document_id: r.documentId, email_id: r.emailId, outcome: r.emailId === null ? 'refused' : 'queued', created_at: now })
    .execute();
}
