/** `fecr accounts create BASE`: a client account of the service; the password from stdin, the webhook secret printed once. */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import { accountsModule, passwordFromStdin, targetPolicy, userErrors, type DataDirFlag, type WebhookTargetFlags } from './shared.js';

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
