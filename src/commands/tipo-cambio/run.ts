/** `fecr tipo-cambio [DATE] [--moneda USD|EUR]`: the rate of a Costa Rica day, its source, and whether it came from the cache. */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { withBackend } from '../backend.js';
import { isCalendarDay } from '../../core/dates.js';

export async function tipoCambio(ctx: Ctx, dateArg: string | undefined, opts: { json?: boolean; moneda?: string }): Promise<void> {
  const fecha = dateArg?.trim() || new Date(ctx.now().getTime() - 6 * 3_600_000).toISOString().slice(0, 10);
  if (!isCalendarDay(fecha)) {
    throw new UsageError(`DATE must be a date YYYY-MM-DD (got "${dateArg}")`);
  }
  const moneda = (opts.moneda ?? 'USD').trim().toUpperCase();
  if (moneda !== 'USD' && moneda !== 'EUR') throw new UsageError(`--moneda must be USD or EUR (got "${opts.moneda}")`);
  const r = await withBackend(ctx, async (b) => {
    if (!b.tipoCambio) throw new UserError('this backend has no exchange rates (fecr tipo-cambio)');
    return b.tipoCambio(fecha, moneda);
  });
  if (opts.json) return printJson(ctx, r);
  writeLine(ctx.io.stdout, `${r.fecha}  ${r.moneda}  ${safeText(r.venta)} colones (BCCR reference selling rate)`);
  writeLine(ctx.io.stdout, `source: ${safeText(r.fuente)}${r.cached ? ' (cached in the data dir)' : ''}`);
}
