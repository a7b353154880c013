/** `fecr keys list`: the token signing keys. */
import type { Ctx } from '../../cli/context.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { withOperatorService } from '../local.js';
import type { DataDirFlag } from './shared.js';

export async function keysList(ctx: Ctx, opts: DataDirFlag & { json?: boolean }): Promise<void> {
  const { listKeys } = await import('../../service/keys.js');
  const keys = await withOperatorService(ctx, 'keys list', opts.dataDir, (svc) => listKeys(svc));
  if (opts.json) return printJson(ctx, keys);
  writeLine(
    ctx.io.stdout,
    renderTable(ctx, ['kid', 'current', 'published', 'created', 'retired'], keys.map((k) => [k.kid, k.current ? 'yes' : '', k.published ? 'yes' : 'no', new Date(k.createdAt).toISOString(), k.retiredAt ? new Date(k.retiredAt).toISOString() : ''])),
  );
}
