/** `fecr webhooks replay ID --account BASE`: a delivery queued again (same webhook-id). */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { info } from '../../cli/output.js';
import { withOperatorService } from '../local.js';
import { accountId, type WebhookFlags } from './shared.js';

export async function replay(ctx: Ctx, id: string, f: WebhookFlags): Promise<void> {
  const n = Number(id);
  if (!Number.isInteger(n) || n < 1) throw new UsageError('the delivery id must be a positive whole number');
  const { replayDelivery } = await import('../../service/delivery/webhooks.js');
  const r = await withOperatorService(ctx, 'webhooks replay', f.dataDir, async (svc) => replayDelivery(svc, await accountId(svc, f.account), n));
  if (!r) throw new UserError(`no delivery ${n} for account ${f.account}`);
  info(ctx, `delivery ${n} (${r.clave}) queued again with webhook-id ${r.messageId}`);
}
