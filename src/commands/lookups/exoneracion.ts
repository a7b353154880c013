/** `fecr exoneracion NUMERO`: an exoneration document by its number. */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import { withBackend } from '../backend.js';
import type { LookupFlags } from './flags.js';

export async function exoneracion(ctx: Ctx, numeroArg: string, opts: LookupFlags): Promise<void> {
  checkTableFlags(opts);
  const numero = numeroArg.trim();
  if (numero === '') throw new UsageError('NUMERO must not be empty');
  const e = await withBackend(ctx, (b) => b.exoneracion(numero));
  if (!e) throw new UserError(`no exoneración ${numero} is known to Hacienda`);
  if (opts.json) return printJson(ctx, e);
  writeLine(
    ctx.io.stdout,
    renderTable(ctx, ['numeroDocumento', 'estado', 'porcentajeExoneracion', 'fechaVencimiento'], [[e.numeroDocumento, e.estado, String(e.porcentajeExoneracion), e.fechaVencimiento]], { csv: opts.csv }),
  );
}
