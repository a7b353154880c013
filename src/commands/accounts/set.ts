/** `fecr accounts set BASE --webhook-url URL`: a new webhook target and signing secret (printed once). */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { info } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import { accountsModule, targetPolicy, userErrors, type DataDirFlag, type WebhookTargetFlags } from './shared.js';

export async function set(ctx: Ctx, base: string, opts: DataDirFlag & WebhookTargetFlags & { webhookUrl: string }): Promise<void> {
  const withPolicy = await targetPolicy(ctx, opts);
  const { setWebhook } = await accountsModule();
  const { secret } = await userErrors(() => withOperatorService(ctx, 'accounts set', opts.dataDir, (svc) => setWebhook(withPolicy(svc), base, opts.webhookUrl)));
  writeLine(ctx.io.stdout, secret);
  info(ctx, `webhook of ${base} set to ${opts.webhookUrl}; the line above is its signing secret, shown only now`);
}
