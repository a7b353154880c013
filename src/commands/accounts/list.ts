/** `fecr accounts list`: the accounts of the data dir. */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { withOperatorService } from '../local.js';
import { accountsModule, type DataDirFlag } from './shared.js';

export async function list(ctx: Ctx, opts: DataDirFlag & { json?: boolean }): Promise<void> {
  const { listAccounts } = await accountsModule();
  const rows = await withOperatorService(ctx, 'accounts list', opts.dataDir, (svc) => listAccounts(svc));
  if (opts.json) return printJson(ctx, rows.map((a) => ({ base: a.base, disabled: a.disabled, webhookUrl: a.webhookUrl, createdAt: new Date(a.createdAt).toISOString() })));
  writeLine(
    ctx.io.stdout,
    renderTable(ctx, ['base', 'state', 'webhook', 'created'], rows.map((a) => [a.base, a.disabled ? 'disabled' : 'active', a.webhookUrl ?? '', new Date(a.createdAt).toISOString()])),
  );
}
