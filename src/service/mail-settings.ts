/**
 * Where the mails of an account go: its own SMTP server and sender (the `account_mail` row, password sealed like the
 * other secrets), else the service's defaults (`fecr serve --smtp-url`, `FECR_SMTP_URL`, a local profile's
 * `smtpUrl`), else the outbox: `.eml` files in the data dir. The SMTP URL:
 *
 *   smtp://[user[:password]@]host[:port][?security=starttls|none]   port 587 by default; with a user, STARTTLS is
 *                                                                    required (a password never goes in clear),
 *                                                                    without one it is used when offered
 *   smtps://[user[:password]@]host[:port]                            TLS from the first byte, port 465 by default
 *
 * The password is never returned: `MailSettingsView` shows the URL without it.
 *
 * An account's allow-list (`fecr accounts mail BASE --allow ADDR…`, `--disallow ADDR…`): the addresses, beside each
 * document's own recipients, that the client API may mail for it (delivery/email-policy.ts). Only an operator sets it.
 */
import type { ServiceContext } from './context.js';
import { AccountError } from './accounts.js';
import { DEFAULT_MAIL_LIMITS, type MailDefaults, type MailSender, type SmtpSecurity, type SmtpServer } from './mail-defaults.js';

/** What an account's mail goes through, resolved. */
export type MailRoute = ({ kind: 'smtp'; server: SmtpServer } | { kind: 'outbox'; dir: string }) & MailSender;

export class MailSettingsError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'MailSettingsError';
  }
}

