import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import type { ServiceContext } from '../../service/context.js';
import { withOperatorService } from '../local.js';
import type { WebhookFlags } from './index.js';

async function accountId(svc: ServiceContext, base: string): Promise<number> {
  const { findAccount } = await import('../../service/accounts.js');
  const a = await findAccount(svc, base);
  if (!a) throw new UserError(`no account named ${base}`);
  return a.id;
}

export async function list(ctx: Ctx, f: WebhookFlags): Promise<void> {
  if (f.state && !['pendiente', 'entregado', 'fallido'].includes(f.state)) throw new UsageError('--state must be pendiente, entregado or fallido');
  const limit = Number(f.limit ?? 50);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
  const { listDeliveries } = await import('../../service/webhooks.js');
  const rows = await withOperatorService(ctx, 'webhooks list', f.dataDir, async (svc) =>
    listDeliveries(svc, await accountId(svc, f.account), { state: f.state as 'pendiente' | undefined, limit }),
  );
  if (f.json) return printJson(ctx, rows);
  writeLine(
    ctx.io.stdout,
    renderTable(
      ctx,
      ['id', 'clave', 'state', 'attempts', 'last status', 'created'],
      rows.map((r) => [String(r.id), r.clave, r.state, String(r.attempts), r.lastStatus === null ? '' : String(r.lastStatus), new Date(r.createdAt).toISOString()]),
    ),
  );
}

export async function replay(ctx: Ctx, id: string, f: WebhookFlags): Promise<void> {
  const n = Number(id);
  if (!Number.isInteger(n) || n < 1) throw new UsageError('the delivery id must be a positive whole number');
  const { replayDelivery } = await import('../../service/webhooks.js');
  const r = await withOperatorService(ctx, 'webhooks replay', f.dataDir, async (svc) => replayDelivery(svc, await accountId(svc, f.account), n));
  if (!r) throw new UserError(`no delivery ${n} for account ${f.account}`);
  info(ctx, `delivery ${n} (${r.clave}) queued again with webhook-id ${r.messageId}`);
}
