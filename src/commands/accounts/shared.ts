/** What the `fecr accounts|keys|tokens` verbs share: their flags, the password from stdin, the account errors, the webhook target policy. */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { readAll } from '../../cli/io.js';
import type { ServiceContext } from '../../service/context.js';

export interface DataDirFlag {
  dataDir?: string;
}

/** Where the service delivers: sandbox/production accept only public webhook targets (webhook-targets.ts). */
export interface WebhookTargetFlags {
  env?: string;
  allowPrivateWebhooks?: boolean;
}

export async function passwordFromStdin(ctx: Ctx, flag: boolean | undefined): Promise<string> {
  if (!flag) throw new UsageError('pass the password on stdin with --password-stdin (it is never taken as an argument)');
  const pw = (await readAll(ctx.io.stdin)).toString('utf8').split(/\r?\n/)[0] ?? '';
  if (!pw) throw new UsageError('no password on stdin');
  return pw;
}

export async function accountsModule() {
  return import('../../service/accounts.js');
}

/** Account errors are the user's: one line. */
export async function userErrors<T>(fn: () => Promise<T>): Promise<T> {
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
export async function targetPolicy(ctx: Ctx, f: WebhookTargetFlags): Promise<(svc: ServiceContext) => ServiceContext> {
  const env = f.env ?? 'local';
  if (env !== 'local' && env !== 'sandbox' && env !== 'production') throw new UsageError('--env must be local, sandbox or production');
  const { webhookTargetPolicy } = await import('../../service/webhook-targets.js');
  const webhookTargets = webhookTargetPolicy(env, { allowPrivate: f.allowPrivateWebhooks, env: ctx.io.env });
  return (svc) => ({ ...svc, webhookTargets });
}