const ADDRESS = /^[^\s@<>",;]+@[^\s@<>",;]+\.[^\s@<>",;]+$/;

/** Parses an SMTP URL (see above); throws MailSettingsError naming what is wrong. */
export function parseSmtpUrl(value: string, field = 'smtpUrl'): SmtpServer {
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    throw new MailSettingsError(field, 'must be an smtp:// or smtps:// URL, e.g. smtp://user:password@smtp.example.com:587');
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new MailSettingsError(field, `must be an smtp:// or smtps:// URL (got ${u.protocol}//)`);
  if (!u.hostname) throw new MailSettingsError(field, 'has no host');
  for (const key of u.searchParams.keys()) if (key !== 'security') throw new MailSettingsError(field, `unknown parameter "${key}" (only security=tls|starttls|none)`);
  const user = u.username ? decodeURIComponent(u.username) : undefined;
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  const asked = u.searchParams.get('security');
  if (asked !== null && asked !== 'tls' && asked !== 'starttls' && asked !== 'none') throw new MailSettingsError(field, 'security must be tls, starttls or none');
  const security: SmtpSecurity = (asked as SmtpSecurity | null) ?? (u.protocol === 'smtps:' ? 'tls' : user ? 'starttls' : 'none');
  const port = u.port ? Number(u.port) : security === 'tls' ? 465 : 587;
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    security,
    ...(user !== undefined ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
  };
}

/** The URL of a server without its password (for lists and logs). */
export function smtpUrlOf(s: Pick<SmtpServer, 'host' | 'port' | 'security' | 'user'>): string {
  const host = s.host.includes(':') ? `[${s.host}]` : s.host;
  const user = s.user ? `${encodeURIComponent(s.user)}@` : '';
  if (s.security === 'tls') return `smtps://${user}${host}:${s.port}`;
  const implied: SmtpSecurity = s.user ? 'starttls' : 'none';
  return `smtp://${user}${host}:${s.port}${s.security === implied ? '' : `?security=${s.security}`}`;
}

/** `Name <addr@x.y>` or `addr@x.y` → its parts; throws MailSettingsError when there is no address. */
export function parseSender(value: string, field = 'from'): { fromAddress: string; fromName?: string } {
  const t = value.trim();
  const m = /^(.*?)\s*<([^<>]+)>$/.exec(t);
  const address = (m ? m[2]! : t).trim();
  const name = m ? m[1]!.trim().replace(/^"(.*)"$/, '$1') : '';
  if (!ADDRESS.test(address)) throw new MailSettingsError(field, `must be an e-mail address, or "Name <address>" (got "${value}")`);
  return { fromAddress: address, ...(name ? { fromName: name } : {}) };
}

export function parseAddress(value: string, field: string): string {
  const t = value.trim();
  if (!ADDRESS.test(t)) throw new MailSettingsError(field, `must be an e-mail address (got "${value}")`);
  return t;
}

function passwordContext(accountId: number): string {
  return `smtp:${accountId}`;
}

export interface AccountMailInput {
  smtpUrl: string;
  /** `Name <address>` or an address. */
  from?: string;
  replyTo?: string;
}

/** What `fecr accounts mail` shows: never the password. */
export interface MailSettingsView {
  smtpUrl: string;
  hasPassword: boolean;
  from: string | null;
  replyTo: string | null;
}

async function accountIdOf(ctx: ServiceContext, base: string): Promise<number> {
  const row = await ctx.store.db.selectFrom('accounts').select('id').where('base', '=', base).executeTakeFirst();
  if (!row) throw new AccountError('account_not_found', `no account named ${base}`);
  return row.id;
}

/** Sets an account's SMTP server and sender (the password sealed). Throws MailSettingsError on a bad value. */
export async function setAccountMail(ctx: ServiceContext, base: string, input: AccountMailInput): Promise<MailSettingsView> {
  const server = parseSmtpUrl(input.smtpUrl);
  const sender = input.from ? parseSender(input.from) : undefined;
  const replyTo = input.replyTo ? parseAddress(input.replyTo, 'replyTo') : undefined;
  const accountId = await accountIdOf(ctx, base);
  const row = {
    smtp_host: server.host,
    smtp_port: server.port,
    smtp_security: server.security,
    smtp_user: server.user ?? null,
    smtp_password_enc: server.password ? ctx.secrets.seal(server.password, passwordContext(accountId)) : null,
    from_name: sender?.fromName ?? null,
    from_address: sender?.fromAddress ?? null,
    reply_to: replyTo ?? null,
    updated_at: ctx.now(),
  };
  await ctx.store.db
    .insertInto('account_mail')
    .values({ account_id: accountId, ...row })
    .onConflict((oc) => oc.column('account_id').doUpdateSet(row))
    .execute();
  ctx.logger.info({ base, smtp: smtpUrlOf(server) }, 'account mail settings set');
  return (await accountMailView(ctx, base))!;
}

/** Removes an account's own SMTP settings (its mails then follow the service's defaults). True when there were some. */
export async function clearAccountMail(ctx: ServiceContext, base: string): Promise<boolean> {
  const accountId = await accountIdOf(ctx, base);
  const r = await ctx.store.db.deleteFrom('account_mail').where('account_id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** An account's own settings as shown (null: none). */
export async function accountMailView(ctx: ServiceContext, base: string): Promise<MailSettingsView | null> {
  const accountId = await accountIdOf(ctx, base);
  const row = await ctx.store.db.selectFrom('account_mail').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  if (!row) return null;
  return {
    smtpUrl: smtpUrlOf({ host: row.smtp_host, port: Number(row.smtp_port), security: row.smtp_security, ...(row.smtp_user ? { user: row.smtp_user } : {}) }),
    hasPassword: row.smtp_password_enc !== null,
    from: row.from_address ? (row.from_name ? `${row.from_name} <${row.from_address}>` : row.from_address) : null,
    replyTo: row.reply_to,
  };
}

/** An account's allow-list, lower-cased and sorted. */
export async function mailAllowListOf(ctx: Pick<ServiceContext, 'store'>, accountId: number): Promise<string[]> {
  const rows = await ctx.store.db.selectFrom('account_mail_allow').select('address').where('account_id', '=', accountId).orderBy('address').execute();
  return rows.map((r) => r.address);
}

/** The allow-list of the account named `base`. */
export async function mailAllowList(ctx: ServiceContext, base: string): Promise<string[]> {
  return mailAllowListOf(ctx, await accountIdOf(ctx, base));
}

/**
 * Adds (`allow`) and removes (`disallow`) addresses of an account's allow-list; every address is checked first (a bad
 * one: MailSettingsError, nothing changed). Returns the list as it is now.
 */
export async function changeMailAllowList(ctx: ServiceContext, base: string, change: { allow?: readonly string[]; disallow?: readonly string[] }): Promise<string[]> {
  const allow = (change.allow ?? []).map((a) => parseAddress(a, 'allow').toLowerCase());
  const disallow = (change.disallow ?? []).map((a) => parseAddress(a, 'disallow').toLowerCase());
  const accountId = await accountIdOf(ctx, base);
  const now = ctx.now();
  await ctx.store.db.transaction().execute(async (trx) => {
    if (disallow.length > 0) await trx.deleteFrom('account_mail_allow').where('account_id', '=', accountId).where('address', 'in', disallow).execute();
    for (const address of new Set(allow)) {
      await trx.insertInto('account_mail_allow').values({ account_id: accountId, address, created_at: now }).onConflict((oc) => oc.columns(['account_id', 'address']).doNothing()).execute();
    }
  });
  const list = await mailAllowListOf(ctx, accountId);
  ctx.logger.info({ base, added: allow.length, removed: disallow.length, allowed: list.length }, 'account mail allow-list changed');
  return list;
}

/**
 * The route of an account's mails: its own server, else the service's default server, else the outbox. The
 * sender: the account's, else the defaults' (each field on its own). Null when the service has no mail at all.
 */
export async function mailRouteFor(ctx: ServiceContext, accountId: number): Promise<MailRoute | null> {
  const defaults = ctx.mail;
  if (!defaults) return null;
  const row = await ctx.store.db.selectFrom('account_mail').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  const sender: MailSender = {
    ...pick('fromAddress', row?.from_address ?? defaults.fromAddress),
    ...pick('fromName', row?.from_name ?? defaults.fromName),
    ...pick('replyTo', row?.reply_to ?? defaults.replyTo),
  };
  if (row) {
    const server: SmtpServer = {
      host: row.smtp_host,
      port: Number(row.smtp_port),
      security: row.smtp_security,
      ...(row.smtp_user ? { user: row.smtp_user } : {}),
      ...(row.smtp_password_enc ? { password: ctx.secrets.open(row.smtp_password_enc, passwordContext(accountId)) } : {}),
      ...(defaults.smtp?.ca ? { ca: defaults.smtp.ca } : {}),
    };
    return { kind: 'smtp', server, ...sender };
  }
  if (defaults.smtp) return { kind: 'smtp', server: defaults.smtp, ...sender };
  return { kind: 'outbox', dir: defaults.outboxDir, ...sender };
}

function pick<K extends string>(key: K, value: string | null | undefined): Partial<Record<K, string>> {
  return value ? ({ [key]: value } as Record<K, string>) : {};
}

/** The textual settings of the service's mail defaults, and the names to blame for a bad one. */
export interface MailDefaultsText {
  smtpUrl?: string | undefined;
  from?: string | undefined;
  replyTo?: string | undefined;
  /** `fecr serve --mail-resends-per-document`, `--mail-resends-per-account` (whole numbers, at least 1). */
  perDocument?: string | undefined;
  perAccount?: string | undefined;
}

/**
 * The service's default server and sender from their textual settings (`--smtp-url`, `--mail-from`, `--mail-reply-to`,
 * FECR_SMTP_URL, FECR_MAIL_FROM, FECR_MAIL_REPLY_TO, a local profile's keys), and the client API's limits (each
 * unset one: its default); none set: the outbox only. Throws MailSettingsError naming the setting that is wrong.
 */
export function mailDefaultsFrom(
  s: MailDefaultsText,
  names: Record<'smtpUrl' | 'from' | 'replyTo', string> & Partial<Record<'perDocument' | 'perAccount', string>> = { smtpUrl: 'smtpUrl', from: 'from', replyTo: 'replyTo' },
): Partial<MailDefaults> {
  const limit = (v: string | undefined, field: string, fallback: number): number => {
    if (v === undefined) return fallback;
    const n = Number(v.trim());
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) throw new MailSettingsError(field, `must be a whole number, at least 1 (got "${v}")`);
    return n;
  };
  const limits =
    s.perDocument !== undefined || s.perAccount !== undefined
      ? {
          limits: {
            perDocument: limit(s.perDocument, names.perDocument ?? 'perDocument', DEFAULT_MAIL_LIMITS.perDocument),
            perAccount: limit(s.perAccount, names.perAccount ?? 'perAccount', DEFAULT_MAIL_LIMITS.perAccount),
          },
        }
      : {};
  return {
    ...(s.smtpUrl ? { smtp: parseSmtpUrl(s.smtpUrl, names.smtpUrl) } : {}),
    ...(s.from ? parseSender(s.from, names.from) : {}),
    ...(s.replyTo ? { replyTo: parseAddress(s.replyTo, names.replyTo) } : {}),
    ...limits,
  };
}
