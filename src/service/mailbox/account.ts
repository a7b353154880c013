/**
 * The suppliers' mailbox of a hosted account (issue 30): an operator sets it (`fecr accounts mailbox BASE --imap URL
 * [--rules FILE] [--interval S]`, the password sealed like the other secrets), and the service's worker reads it: one
 * `mailbox` job per account (key `mailbox:<account>`), which runs a pass (watch.ts) with the service's own import
 * (RecibidosImporter) and aceptar (decideRecibido), then queues the next pass `interval` seconds on, in the same
 * transaction as its completion. With several `fecr serve` on one PostgreSQL, the queue's lease gives the job to one
 * worker at a time; a worker killed mid-pass leaves the mails it had not moved for the next pass, which finds their
 * comprobantes already imported (watch.ts: exactly once per clave).
 */
import { RECEIVED_MAX_BYTES } from '../../core/received/limits.js';
import { completeJob, enqueueJob } from '../../store/jobs.js';
import type { Job } from '../../store/schema.js';
import { AccountError } from '../accounts.js';
import type { ServiceContext } from '../context.js';
import { decideRecibido } from '../recibidos/decide.js';
import { RecibidosImporter } from '../recibidos/import.js';
import { ServiceError } from '../service-error.js';
import { IMAP_PASSWORD_VAR, ImapSource, imapErrorText, parseImapUrl } from './imap.js';
import { HOLD_ALL, parseMailRules } from './rules.js';
import { mailboxPass, type AnswerOutcome, type MailSink } from './watch.js';

export const DEFAULT_INTERVAL_S = 60;

export interface AccountMailboxInput {
  imapUrl: string;
  /** Else the URL's. */
  password?: string;
  /** The rules file's JSON, parsed (rules.ts); none: every comprobante held. */
  rules?: unknown;
  intervalS?: number;
}

export interface AccountMailboxView {
  imapUrl: string;
  rules: unknown;
  intervalS: number;
}

const passwordContext = (accountId: number) => `imap:${accountId}`;

async function accountIdOf(ctx: ServiceContext, base: string): Promise<number> {
  const row = await ctx.store.db.selectFrom('accounts').select('id').where('base', '=', base).executeTakeFirst();
  if (!row) throw new AccountError('account_not_found', `no account named ${base}`);
  return row.id;
}

/** The URL as shown and stored: without the password. */
function withoutPassword(url: string): string {
  const u = new URL(url);
  u.password = '';
  return u.toString();
}

/**
 * Sets the account's mailbox and queues its first pass now. Throws an Error saying what is wrong with the URL
 * (imap.ts) or a MailRulesError for the rules. The mailbox is not contacted here: the pass reports a wrong password.
 */
export async function setAccountMailbox(ctx: ServiceContext, base: string, input: AccountMailboxInput): Promise<AccountMailboxView> {
  const target = parseImapUrl(input.imapUrl, input.password !== undefined ? { [IMAP_PASSWORD_VAR]: input.password } : {});
  if (input.rules !== undefined) parseMailRules(input.rules);
  const intervalS = input.intervalS ?? DEFAULT_INTERVAL_S;
  const accountId = await accountIdOf(ctx, base);
  const now = ctx.now();
  const row = {
    imap_url: withoutPassword(input.imapUrl),
    password_enc: ctx.secrets.seal(target.pass, passwordContext(accountId)),
    rules_json: JSON.stringify(input.rules ?? {}),
    interval_s: intervalS,
    updated_at: now,
  };
  await ctx.store.db.transaction().execute(async (trx) => {
    await trx.insertInto('account_mailboxes').values({ account_id: accountId, ...row, created_at: now }).onConflict((oc) => oc.column('account_id').doUpdateSet(row)).execute();
    // One job per account: on PostgreSQL the key replaces a waiting one; on SQLite an open one is made due now.
    const open = ctx.store.dialect === 'postgres' ? [] : await trx.selectFrom('jobs').select('id').where('type', '=', 'mailbox').where('account_id', '=', accountId).where('done_at', 'is', null).execute();
    if (open.length === 0) await enqueueJob(trx, { type: 'mailbox', account_id: accountId, run_at: now }, now);
    else await trx.updateTable('jobs').set({ run_at: now }).where('id', 'in', open.map((j) => j.id)).where('lease_owner', 'is', null).execute();
  });
  ctx.logger.info({ base, imap: row.imap_url }, 'account mailbox set');
  return { imapUrl: row.imap_url, rules: input.rules ?? {}, intervalS };
}

