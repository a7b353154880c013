/** `fecr webhooks list --account BASE`: an account's webhook deliveries, newest first. */
import type { Ctx } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { withOperatorService } from '../local.js';
import { accountId, type WebhookFlags } from './shared.js';

export async function list(ctx: Ctx, f: WebhookFlags): Promise<void> {
  checkTableFlags(f);
  if (f.state && !['pendiente', 'entregado', 'fallido'].includes(f.state)) throw new UsageError('--state must be pendiente, entregado or fallido');
  const limit = Number(f.limit ?? 50);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
  const { listDeliveries } = await import('../../service/delivery/webhooks.js');
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
      { csv: f.csv },
    ),
  );
}
