import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { readAll, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { withOperatorService } from '../local.js';
import type { ServiceContext } from '../../service/context.js';
import type { DataDirFlag, WebhookTargetFlags } from './index.js';

async function passwordFromStdin(ctx: Ctx, flag: boolean | undefined): Promise<string> {
  if (!flag) throw new UsageError('pass the password on stdin with --password-stdin (it is never taken as an argument)');
  const pw = (await readAll(ctx.io.stdin)).toString('utf8').split(/\r?\n/)[0] ?? '';
  if (!pw) throw new UsageError('no password on stdin');
  return pw;
}

async function accountsModule() {
  return import('../../service/accounts.js');
}

/** Account errors are the user's: one line. */
async function userErrors<T>(fn: () => Promise<T>): Promise<T> {
  const { AccountError } = await accountsModule();
  try {
    return await fn();
  } catch (e) {
    if (e instanceof AccountError) {
      // A webhook target refused by the hosted policy: the operator may allow it.
      if (e.code === 'invalid_webhook_url' && e.message.startsWith('webhook URL refused:')) throw new UserError(`${e.message} (--allow-private-webhooks allows it)`);
      throw new UserError(e.message);
    }
    throw e;
  }
}

/** The service context with the webhook target policy of --env / --allow-private-webhooks / FECR_ALLOW_PRIVATE_WEBHOOKS. */
async function targetPolicy(ctx: Ctx, f: WebhookTargetFlags): Promise<(svc: ServiceContext) => ServiceContext> {
  const env = f.env ?? 'local';
  if (env !== 'local' && env !== 'sandbox' && env !== 'production') throw new UsageError('--env must be local, sandbox or production');
  const { webhookTargetPolicy } = await import('../../service/webhook-targets.js');
  const webhookTargets = webhookTargetPolicy(env, { allowPrivate: f.allowPrivateWebhooks, env: ctx.io.env });
  return (svc) => ({ ...svc, webhookTargets });
}

export async function create(
  ctx: Ctx,
  base: string,
  opts: DataDirFlag & WebhookTargetFlags & { passwordStdin?: boolean; webhookUrl?: string; json?: boolean },
): Promise<void> {
  const withPolicy = await targetPolicy(ctx, opts);
  const password = await passwordFromStdin(ctx, opts.passwordStdin);
  const { createAccount } = await accountsModule();
  const r = await userErrors(() => withOperatorService(ctx, 'accounts create', opts.dataDir, (svc) => createAccount(withPolicy(svc), { base, password, webhookUrl: opts.webhookUrl })));
  if (opts.json) return printJson(ctx, { base: r.account.base, webhookUrl: r.account.webhookUrl, webhookSecret: r.webhookSecret });
  info(ctx, `created account ${r.account.base}`);
  if (r.webhookSecret) {
    writeLine(ctx.io.stdout, r.webhookSecret);
    info(ctx, 'that is the webhook signing secret: it is shown only now');
  }
}

export async function list(ctx: Ctx, opts: DataDirFlag & { json?: boolean }): Promise<void> {
  const { listAccounts } = await accountsModule();
  const rows = await withOperatorService(ctx, 'accounts list', opts.dataDir, (svc) => listAccounts(svc));
  if (opts.json) return printJson(ctx, rows.map((a) => ({ base: a.base, disabled: a.disabled, webhookUrl: a.webhookUrl, createdAt: new Date(a.createdAt).toISOString() })));
  writeLine(
    ctx.io.stdout,
    renderTable(ctx, ['base', 'state', 'webhook', 'created'], rows.map((a) => [a.base, a.disabled ? 'disabled' : 'active', a.webhookUrl ?? '', new Date(a.createdAt).toISOString()])),
  );
}

export async function disable(ctx: Ctx, base: string, opts: DataDirFlag): Promise<void> {
  const { disableAccount } = await accountsModule();
  await userErrors(() => withOperatorService(ctx, 'accounts disable', opts.dataDir, (svc) => disableAccount(svc, base)));
  info(ctx, `disabled ${base}`);
}

export async function enable(ctx: Ctx, base: string, opts: DataDirFlag): Promise<void> {
  const { enableAccount } = await accountsModule();
  await userErrors(() => withOperatorService(ctx, 'accounts enable', opts.dataDir, (svc) => enableAccount(svc, base)));
  info(ctx, `enabled ${base}`);
}

export async function passwd(ctx: Ctx, base: string, opts: DataDirFlag & { passwordStdin?: boolean }): Promise<void> {
  const password = await passwordFromStdin(ctx, opts.passwordStdin);
  const { setPassword } = await accountsModule();
  await userErrors(() => withOperatorService(ctx, 'accounts passwd', opts.dataDir, (svc) => setPassword(svc, base, password)));
  info(ctx, `password of ${base} changed`);
}

export async function set(ctx: Ctx, base: string, opts: DataDirFlag & WebhookTargetFlags & { webhookUrl: string }): Promise<void> {
  const withPolicy = await targetPolicy(ctx, opts);
  const { setWebhook } = await accountsModule();
  const { secret } = await userErrors(() => withOperatorService(ctx, 'accounts set', opts.dataDir, (svc) => setWebhook(withPolicy(svc), base, opts.webhookUrl)));
  writeLine(ctx.io.stdout, secret);
  info(ctx, `webhook of ${base} set to ${opts.webhookUrl}; the line above is its signing secret, shown only now`);
}

export async function rotate(ctx: Ctx, opts: DataDirFlag): Promise<void> {
  const { rotateKey } = await import('../../service/keys.js');
  const r = await withOperatorService(ctx, 'keys rotate', opts.dataDir, (svc) => rotateKey(svc));
  writeLine(ctx.io.stdout, r.kid);
  info(ctx, `new signing key ${r.kid}; retired: ${r.retired.join(', ') || 'none'}`);
}

export async function keysList(ctx: Ctx, opts: DataDirFlag & { json?: boolean }): Promise<void> {
  const { listKeys } = await import('../../service/keys.js');
  const keys = await withOperatorService(ctx, 'keys list', opts.dataDir, (svc) => listKeys(svc));
  if (opts.json) return printJson(ctx, keys);
  writeLine(
    ctx.io.stdout,
    renderTable(ctx, ['kid', 'current', 'published', 'created', 'retired'], keys.map((k) => [k.kid, k.current ? 'yes' : '', k.published ? 'yes' : 'no', new Date(k.createdAt).toISOString(), k.retiredAt ? new Date(k.retiredAt).toISOString() : ''])),
  );
}

export async function revoke(ctx: Ctx, jti: string, opts: DataDirFlag): Promise<void> {
  const { revokeToken } = await import('../../service/tokens.js');
  await withOperatorService(ctx, 'tokens revoke', opts.dataDir, (svc) => revokeToken(svc, jti));
  info(ctx, `revoked ${jti}`);
}
