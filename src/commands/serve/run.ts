import type { Ctx } from '../../cli/context.js';
import { waitForStopSignal } from '../../cli/signals.js';
import { UsageError, UserError } from '../../cli/errors.js';
import path from 'node:path';
import { resolvePath, writeLine } from '../../cli/io.js';
import type { Store } from '../../store/index.js';

export interface ServeFlags {
  dataDir?: string;
  logFile?: string;
  logFormat?: string;
  host: string;
  authPort: string;
  apiPort: string;
  env: string;
  publicAuthUrl?: string;
  publicApiUrl?: string;
  authJwksUrl?: string;
  emulatorDelay: string;
  database?: string;
  role: string;
  haciendaUrl?: string;
  allowPrivateWebhooks?: boolean;
  trustProxy?: string;
  smtpUrl?: string;
  mailFrom?: string;
  mailReplyTo?: string;
  mailResendsPerDocument?: string;
  mailResendsPerAccount?: string;
  recibidosTrust?: string;
}

function port(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`${flag} must be a port number from 0 to 65535`);
  return n;
}

export async function run(ctx: Ctx, f: ServeFlags): Promise<void> {
  if (!['local', 'sandbox', 'production'].includes(f.env)) throw new UsageError('--env must be local, sandbox or production');
  const delay = Number(f.emulatorDelay);
  if (!Number.isInteger(delay) || delay < 0) throw new UsageError('--emulator-delay must be a whole number of ms');
  const { startService, parseRoles } = await import('../../server/service.js');
  const { resolveDataDir } = await import('../../service/runtime.js');
  let roles;
  try {
    roles = parseRoles(f.role);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const database = f.database ?? (ctx.io.env.FECR_DATABASE_URL || undefined);
  if (database !== undefined && !/^postgres(ql)?:\/\//i.test(database)) throw new UsageError('--database must be a postgres:// URL');
  if (f.haciendaUrl !== undefined && f.env !== 'local') throw new UsageError('--hacienda-url is for --env local (the emulator)');
  const trustProxy = await trustedProxies(ctx, f);
  const mail = await mailDefaults(ctx, f);
  let svc: Awaited<ReturnType<typeof startService>> | undefined;
  // A library that records something without awaiting it (graphile-worker ends jobs so) can leave a rejected
  // promise behind when the database connection drops at that moment. That is a passing store fault, not a
  // reason to stop serving: it is logged, and the worker frees the job it concerned (see unlockOwnOrphans).
  // Anything else ends the process as Node would, with one line instead of a stack.
  const { storeFaultOf } = await import('../../store/faults.js');
  const onRejection = (reason: unknown) => {
    const fault = storeFaultOf(reason);
    if (fault) {
      const fields = { fault: fault.kind, code: fault.code, err: reason instanceof Error ? reason.message : String(reason) };
      if (svc) svc.opened.ctx.logger.warn(fields, 'database fault in a background task; carrying on');
      else writeLine(ctx.io.stderr, `warning: database fault in a background task (${fault.code}); carrying on`);
      return;
    }
    writeLine(ctx.io.stderr, `error: internal error: ${reason instanceof Error ? reason.message : String(reason)}`);
    if (ctx.debug && reason instanceof Error) writeLine(ctx.io.stderr, String(reason.stack));
    process.exit(1);
  };
  process.on('unhandledRejection', onRejection);
  const dataDir = resolveDataDir(ctx.io.env, f.dataDir);
  const logFile = logFileOf(ctx, f, dataDir);
  if (logFile) writeLine(ctx.io.stderr, `log: ${logFile}`);
  try {
    svc = await startService({
      dataDir,
      ...(logFile ? { logFile } : {}),
      env: ctx.io.env,
      ...(database ? { database } : {}),
      roles,
      ...(f.haciendaUrl ? { haciendaUrl: f.haciendaUrl } : {}),
      host: f.host,
      authPort: port('--auth-port', f.authPort),
      apiPort: port('--api-port', f.apiPort),
      environment: f.env as 'local' | 'sandbox' | 'production',
      publicAuthUrl: f.publicAuthUrl,
      publicApiUrl: f.publicApiUrl,
      authJwksUrl: f.authJwksUrl,
      emulatorDelayMs: delay,
      ...(f.allowPrivateWebhooks ? { allowPrivateWebhooks: true } : {}),
      ...(trustProxy ? { trustProxy } : {}),
      mail,
      ...(f.recibidosTrust !== undefined ? { recibidosTrust: { value: f.recibidosTrust, setting: '--recibidos-trust' } } : {}),
      warn: (m) => ctx.io.stderr.write(`warning: ${m}\n`),
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new UserError(`address in use: ${err.message}`);
    if (/FECR_MASTER_KEY|cannot open the database|role without the auth role/.test(err.message ?? '') || err.name === 'TrustSettingError') throw new UserError(err.message);
    throw e;
  }
  writeLine(
    ctx.io.stdout,
    JSON.stringify({
      authUrl: svc.authUrl,
      baseUrl: svc.baseUrl,
      ...(svc.haciendaUrl ? { haciendaUrl: svc.haciendaUrl } : {}),
      roles: svc.roles,
      ...(svc.worker ? { worker: svc.worker.owner } : {}),
      store: svc.opened.ctx.store.dialect,
    }),
  );
  // The JSON line above is for scripts; this one is for the person who started it.
  if (svc.authUrl && svc.baseUrl) writeLine(ctx.io.stderr, await profileHint(svc.opened.ctx.store.db, svc.authUrl, svc.baseUrl));
  await waitForStopSignal();

  await svc.close();
  process.off('unhandledRejection', onRejection);
}

/**
 * Where the log goes: a file, or undefined for stderr. `--log-file FILE` (`-`: stderr); else `--log-format json`:
 * stderr; else `<data dir>/serve.log` when stderr is a terminal, so the person who started the service (and the
 * commands they run beside it) is not flooded with request lines; else stderr, as a deployment reads it.
 */
function logFileOf(ctx: Ctx, f: ServeFlags, dataDir: string): string | undefined {
  if (f.logFormat !== undefined && f.logFormat.trim().toLowerCase() !== 'json') throw new UsageError(`--log-format must be json (got "${f.logFormat}")`);
  if (f.logFile !== undefined) {
    if (f.logFile.trim() === '') throw new UsageError('--log-file needs a file name, or - for stderr');
    return f.logFile === '-' ? undefined : resolvePath(ctx.io, f.logFile);
  }
  if (f.logFormat !== undefined) return undefined;
  return (ctx.io.stderr as { isTTY?: boolean }).isTTY ? path.join(dataDir, 'serve.log') : undefined;
}

/** --trust-proxy, else FECR_TRUST_PROXY: the proxies whose X-Forwarded-For is believed (none when unset). */
async function trustedProxies(ctx: Ctx, f: ServeFlags): Promise<string[] | undefined> {
  const [value, name] = f.trustProxy !== undefined ? [f.trustProxy, '--trust-proxy'] : [ctx.io.env.FECR_TRUST_PROXY, 'FECR_TRUST_PROXY'];
  if (value === undefined || (name === 'FECR_TRUST_PROXY' && value.trim() === '')) return undefined;
  const { parseTrustProxy } = await import('../../server/rate-limit.js');
  try {
    return parseTrustProxy(value);
  } catch (e) {
    throw new UsageError(`${name}: ${(e as Error).message}`);
  }
}

/**
 * The receptor mails' defaults: --smtp-url, --mail-from, --mail-reply-to, --mail-resends-per-document|account, else
 * FECR_SMTP_URL, FECR_MAIL_FROM, FECR_MAIL_REPLY_TO, FECR_MAIL_RESENDS_PER_DOCUMENT|ACCOUNT. An SMTP server needs a
 * sender: the mails leave From the operator's address, never one a tenant wrote (service/delivery/email-policy.ts).
 */
async function mailDefaults(ctx: Ctx, f: ServeFlags) {
  const { mailDefaultsFrom, MailSettingsError } = await import('../../service/mail-settings.js');
  const env = ctx.io.env;
  const pick = (flag: string | undefined, flagName: string, name: string) => (flag !== undefined ? { v: flag, n: flagName } : env[name] ? { v: env[name], n: name } : { v: undefined, n: flagName });
  const url = pick(f.smtpUrl, '--smtp-url', 'FECR_SMTP_URL');
  const from = pick(f.mailFrom, '--mail-from', 'FECR_MAIL_FROM');
  const replyTo = pick(f.mailReplyTo, '--mail-reply-to', 'FECR_MAIL_REPLY_TO');
  const perDocument = pick(f.mailResendsPerDocument, '--mail-resends-per-document', 'FECR_MAIL_RESENDS_PER_DOCUMENT');
  const perAccount = pick(f.mailResendsPerAccount, '--mail-resends-per-account', 'FECR_MAIL_RESENDS_PER_ACCOUNT');
  let mail;
  try {
    mail = mailDefaultsFrom(
      { smtpUrl: url.v, from: from.v, replyTo: replyTo.v, perDocument: perDocument.v, perAccount: perAccount.v },
      { smtpUrl: url.n, from: from.n, replyTo: replyTo.n, perDocument: perDocument.n, perAccount: perAccount.n },
    );
  } catch (e) {
    if (e instanceof MailSettingsError) throw new UsageError(`${e.field}: ${e.message}`);
    throw e;
  }
  if (mail.smtp && !mail.fromAddress) {
    throw new UsageError(`${url.n} needs --mail-from (or FECR_MAIL_FROM), an address of yours: the mails leave From it, never from an address a tenant wrote`);
  }
  return mail;
}

/**
 * The command that points a remote profile at this service, ready to paste: `base=` is the account when the data
 * has exactly one enabled account, else a placeholder (and what to do about it).
 */
export async function profileHint(db: Store['db'], authUrl: string, baseUrl: string): Promise<string> {
  let bases: string[] = [];
  try {
    const rows = await db.selectFrom('accounts').select(['base']).where('disabled', '=', 0).orderBy('base').limit(6).execute();
    bases = rows.map((r) => String(r.base));
  } catch {
    // An auth or api node whose store cannot list accounts right now: the placeholder will do.
  }
  const base = bases.length === 1 ? bases[0]! : 'ACCOUNT';
  const note =
    bases.length === 0
      ? ' (no account yet: fecr accounts create ACCOUNT --password-stdin, on this data)'
      : bases.length > 1
        ? ` (ACCOUNT: one of ${bases.slice(0, 5).join(', ')}${bases.length > 5 ? ', …' : ''})`
        : '';
  const quote = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  return (
    `ready. A remote profile for this service${note}, then log in:\n` +
    `  fecr config set mode=remote authUrl=${quote(authUrl)} baseUrl=${quote(baseUrl)} base=${quote(base)} --profile hosted\n` +
    `  fecr login --profile hosted`
  );
}