export async function accountMailboxView(ctx: ServiceContext, base: string): Promise<AccountMailboxView | null> {
  const accountId = await accountIdOf(ctx, base);
  const row = await ctx.store.db.selectFrom('account_mailboxes').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  return row ? { imapUrl: row.imap_url, rules: JSON.parse(row.rules_json) as unknown, intervalS: row.interval_s } : null;
}

/** Removes it; its job ends at its next run (it finds no mailbox). True when there was one. */
export async function clearAccountMailbox(ctx: ServiceContext, base: string): Promise<boolean> {
  const accountId = await accountIdOf(ctx, base);
  const r = await ctx.store.db.deleteFrom('account_mailboxes').where('account_id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The service's own buyer side for one account, its refusals sorted as the watcher needs them. */
function serviceSink(ctx: ServiceContext, accountId: number, importer: RecibidosImporter): MailSink {
  return {
    import: (files) => importer.importMany(files),
    async accept(clave, condicionImpuesto): Promise<AnswerOutcome> {
      try {
        await decideRecibido(ctx, accountId, clave, { decision: 'aceptar', ...(condicionImpuesto ? { condicionImpuesto } : {}) });
        return { ok: true };
      } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
        const hacienda = e.details?.find((x) => x.path === 'hacienda');
        if (hacienda) return { retry: hacienda.message };
        if (e.code === 'service_unavailable') return { retry: e.message };
        return { failed: [e.message, ...(e.details ?? []).map((x) => `${x.path}: ${x.message}`)].join('; ') };
      }
    },
  };
}

/**
 * The worker's `mailbox` job: one pass over the account's mailbox, then the next pass queued. A worker that stops
 * ends the pass after the mail in hand and queues the next one now (another worker takes it); one killed settles
 * nothing (the job runs again after its lease).
 */
export async function runMailboxJob(ctx: ServiceContext, job: Job, owner: string, queue: { readonly aborted: boolean; readonly stopping: boolean }): Promise<void> {
  const accountId = job.account_id;
  const row = accountId === null ? undefined : await ctx.store.db.selectFrom('account_mailboxes').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  if (!row || accountId === null) return completeJob(ctx.store.db, job, owner, ctx.now(), 'no mailbox set for the account');
  const log = ctx.logger.child({ accountId, job: 'mailbox' });
  let error: string | null = null;
  let source: ImapSource | undefined;
  const importer = new RecibidosImporter(ctx, accountId);
  const stop = new AbortController();
  const watchAbort = setInterval(() => (queue.stopping || queue.aborted) && stop.abort(), 200);
  try {
    const target = parseImapUrl(row.imap_url, { [IMAP_PASSWORD_VAR]: ctx.secrets.open(row.password_enc, passwordContext(accountId)) });
    const rules = row.rules_json === '{}' ? HOLD_ALL : parseMailRules(JSON.parse(row.rules_json));
    source = await ImapSource.open(target);
    const out = await mailboxPass(source, serviceSink(ctx, accountId, importer), rules, {
      attachmentMaxBytes: ctx.recibidos?.maxBytes ?? RECEIVED_MAX_BYTES,
      signal: stop.signal,
      onMail: (m) => log.info({ mail: m.id, outcome: m.outcome, claves: m.documents.map((d) => d.clave), reasons: m.reasons, notes: m.notes }, 'supplier mail'),
    });
    if (out.length > 0) log.info({ mails: out.length }, 'mailbox pass done');
  } catch (e) {
    error = imapErrorText(e);
    log.warn({ err: error }, 'mailbox pass failed; tried again at the next pass');
  } finally {
    clearInterval(watchAbort);
    await source?.close();
    await importer.close();
  }
  // Killed: nothing is settled, the job runs again after its lease (a pass is harmless twice).
  if (queue.aborted) throw new Error('the worker was killed');
  const now = ctx.now();
  const next = stop.signal.aborted ? now : now + row.interval_s * 1000;
  await ctx.store.db.transaction().execute(async (trx) => {
    await completeJob(trx, job, owner, now, error);
    await enqueueJob(trx, { type: 'mailbox', account_id: accountId, run_at: next }, now);
  });
}
